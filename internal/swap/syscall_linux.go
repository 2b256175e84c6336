//go:build linux

package swap

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// swapon(2) flags from include/linux/swap.h.
const (
	swapFlagPrefer   = 0x8000
	swapFlagPrioMask = 0x7fff
)

// Swapon enables swap on path with priority prio (0..32767) via swapon(2).
func Swapon(path string, prio int) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	flags := swapFlagPrefer | (prio & swapFlagPrioMask)
	if _, _, e := unix.Syscall(unix.SYS_SWAPON, uintptr(unsafe.Pointer(p)), uintptr(flags), 0); e != 0 {
		return fmt.Errorf("swapon %s: %w", path, e)
	}
	return nil
}

// Swapoff disables swap on path via swapoff(2). It blocks until every page
// swapped there has been read back.
func Swapoff(path string) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_SWAPOFF, uintptr(unsafe.Pointer(p)), 0, 0); e != 0 {
		return fmt.Errorf("swapoff %s: %w", path, e)
	}
	return nil
}

// mknodBlock creates a block device node for "major:minor".
func mknodBlock(path string, major, minor uint32) error {
	return unix.Mknod(path, unix.S_IFBLK|0o600, int(unix.Mkdev(major, minor)))
}
