//go:build linux

package replay

import (
	"fmt"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestLiveGateRamp is issue 4's live check of the growth-aware gate: four
// sandboxes ramp at once to 40% of the budget each (160% together). Without
// control at least one is OOM-killed; under the gate alone (no admission,
// no residency) all four finish and none is. No retries, so an OOM kill is
// a lost workflow. The gate runs as it does by default, with the OOM hold
// (v1's oom_kill_disable, v2's memory.high with the policy's freezing of
// allocators): a deadlock under the hold is ended by its preemption (a
// preempted attempt restarts, not charged a retry), not by the OOM
// killer; asserted. It runs again with the hold off (hold=off), measured.
// The budget is 256 MiB, small enough for internal/vmtest's emulated
// guest (four 410 MiB ramps did not finish there within two minutes),
// where its gate run is in the v2 suite (TestLiveReplayV2).
func TestLiveGateRamp(t *testing.T) {
	layout := liveLayout(t)
	const budget = 256 * units.MiB
	peak := 0.4 * float64(budget) / float64(units.MiB)
	var wfs []trajectory.Workflow
	for i := range 4 {
		wfs = append(wfs, trajectory.Workflow{
			Version: trajectory.Version, ID: fmt.Sprintf("ramp-%d", i),
			Actions: []trajectory.Action{{
				Class: "test", Command: "pytest -x",
				Mem: &trajectory.MemProfile{PeakMiB: peak, RampS: 1.5, HoldS: 1},
			}},
		})
	}
	t.Run("eager OOMs", func(t *testing.T) {
		res := liveRun(t, layout, budget, "eager", wfs, -1)
		if res.OOMEvents == 0 {
			t.Errorf("no OOM kill without control: the case does not exercise the gate")
		}
	})
	t.Run("gate prevents every OOM", func(t *testing.T) {
		res := liveRun(t, layout, budget, "gate", wfs, -1)
		if res.OOMEvents != 0 || res.Completed != len(wfs) {
			t.Errorf("gate: %d OOM kills, %d of %d completed (%d preempted); want 0 and all", res.OOMEvents, res.Completed, len(wfs), res.Preempted)
		}
	})
	t.Run("gate without the hold", func(t *testing.T) {
		liveRunWith(t, layout, budget, "gate", map[string]string{"hold": "off"}, wfs, -1)
	})
}
