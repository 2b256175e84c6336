package docker

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// removeForeignDirs removes the domain's directory, deepest first, from
// every hierarchy under root that the layout does not manage (blkio,
// cpuset, devices, the named systemd hierarchy, ...): runc creates the
// cgroup parent in all of them, and the domain's owner only removes its
// own. Directories still in use are left; a missing root is not an error.
func (b *Backend) removeForeignDirs(root string) error {
	hs, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	managed := map[string]bool{}
	for _, m := range b.layout.Controllers {
		managed[filepath.Clean(m.Root)] = true
	}
	var errs []error
	for _, h := range hs {
		hier := filepath.Join(root, h.Name())
		if !h.IsDir() || managed[hier] {
			continue
		}
		errs = append(errs, removeDirs(filepath.Join(hier, b.cfg.Domain))...)
	}
	return errors.Join(errs...)
}

// removeDirs removes the (cgroup) directory tree at dir bottom-up, children
// first; a cgroup directory cannot be removed while it has children. It
// returns the errors other than not-exist.
func removeDirs(dir string) []error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	var errs []error
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errs
}
