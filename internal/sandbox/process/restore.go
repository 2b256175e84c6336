//go:build linux

package process

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tenon-dev/tenon/internal/fsutil"
)

// SupportsRootfsFrom reports that Create honours sandbox.Spec.RootfsFrom.
func (b *Backend) SupportsRootfsFrom() bool { return true }

// adoptRootfs moves the captured writable layer from into place as the
// rootfs dst (which must not exist), then completes the skeleton: a layer
// captured from another sandbox holds the mount points already, but one
// restored from elsewhere may lack some. A rename is used when from and dst
// share a file system; otherwise the tree is copied and from removed.
func adoptRootfs(from, dst string, sys []systemDir) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return fmt.Errorf("rootfs-from: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("rootfs-from %s is not a directory", from)
	}
	if err := moveTree(from, dst); err != nil {
		return fmt.Errorf("moving rootfs-from into place (put it on the state dir's file system): %w", err)
	}
	if err := os.Chmod(dst, 0o755); err != nil {
		return fmt.Errorf("adopting rootfs: %w", err)
	}
	return completeRootfs(dst, sys)
}

// moveTree renames from to dst, or, when they lie on two file systems (a
// sandbox's disk image and the state dir), copies the tree and removes
// from.
func moveTree(from, dst string) error {
	err := os.Rename(from, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := fsutil.CopyTree(from, dst); err != nil {
		_ = os.RemoveAll(dst)
		return fmt.Errorf("copying %s to %s: %w", from, dst, err)
	}
	if err := os.RemoveAll(from); err != nil {
		return fmt.Errorf("removing %s after copying it: %w", from, err)
	}
	return nil
}

// completeRootfs creates whatever of the rootfs skeleton is missing in dir
// (all of it in a fresh dir: makeRootfs).
// Existing entries are left as they are (their modes are the layer's).
// Every step goes through an os.Root of dir: a restored layer is the
// sandbox's own writing, and a symbolic link it planted where the
// skeleton has a directory (var -> /etc) must not make this process,
// which runs on the host as root, create or chmod anything outside the
// rootfs. Such a layer fails here, naming the path.
func completeRootfs(dir string, sys []systemDir) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("completing rootfs: %w", err)
	}
	defer root.Close()
	missing := func(rel string) (bool, error) {
		_, err := root.Lstat(rel)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, fs.ErrNotExist):
			return true, nil
		default:
			return false, fmt.Errorf("completing rootfs: %s: %w", rel, err)
		}
	}
	for _, s := range skeleton {
		if ok, err := missing(s.path); !ok {
			if err != nil {
				return err
			}
			continue
		}
		if err := root.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
			return fmt.Errorf("completing rootfs: %w", err)
		}
		if err := root.Mkdir(s.path, s.mode.Perm()); err != nil { // the sticky bit by Chmod: Root.Mkdir takes permission bits only
			return fmt.Errorf("completing rootfs: %w", err)
		}
		if err := root.Chmod(s.path, s.mode); err != nil {
			return fmt.Errorf("completing rootfs: %w", err)
		}
	}
	for _, s := range sys {
		rel := strings.TrimPrefix(s.path, "/")
		if ok, err := missing(rel); !ok {
			if err != nil {
				return err
			}
			continue
		}
		var err error
		if s.target != "" {
			err = root.Symlink(s.target, rel)
		} else {
			err = root.Mkdir(rel, 0o755)
		}
		if err != nil {
			return fmt.Errorf("completing rootfs: %w", err)
		}
	}
	return nil
}
