//go:build linux

package swap

import "golang.org/x/sys/unix"

// hog maps n bytes, writes every page (a different byte each, so no page is
// same-filled) and reads them back, forcing swap-out and swap-in under a
// small memory limit.
func hog(n int) error {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return err
	}
	defer unix.Munmap(b)
	for i := 0; i < n; i += 4096 {
		b[i] = byte(i>>12) | 1
	}
	for i := 0; i < n; i += 4096 {
		if b[i] != byte(i>>12)|1 {
			return unix.EIO
		}
	}
	return nil
}
