// Package schedexttest loads the sched_ext gate scheduler for live tests
// outside internal/schedext, or skips them naming what is missing.
package schedexttest

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/schedext"
)

// Pacer loads the scheduler and returns it as a pacer of the cgroups of
// layout's v2 hierarchy; it skips t where sched_ext cannot run (no kernel
// support, no root, another scheduler, sandboxes not on cgroup v2). At t's
// cleanup it unloads the scheduler, and fails t if the kernel had already
// unloaded it (the watchdog, an error).
func Pacer(t testing.TB, layout *cgroup.Layout) *schedext.CgroupPacer {
	t.Helper()
	if err := schedext.Supported(); err != nil {
		t.Skip(err)
	}
	if m, _ := layout.Controller(cgroup.Memory); m.Version != cgroup.V2 || layout.Unified == "" {
		t.Skip("pacing in sched_ext needs the sandboxes on cgroup v2")
	}
	s, err := schedext.Load(schedext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !s.Enabled() {
			t.Errorf("the kernel unloaded the scheduler during the test: %v", s.Exit())
		}
		if err := s.Close(); err != nil {
			t.Errorf("unloading the scheduler: %v", err)
		}
	})
	return schedext.NewCgroupPacer(s, layout.Unified)
}
