//go:build linux

package process

import (
	"errors"
	"github.com/tenon-dev/tenon/internal/fsutil"
	"os"
	"path/filepath"
	"testing"
)

func writeTree(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{"opt/tool", "var/lib/pkg", "usr"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "opt/tool/x"), []byte("x"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/opt/tool/x", filepath.Join(dir, "var/lib/pkg/link")); err != nil {
		t.Fatal(err)
	}
}

func checkTree(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "opt/tool/x"))
	if err != nil || string(b) != "x" {
		t.Errorf("opt/tool/x: %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "opt/tool/x")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("opt/tool/x mode: %v, %v", fi, err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "var/lib/pkg/link")); err != nil || l != "/opt/tool/x" {
		t.Errorf("link: %q, %v", l, err)
	}
}

func TestAdoptRootfs(t *testing.T) {
	sys := []systemDir{{path: "/usr"}, {path: "/bin", target: "usr/bin"}}
	tests := []struct {
		name    string
		prepare func(t *testing.T, from string)
		wantErr bool
	}{
		{"captured layer", func(t *testing.T, from string) { writeTree(t, from) }, false},
		{"empty layer", func(t *testing.T, from string) {
			if err := os.Mkdir(from, 0o700); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"missing", func(t *testing.T, from string) {}, true},
		{"not a directory", func(t *testing.T, from string) {
			if err := os.WriteFile(from, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			from, dst := filepath.Join(dir, "from"), filepath.Join(dir, "rootfs")
			tt.prepare(t, from)
			err := adoptRootfs(from, dst, sys)
			if (err != nil) != tt.wantErr {
				t.Fatalf("adoptRootfs: %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if _, err := os.Lstat(from); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("from still there: %v", err)
			}
			if tt.name == "captured layer" {
				checkTree(t, dst)
			}
			for _, s := range skeleton {
				if fi, err := os.Stat(filepath.Join(dst, s.path)); err != nil || !fi.IsDir() {
					t.Errorf("skeleton %s: %v", s.path, err)
				}
			}
			if fi, err := os.Stat(filepath.Join(dst, "tmp")); err == nil && fi.Mode()&os.ModeSticky == 0 {
				t.Errorf("tmp is not sticky: %v", fi.Mode())
			}
			if l, err := os.Readlink(filepath.Join(dst, "bin")); err != nil || l != "usr/bin" {
				t.Errorf("bin symlink: %q, %v", l, err)
			}
		})
	}
}

func TestCopyTree(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	writeTree(t, src)
	if err := fsutil.CopyTree(src, dst); err != nil {
		t.Fatalf("CopyTree: %v", err)
	}
	checkTree(t, dst)
	if err := fsutil.CopyTree(src, dst); err == nil {
		t.Errorf("CopyTree onto an existing tree succeeded")
	}
}
