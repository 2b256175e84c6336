package cgroup

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// CPUAcct is the v1 controller that accounts CPU time; on v2 the cpu.stat
// file of every group carries it.
const CPUAcct = "cpuacct"

// controllers lists every controller tenon uses, in creation order.
var controllers = []string{Memory, CPU, CPUAcct, Freezer, Pids}

// Mount says where one controller lives.
type Mount struct {
	Version Version
	Root    string // the hierarchy's mount point, e.g. /sys/fs/cgroup/memory
}

// Layout says, per controller tenon uses, which hierarchy holds it.
type Layout struct {
	// Controllers maps memory, cpu, cpuacct, freezer and pids to their mount.
	// A controller that is absent is missing from the map.
	Controllers map[string]Mount
	// Unified is the cgroup2 mount point, "" when none is mounted.
	Unified string
	// UnifiedControllers is the content of Unified/cgroup.controllers.
	UnifiedControllers []string
	// ProcRoot is the proc file system (/proc), for host pressure and meminfo.
	ProcRoot string
	// LockDir holds the workload domains' owner locks; "" is DefaultLockDir.
	LockDir string
}

// Controller returns where a controller lives.
func (l *Layout) Controller(name string) (Mount, bool) {
	m, ok := l.Controllers[name]
	return m, ok
}

// String is a one-line summary for logs.
func (l *Layout) String() string {
	var parts []string
	for _, c := range controllers {
		if m, ok := l.Controllers[c]; ok {
			parts = append(parts, fmt.Sprintf("%s=v%d:%s", c, m.Version, m.Root))
		}
	}
	if l.Unified != "" {
		parts = append(parts, fmt.Sprintf("unified=%s[%s]", l.Unified, strings.Join(l.UnifiedControllers, ",")))
	}
	return strings.Join(parts, " ")
}

// MountInfo is one cgroup or cgroup2 line of /proc/self/mountinfo.
type MountInfo struct {
	Root       string // root of the mount within the hierarchy
	MountPoint string
	FSType     string   // "cgroup" or "cgroup2"
	Options    []string // super options (the v1 controllers appear here)
}

// ParseMountinfo returns the cgroup and cgroup2 mounts of a mountinfo file.
func ParseMountinfo(r io.Reader) ([]MountInfo, error) {
	mounts, err := procfs.ParseMountinfo(r)
	if err != nil {
		return nil, err
	}
	var out []MountInfo
	for _, m := range mounts {
		if m.FSType != "cgroup" && m.FSType != "cgroup2" {
			continue
		}
		out = append(out, MountInfo{Root: m.Root, MountPoint: m.MountPoint, FSType: m.FSType, Options: m.Options})
	}
	return out, nil
}

// Detect reads <procRoot>/self/mountinfo and the cgroup2 root's
// cgroup.controllers and returns the layout. It fails with
// ErrNoMemoryController when memory is on neither hierarchy.
func Detect(procRoot string) (*Layout, error) {
	f, err := os.Open(filepath.Join(procRoot, "self", "mountinfo"))
	if err != nil {
		return nil, fmt.Errorf("detecting cgroups: %w", err)
	}
	defer f.Close()
	mounts, err := ParseMountinfo(f)
	if err != nil {
		return nil, fmt.Errorf("detecting cgroups: %w", err)
	}
	l, err := LayoutFromMounts(mounts, "")
	if err != nil {
		return nil, err
	}
	l.ProcRoot = procRoot
	return l, nil
}

// LayoutFromMounts builds a layout from parsed mounts. prefix is prepended to
// every mount point (tests point it at a fake tree; Detect passes "").
// cgroup.controllers is read from <prefix><cgroup2 mount point>.
func LayoutFromMounts(mounts []MountInfo, prefix string) (*Layout, error) {
	l := &Layout{Controllers: make(map[string]Mount), ProcRoot: "/proc"}
	for _, m := range mounts {
		root := filepath.Join(prefix, m.MountPoint)
		switch m.FSType {
		case "cgroup":
			for _, o := range m.Options {
				if slices.Contains(controllers, o) {
					if _, seen := l.Controllers[o]; !seen {
						l.Controllers[o] = Mount{Version: V1, Root: root}
					}
				}
			}
		case "cgroup2":
			if l.Unified != "" {
				continue
			}
			l.Unified = root
			s, err := readString(filepath.Join(root, "cgroup.controllers"))
			if err != nil && !os.IsNotExist(err) {
				return nil, fmt.Errorf("reading cgroup2 controllers: %w", err)
			}
			l.UnifiedControllers = strings.Fields(s)
		}
	}
	if l.Unified != "" {
		for _, c := range l.UnifiedControllers {
			if slices.Contains(controllers, c) {
				if _, onV1 := l.Controllers[c]; !onV1 {
					l.Controllers[c] = Mount{Version: V2, Root: l.Unified}
				}
			}
		}
		// On v2, cpu.stat (usage) and the freezer (cgroup.freeze) are core
		// files of every group, not controllers listed in cgroup.controllers.
		// Use them only where the memory controller is on v2 too: a hybrid
		// host's processes are not placed in the unified tree by tenon.
		if m, ok := l.Controllers[Memory]; ok && m.Version == V2 {
			for _, c := range []string{CPUAcct, Freezer} {
				if _, ok := l.Controllers[c]; !ok {
					l.Controllers[c] = Mount{Version: V2, Root: l.Unified}
				}
			}
		}
	}
	if _, ok := l.Controllers[Memory]; !ok {
		return nil, ErrNoMemoryController
	}
	return l, nil
}

// Dirs returns, per controller, the absolute directory of group path p
// (relative to the hierarchy roots), for runtimes that take explicit
// per-controller paths (libcontainer's cgroup Paths).
func (l *Layout) Dirs(p string) (map[string]string, error) {
	c, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(l.Controllers))
	for name, m := range l.Controllers {
		out[name] = filepath.Join(m.Root, filepath.FromSlash(c))
	}
	return out, nil
}
