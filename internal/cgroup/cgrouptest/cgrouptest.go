// Package cgrouptest has what live tests share to run on the host's
// cgroups: finding them, or skipping with a reason that names what is
// missing, and a workload domain removed at the test's end.
package cgrouptest

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// Live returns the host's cgroup layout, or skips t in -short mode,
// without root, or without a cgroup memory controller. what names the
// test in the skip reason, e.g. "live replay test".
func Live(t testing.TB, what string) *cgroup.Layout {
	t.Helper()
	if testing.Short() {
		t.Skip(what + " skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip(what + " needs root (namespaces, mounts, cgroups)")
	}
	l, err := cgroup.Detect("/proc")
	if err != nil {
		t.Skipf("%s needs the cgroup memory controller: %v", what, err)
	}
	return l
}

// Domain opens the workload domain name with budget under layout for t,
// failing t when it cannot, and closes it (emptying it) at t's cleanup.
func Domain(t testing.TB, layout *cgroup.Layout, name string, budget int64) *cgroup.Domain {
	t.Helper()
	dom, err := cgroup.OpenDomain(context.Background(), layout, name, budget, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("opening workload domain %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := dom.Close(ctx); err != nil {
			t.Errorf("closing workload domain %s: %v", name, err)
		}
	})
	return dom
}
