package cgroup

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestSetPidsLimit writes caps and "unlimited" on both versions: pids.max
// has the same name and syntax on v1 and v2.
func TestSetPidsLimit(t *testing.T) {
	layouts := map[string]*Layout{"v1": fakeV1(t), "v2": fakeV2(t)}
	caps := map[int64]string{1024: "1024", 64: "64", 0: "max", -1: "max"}
	for version, l := range layouts {
		g := mustCreate(t, l, "tenon/sb")
		for n, want := range caps {
			if err := g.SetPidsLimit(n); err != nil {
				t.Fatalf("%s SetPidsLimit(%d): %v", version, n, err)
			}
			if got := readFile(t, filepath.Join(g.dirs[Pids], "pids.max")); got != want {
				t.Errorf("%s SetPidsLimit(%d): pids.max = %q, want %q", version, n, got, want)
			}
		}
	}
	g := mustCreate(t, fakeV1(t), "tenon/other")
	delete(g.dirs, Pids)
	if err := g.SetPidsLimit(10); !errors.Is(err, ErrNoHierarchy) {
		t.Errorf("SetPidsLimit without a pids hierarchy: %v, want ErrNoHierarchy", err)
	}
}
