package fsutil

import (
	"bytes"
	"io/fs"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// copyWhiteout recreates at dst an overlayfs whiteout (a 0/0 character
// device, which a sandbox's writable layer holds for each file it deleted
// from its image) and reports whether fi was one.
func copyWhiteout(dst string, fi fs.FileInfo) (bool, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || fi.Mode()&fs.ModeCharDevice == 0 || st.Rdev != 0 {
		return false, nil
	}
	return true, unix.Mknod(dst, unix.S_IFCHR, 0)
}

// copyOverlayXattrs copies the overlayfs markers of a directory
// ("trusted.overlay.*", "user.overlay.*": opaque, redirect).
func copyOverlayXattrs(src, dst string) error {
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(src, buf)
	if err != nil || n == 0 {
		return nil // none, or a file system without xattrs
	}
	for _, name := range bytes.Split(buf[:n], []byte{0}) {
		k := string(name)
		if !strings.HasPrefix(k, "trusted.overlay.") && !strings.HasPrefix(k, "user.overlay.") {
			continue
		}
		val := make([]byte, 4096)
		m, err := unix.Lgetxattr(src, k, val)
		if err != nil {
			return err
		}
		if err := unix.Lsetxattr(dst, k, val[:m], 0); err != nil {
			return err
		}
	}
	return nil
}
