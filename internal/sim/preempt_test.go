package sim

import (
	"fmt"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TestHoldPreemptSim is the live replays' deadlock in the simulator: four
// agents ramp to 96 MiB each over 0.1 s at once in 256 MiB (the gate alone,
// no retries), so all are mid-ramp at the limit with nothing to wait for.
// The hold preempts (policy's hold_preempt.go) instead of releasing to the
// OOM killer, and the simulator restarts a preempted attempt without
// charging a retry, as the replay does: every workflow finishes, with no
// OOM kill, on the v1 and the v2 model.
func TestHoldPreemptSim(t *testing.T) {
	var wfs []trajectory.Workflow
	for i := range 4 {
		wfs = append(wfs, wf(fmt.Sprintf("p%d", i), 0, memAction(0.2, 96, 0.1, 2)))
	}
	for _, v2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("v2 %v", v2), func(t *testing.T) {
			cfg := Config{Workflows: wfs, Policy: mustSpec(t, "gate"), Budget: 256 * tMiB, Retries: 0, V2: v2}
			if v2 {
				cfg.HoldLine = 224 * tMiB
			}
			r, err := Run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("completed %d failed %d oom %d preempted %d holds %d released %d makespan %v",
				r.Completed, r.Failed, r.OOMEvents, r.Preempted, r.Holds, r.HoldsReleased, r.Makespan)
			if r.Completed != len(wfs) || r.Failed != 0 || r.OOMEvents != 0 {
				t.Errorf("completed %d, failed %d, OOM kills %d; want all, 0, 0", r.Completed, r.Failed, r.OOMEvents)
			}
			if r.Preempted == 0 || r.HoldsReleased != 0 {
				t.Errorf("preempted %d, released %d: want the deadlock ended by preemption, not a release", r.Preempted, r.HoldsReleased)
			}
		})
	}
}
