package census

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mincore reports residency of each page of b in vec (bit 0 set: resident).
// golang.org/x/sys/unix has no Mincore for Linux, so this calls the system
// call directly.
func mincore(b []byte, vec []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))),
		uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if e != 0 {
		return e
	}
	return nil
}
