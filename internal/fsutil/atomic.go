package fsutil

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes the file at path through write so that a reader sees
// either the previous file or the whole new one, also after a crash: write
// fills a temporary file in the same directory, which is synced, given
// perm, closed and renamed over path; then the directory is synced so the
// rename itself is durable. On an error before the rename the temporary
// file is removed and path is left as it was.
func WriteFile(path string, perm fs.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("writing %s: syncing its directory: %w", path, err)
	}
	return nil
}

// syncDir makes the entries of dir (a rename into it) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
