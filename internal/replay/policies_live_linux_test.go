//go:build linux

package replay

import (
	"fmt"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestLivePolicies is a small live replay of eager, the gate alone and
// tenon on one workload (policyWorkload: four agents whose 96 MiB actions
// do not fit a 256 MiB domain together), without retries: eager is
// OOM-killed; tenon finishes every workflow without a kill; the gate alone
// loses no workflow under its OOM hold (v1's oom_kill_disable, v2's
// memory.high with the policy's freezing), whose preemption ends a
// deadlock by restarting the youngest stuck attempt (policy's
// hold_preempt.go) where releasing the hold let the OOM killer take one: a
// preempted attempt is not charged a retry. The gate and tenon run again
// with the OOM hold off (hold=off), where the gate's kills are logged, not
// asserted. It is small enough for internal/vmtest's emulated guest, where
// it runs on cgroup v2 (TestLiveReplayV2); here on the host's cgroup.
func TestLivePolicies(t *testing.T) {
	layout := liveLayout(t)
	const budget = 256 * units.MiB
	for _, tc := range []struct {
		name, policy string
		params       map[string]string
		wantKills    bool // at least one OOM kill (eager: the case exercises the budget)
		wantClean    bool // no OOM kill and every workflow done
		heldDone     bool // every workflow done (the OOM hold armed)
	}{
		{name: "eager", policy: "eager", wantKills: true},
		// The gate alone sees growth a period late, and here four growers
		// start at once in a budget no larger than its safety margin: all
		// four may meet mid-ramp at the limit, where only a kill or a
		// preemption ends the wait. Without the hold it loses workflows.
		{name: "gate", policy: "gate", heldDone: true},
		{name: "tenon", policy: "tenon", wantClean: true},
		{name: "gate without the hold", policy: "gate", params: map[string]string{"hold": "off"}},
		{name: "tenon without the hold", policy: "tenon", params: map[string]string{"hold": "off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wfs := recorded(policyWorkload())
			res, p := liveRunOpts(t, layout, budget, tc.policy, wfs, -1, liveOpts{params: tc.params})
			if tc.heldDone && !p.Machine().HoldArmed() {
				t.Errorf("%s: the OOM hold is not armed", tc.name)
			}
			if tc.heldDone && res.Completed != len(wfs) {
				t.Errorf("%s: %d of %d workflows done under the OOM hold (%d OOM kills, %d preempted); want all", tc.name, res.Completed, len(wfs), res.OOMEvents, res.Preempted)
				for _, w := range res.Workflows {
					if !w.Completed {
						t.Logf("%s: %d attempts, %d lost, %d preempted, %d start retries: %s", w.ID, w.Attempts, w.Lost, w.Preempted, w.StartRetries, w.Err)
					}
				}
			}
			if tc.wantKills && res.OOMEvents == 0 {
				t.Errorf("%s: no OOM kill: the case does not exercise the budget", tc.name)
			}
			if tc.wantClean && (res.OOMEvents != 0 || res.Completed != len(wfs)) {
				t.Errorf("%s: %d OOM kills, %d of %d workflows done; want 0 and all", tc.name, res.OOMEvents, res.Completed, len(wfs))
			}
		})
	}
}

// policyWorkload is four agents arriving together, each with one 96 MiB
// action held for 6 s: together they need 384 MiB, one at a time 96. The
// hold is long enough for the four to meet at their peaks also in the
// emulated guest, where a sandbox start takes seconds (with 2 s, Eager
// lost no workflow in 2 of 4 guest runs).
func policyWorkload() []trajectory.Workflow {
	var wfs []trajectory.Workflow
	for i := range 4 {
		wfs = append(wfs, trajectory.Workflow{
			Version: trajectory.Version, ID: fmt.Sprintf("pol-%d", i),
			Actions: []trajectory.Action{{
				Wait: 0.2, Class: "test", Command: "pytest -x",
				Mem: &trajectory.MemProfile{PeakMiB: 96, RampS: 0.5, HoldS: 6},
			}},
		})
	}
	return wfs
}
