//go:build linux && amd64

package schedext

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSysfs points State and Supported at a fake /sys/kernel/sched_ext.
func fakeSysfs(t *testing.T, state, ops string) {
	t.Helper()
	dir := t.TempDir()
	oldState, oldOps := statePath, opsPath
	t.Cleanup(func() { statePath, opsPath = oldState, oldOps })
	statePath, opsPath = filepath.Join(dir, "state"), filepath.Join(dir, "root", "ops")
	if state != "" {
		if err := os.WriteFile(statePath, []byte(state+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if ops != "" {
		if err := os.MkdirAll(filepath.Dir(opsPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(opsPath, []byte(ops+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSupportedFakeSysfs(t *testing.T) {
	tests := []struct {
		name, state, ops string
		wantIn           string // in the error
	}{
		{name: "no sched_ext", wantIn: "no sched_ext"},
		{name: "another scheduler", state: "enabled", ops: "scx_lavd", wantIn: `"scx_lavd"`},
		{name: "disabling", state: "disabling", wantIn: "disabling"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeSysfs(t, tt.state, tt.ops)
			err := Supported()
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("Supported() = %v, want ErrUnavailable mentioning %s", err, tt.wantIn)
			}
			if _, err := Load(Options{}); !errors.Is(err, ErrUnavailable) {
				t.Errorf("Load() = %v, want ErrUnavailable", err)
			}
		})
	}
	fakeSysfs(t, "disabled", "")
	if st, err := State(); err != nil || st != "disabled" {
		t.Errorf("State() = %q, %v", st, err)
	}
}

func TestCgroupIDIsInode(t *testing.T) {
	dir := t.TempDir()
	id, err := CgroupID(dir)
	if err != nil || id == 0 {
		t.Fatalf("CgroupID(%s) = %d, %v", dir, id, err)
	}
	if _, err := CgroupID(filepath.Join(dir, "missing")); err == nil {
		t.Error("CgroupID of a missing directory succeeded")
	}
}
