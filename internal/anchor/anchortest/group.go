package anchortest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// Group creates the cgroup name (a path below the hierarchy roots) with
// the memory controller and the freezer, and kills what is left in it and
// removes it at cleanup. It skips when either controller is missing.
func Group(t testing.TB, name, what string) (*cgroup.Layout, cgroup.Group) {
	t.Helper()
	l, err := cgroup.Detect("/proc")
	if errors.Is(err, cgroup.ErrNoMemoryController) {
		t.Skipf("%s needs the memory controller (cgroup v1 or v2)", what)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Controllers[cgroup.Freezer]; !ok {
		t.Skipf("%s needs the freezer (v1 freezer or v2 cgroup.freeze)", what)
	}
	g, err := cgroup.Create(l, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.KillAll(ctx); err != nil {
			t.Errorf("cleanup KillAll: %v", err)
		}
		if err := g.Delete(); err != nil {
			t.Errorf("cleanup Delete: %v", err)
		}
	})
	return l, g
}
