package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// createOutput opens path for writing ("-" or "" is stdout). The returned
// commit function must be called on success: the file is written to a
// temporary name and renamed into place, so a failure never leaves a
// half-written file behind.
func createOutput(env *cliEnv, path string) (w io.Writer, commit func() error, abort func(), err error) {
	if path == "" || path == "-" {
		return env.stdout, func() error { return nil }, func() {}, nil
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating %s: %w", path, err)
	}
	commit = func() error {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(f.Name())
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			os.Remove(f.Name())
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return os.Rename(f.Name(), path)
	}
	abort = func() { f.Close(); os.Remove(f.Name()) }
	return f, commit, abort, nil
}
