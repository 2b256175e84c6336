package main

import (
	"io"

	"github.com/tenon-dev/tenon/internal/fsutil"
)

// writeOutput writes path through write: "-" or "" is stdout, anything
// else is written atomically (fsutil.WriteFile), so a failure never leaves
// a half-written file behind. Files are world-readable: outputs are meant
// to be read, plotted and committed.
func writeOutput(env *cliEnv, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(env.stdout)
	}
	return fsutil.WriteFile(path, 0o644, write)
}

// writeFileBytes writes b to path atomically and world-readable.
func writeFileBytes(path string, b []byte) error {
	return fsutil.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
