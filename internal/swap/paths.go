package swap

import "path/filepath"

// Paths are the kernel interfaces the package reads and writes.
type Paths struct {
	SysBlock    string // /sys/block
	ZramControl string // /sys/class/zram-control
	ProcSwaps   string // /proc/swaps
	ProcMounts  string // /proc/self/mounts
	Dev         string // /dev
}

// DefaultPaths are the paths on a normal Linux host.
func DefaultPaths() Paths {
	return Paths{
		SysBlock:    "/sys/block",
		ZramControl: "/sys/class/zram-control",
		ProcSwaps:   "/proc/swaps",
		ProcMounts:  "/proc/self/mounts",
		Dev:         "/dev",
	}
}

func (p Paths) sys(dev, file string) string { return filepath.Join(p.SysBlock, dev, file) }

func (p Paths) node(dev string) string { return filepath.Join(p.Dev, dev) }
