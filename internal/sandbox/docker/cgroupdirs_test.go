package docker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

func TestRemoveForeignDirs(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"memory/dom/c1", "blkio/dom/c1", "systemd/dom", "cpuset/other", "devices/dom/busy"} {
		mk(p)
	}
	// A file stands for a group still in use: rmdir fails on it.
	if err := os.WriteFile(filepath.Join(root, "devices/dom/busy/tasks"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &Backend{
		cfg:    Config{Domain: "dom"},
		layout: &cgroup.Layout{Controllers: map[string]cgroup.Mount{cgroup.Memory: {Version: cgroup.V1, Root: filepath.Join(root, "memory")}}},
	}
	if err := b.removeForeignDirs(root); err == nil {
		t.Errorf("removeForeignDirs: nil error, want one for the group in use")
	}
	tests := []struct {
		name, path string
		exists     bool
	}{
		{"managed hierarchy untouched", "memory/dom/c1", true},
		{"foreign child removed", "blkio/dom/c1", false},
		{"foreign domain removed", "blkio/dom", false},
		{"named hierarchy removed", "systemd/dom", false},
		{"other group untouched", "cpuset/other", true},
		{"group in use kept", "devices/dom/busy", true},
	}
	for _, tt := range tests {
		_, err := os.Stat(filepath.Join(root, tt.path))
		if got := err == nil; got != tt.exists {
			t.Errorf("%s: %s exists = %v, want %v", tt.name, tt.path, got, tt.exists)
		}
	}
	if err := (&Backend{cfg: b.cfg, layout: b.layout}).removeForeignDirs(filepath.Join(root, "missing")); err != nil {
		t.Errorf("missing root: %v", err)
	}
}
