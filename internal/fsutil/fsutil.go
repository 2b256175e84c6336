package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// MoveDir replaces dst by src: a rename, or a copy (then src is removed)
// when they are on different file systems.
func MoveDir(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	err := os.Rename(src, dst)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := CopyTree(src, dst); err != nil {
		_ = os.RemoveAll(dst)
		return fmt.Errorf("copying %s to another file system: %w", src, err)
	}
	return os.RemoveAll(src)
}

const modeBits = fs.ModePerm | fs.ModeSticky | fs.ModeSetuid | fs.ModeSetgid

// CopyTree copies directories, regular files and symlinks from src to the
// new directory dst, keeping modes and owners, and the overlayfs markers of
// a writable layer (whiteouts, the overlay xattrs of directories); other
// file types fail.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			if err = os.Mkdir(out, 0o700); err == nil {
				err = os.Chmod(out, fi.Mode()&modeBits)
			}
			if err == nil {
				err = copyOverlayXattrs(p, out)
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			var t string
			if t, err = os.Readlink(p); err == nil {
				err = os.Symlink(t, out)
			}
		case fi.Mode().IsRegular():
			err = copyFile(p, out, fi.Mode())
		default:
			var ok bool
			if ok, err = copyWhiteout(out, fi); err == nil && !ok {
				return fmt.Errorf("%s: unsupported file type %s", rel, fi.Mode().Type())
			}
		}
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return os.Lchown(out, int(st.Uid), int(st.Gid))
		}
		return nil
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode&modeBits)
}
