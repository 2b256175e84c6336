package edittool

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Errors of an edit that cannot apply, as the agent's tool reported them.
var (
	// ErrNotFound means Old does not occur in the file.
	ErrNotFound = errors.New("edittool: the text to replace is not in the file")
	// ErrAmbiguous means Old occurs more than once and ReplaceAll is off.
	ErrAmbiguous = errors.New("edittool: the text to replace occurs more than once")
)

// Apply applies e to the file e.Path under root. A replacement keeps the
// file's mode; a Write creates missing parent directories and a new file
// with mode 0644.
func Apply(root string, e trajectory.FileEdit) error {
	if err := trajectory.CheckRelPath(e.Path); err != nil {
		return fmt.Errorf("edittool: path %w", err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("edittool: %w", err)
	}
	defer r.Close()
	if e.Write {
		if dir := path.Dir(e.Path); dir != "." {
			if err := r.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("edittool: %w", err)
			}
		}
		return writeFile(r, e.Path, e.New)
	}
	old, err := r.ReadFile(e.Path)
	if err != nil {
		return fmt.Errorf("edittool: %w", err)
	}
	s := string(old)
	switch n := strings.Count(s, e.Old); {
	case n == 0:
		return fmt.Errorf("%w: %s", ErrNotFound, e.Path)
	case n > 1 && !e.ReplaceAll:
		return fmt.Errorf("%w (%d times): %s", ErrAmbiguous, n, e.Path)
	}
	return writeFile(r, e.Path, strings.ReplaceAll(s, e.Old, e.New))
}

// writeFile replaces the content of name (created with 0644 if missing).
func writeFile(r *os.Root, name, content string) error {
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("edittool: %w", err)
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return fmt.Errorf("edittool: writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("edittool: writing %s: %w", name, err)
	}
	return nil
}

// Args is the argv after the tenon binary that applies e:
// tool edit --path P [--old O] --new N [--replace-all] [--write].
func Args(e trajectory.FileEdit) []string {
	a := []string{"tool", "edit", "--path", e.Path}
	if e.Old != "" {
		a = append(a, "--old", e.Old)
	}
	a = append(a, "--new", e.New)
	if e.ReplaceAll {
		a = append(a, "--replace-all")
	}
	if e.Write {
		a = append(a, "--write")
	}
	return a
}

// NewFlagSet returns the flag set of `tenon tool edit`, filling e.
func NewFlagSet(name string, e *trajectory.FileEdit) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&e.Path, "path", "", "the `file`, relative to the working directory (the workspace)")
	fs.StringVar(&e.Old, "old", "", "the `text` to replace")
	fs.StringVar(&e.New, "new", "", "the replacement `text` (with --write: the whole file)")
	fs.BoolVar(&e.ReplaceAll, "replace-all", false, "replace every occurrence of --old")
	fs.BoolVar(&e.Write, "write", false, "create or overwrite the file with --new")
	return fs
}
