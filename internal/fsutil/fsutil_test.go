package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMoveDir(t *testing.T) {
	tests := []struct {
		name     string
		existing bool // dst exists already (a previous workspace)
	}{
		{"fresh", false},
		{"replaces", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := t.TempDir()
			src, dst := filepath.Join(d, "src"), filepath.Join(d, "a", "dst")
			if err := os.MkdirAll(filepath.Join(src, "sub"), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, "sub", "f"), []byte("new"), 0o640); err != nil {
				t.Fatal(err)
			}
			if tt.existing {
				if err := os.MkdirAll(dst, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dst, "old"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := MoveDir(src, dst); err != nil {
				t.Fatalf("MoveDir: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(dst, "sub", "f")); err != nil || string(b) != "new" {
				t.Errorf("moved file: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(dst, "old")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("old content survived: %v", err)
			}
			if _, err := os.Stat(src); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("src still there: %v", err)
			}
		})
	}
}

func TestCopyTree(t *testing.T) {
	d := t.TempDir()
	src, dst := filepath.Join(d, "src"), filepath.Join(d, "dst")
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "sub", "f"), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/f", filepath.Join(src, "l")); err != nil {
		t.Fatal(err)
	}
	if err := CopyTree(src, dst); err != nil {
		t.Fatalf("CopyTree: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "l")); err != nil || string(b) != "x" {
		t.Errorf("through the copied link: %q, %v", b, err)
	}
	for p, want := range map[string]os.FileMode{"sub": 0o750, "sub/f": 0o640} {
		if fi, err := os.Stat(filepath.Join(dst, p)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v, want mode %v", p, fi, err, want)
		}
	}
}

func TestCopyTreeOntoExisting(t *testing.T) {
	d := t.TempDir()
	src, dst := filepath.Join(d, "src"), filepath.Join(d, "dst")
	if err := os.MkdirAll(src, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := CopyTree(src, dst); err == nil {
		t.Errorf("CopyTree onto an existing tree succeeded")
	}
}
