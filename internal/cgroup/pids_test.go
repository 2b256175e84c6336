package cgroup

import (
	"errors"
	"os"
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

// TestSetSwap: on v2 memory.swap.max is "max" or 0; v1 and a v2 kernel
// without swap accounting are left alone.
func TestSetSwap(t *testing.T) {
	g := mustCreate(t, fakeV2(t), "tenon/sb")
	f := filepath.Join(g.dirs[Memory], "memory.swap.max")
	if err := g.SetSwap(false); err != nil { // no swap accounting: no file
		t.Fatal(err)
	}
	if _, err := os.Stat(f); err == nil {
		t.Fatal("SetSwap created memory.swap.max")
	}
	if err := os.WriteFile(f, []byte("max"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, allow := range []bool{false, true, false} {
		if err := g.SetSwap(allow); err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{true: "max", false: "0"}[allow]
		if got := readFile(t, f); got != want {
			t.Errorf("SetSwap(%v): memory.swap.max = %q, want %q", allow, got, want)
		}
	}
	g1 := mustCreate(t, fakeV1(t), "tenon/sb")
	if err := g1.SetSwap(true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(g1.dirs[Memory], "memory.swap.max")); err == nil {
		t.Error("SetSwap wrote memory.swap.max on v1")
	}
}
