package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

func TestFreezer(t *testing.T) {
	ctx := context.Background()
	t.Run("deny freezes and allow thaws", func(t *testing.T) {
		tree := fakeTree{"a": {path: "tenon/a"}}
		f := NewFreezer(tree.resolve, 0)
		if err := f.Deny(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if !tree["a"].frozen {
			t.Fatal("a not frozen after Deny")
		}
		if err := f.Allow(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if tree["a"].frozen {
			t.Fatal("a frozen after Allow")
		}
	})
	t.Run("unverified freeze is undone", func(t *testing.T) {
		tree := fakeTree{"a": {path: "tenon/a", lieFrozen: true}}
		err := NewFreezer(tree.resolve, 0).Deny(ctx, "a")
		if !errors.Is(err, ErrNotVerified) {
			t.Fatalf("Deny = %v, want ErrNotVerified", err)
		}
		if c := tree["a"].calls; len(c) != 2 || c[1] != "thaw" {
			t.Errorf("calls = %v, want freeze then thaw", c)
		}
	})
	t.Run("freeze timeout is undone and reported", func(t *testing.T) {
		tree := fakeTree{"a": {path: "tenon/a", freezeErr: cgroup.ErrFreezeTimeout}}
		err := NewFreezer(tree.resolve, 0).Deny(ctx, "a")
		if !errors.Is(err, cgroup.ErrFreezeTimeout) || tree["a"].frozen {
			t.Fatalf("Deny = %v frozen=%v, want ErrFreezeTimeout and thawed", err, tree["a"].frozen)
		}
	})
	t.Run("unknown sandbox", func(t *testing.T) {
		if err := NewFreezer(fakeTree{}.resolve, 0).Deny(ctx, "nope"); !errors.Is(err, cgroup.ErrNotExist) {
			t.Errorf("Deny = %v, want ErrNotExist", err)
		}
	})
	t.Run("close thaws everything it froze", func(t *testing.T) {
		tree := fakeTree{"a": {path: "tenon/a"}, "b": {path: "tenon/b"}, "c": {path: "tenon/c"}}
		f := NewFreezer(tree.resolve, 0)
		for _, id := range []string{"a", "b", "c"} {
			if err := f.Deny(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Allow(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for id, g := range tree {
			if g.frozen {
				t.Errorf("%s still frozen after Close", id)
			}
		}
		if n := len(tree["b"].calls); n != 2 {
			t.Errorf("b calls = %v, want only freeze and thaw (Close must skip thawed groups)", tree["b"].calls)
		}
	})
	t.Run("thaw stale thaws only frozen groups", func(t *testing.T) {
		a, b := &fakeGroup{path: "tenon/a", frozen: true}, &fakeGroup{path: "tenon/b"}
		if err := ThawStale(ctx, []cgroup.Group{a, b}); err != nil {
			t.Fatal(err)
		}
		if a.frozen || len(b.calls) != 0 {
			t.Errorf("a frozen=%v, b calls=%v; want a thawed and b untouched", a.frozen, b.calls)
		}
	})
	t.Run("thaw stale reports failures", func(t *testing.T) {
		a := &fakeGroup{path: "tenon/a", frozen: true, thawErr: errors.New("boom")}
		if err := ThawStale(ctx, []cgroup.Group{a}); err == nil {
			t.Error("ThawStale = nil, want the thaw error")
		}
	})
}

func TestCPUQuota(t *testing.T) {
	ctx := context.Background()
	tree := fakeTree{"a": {path: "tenon/a"}, "b": {path: "tenon/b"}}
	q := NewCPUQuota(tree.resolve, 0, 0)
	if err := q.Deny(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if g := tree["a"]; g.quota != time.Millisecond || g.period != 100*time.Millisecond {
		t.Fatalf("denied quota = %v/%v, want 1ms/100ms (1%% of a CPU)", g.quota, g.period)
	}
	if err := q.Allow(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if g := tree["a"]; g.quota > 0 {
		t.Fatalf("allowed quota = %v, want removed", g.quota)
	}
	if err := q.Deny(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if g := tree["b"]; g.quota > 0 {
		t.Errorf("quota after Close = %v, want removed", g.quota)
	}
}

func TestSchedExt(t *testing.T) {
	root := t.TempDir()
	err := DetectSchedExt(root)
	var ufe *UnsupportedFeatureError
	if !errors.As(err, &ufe) || ufe.Feature != SchedExtFeature {
		t.Fatalf("DetectSchedExt(empty) = %v, want *UnsupportedFeatureError", err)
	}
	if _, err := NewSchedExt(root); !errors.As(err, &ufe) {
		t.Fatalf("NewSchedExt(empty) = %v, want *UnsupportedFeatureError", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "kernel", "sched_ext"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := DetectSchedExt(root); err != nil {
		t.Fatalf("DetectSchedExt(present) = %v, want nil", err)
	}
	if _, err := NewSchedExt(root); !errors.Is(err, ErrNoSchedExtProgram) {
		t.Fatalf("NewSchedExt(present) = %v, want ErrNoSchedExtProgram", err)
	}
}

func TestSchedExtLiveHost(t *testing.T) {
	err := DetectSchedExt("/sys")
	var ufe *UnsupportedFeatureError
	switch {
	case errors.As(err, &ufe):
		t.Skipf("host kernel lacks %s", ufe.Feature)
	case err != nil:
		t.Fatal(err)
	}
	if _, err := NewSchedExt("/sys"); !errors.Is(err, ErrNoSchedExtProgram) {
		t.Errorf("NewSchedExt = %v, want ErrNoSchedExtProgram", err)
	}
}
