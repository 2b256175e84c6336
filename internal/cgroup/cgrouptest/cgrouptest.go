// Package cgrouptest has what live tests share to run on the host's
// cgroups: finding them, or skipping with a reason that names what is
// missing. It touches no cgroup itself.
package cgrouptest

import (
	"os"
	"testing"

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
