package sim

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TestHoldPreemptIdleSim is a deadlock of idle floors: i0 and i1 each leave
// 100 MiB behind (a background process, after a first model wait of 5 s)
// and wait 100 s for the model; big, arriving after them, ramps to 120 MiB in 256 MiB under the gate alone
// (no admission, no swap, no retries), alone at the limit with nothing
// running that could end. The hold preempts i1, the youngest idle attempt
// holding memory (i0 started first and is never the victim), instead of
// releasing to the OOM killer: big finishes, i1 restarts, no OOM kill.
func TestHoldPreemptIdleSim(t *testing.T) {
	floor := func(id string, arrival float64) trajectory.Workflow {
		a := memAction(5, 100, 0.1, 0.1)
		a.Mem.RetainMiB, a.Mem.RetainS, a.Mem.Background = 100, 0.1, true
		return wf(id, arrival, a, memAction(100, 10, 0.1, 0.1))
	}
	wfs := []trajectory.Workflow{floor("i0", 0), floor("i1", 0.5), wf("big", 12, memAction(0, 120, 2, 1))}
	r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, "gate"), Budget: 256 * tMiB, Retries: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("completed %d failed %d oom %d preempted %d holds %d released %d makespan %v",
		r.Completed, r.Failed, r.OOMEvents, r.Preempted, r.Holds, r.HoldsReleased, r.Makespan)
	if r.Completed != len(wfs) || r.OOMEvents != 0 || r.HoldsReleased != 0 || r.Preempted != 1 {
		t.Errorf("completed %d, OOM kills %d, releases %d, preempted %d; want all, 0, 0, 1", r.Completed, r.OOMEvents, r.HoldsReleased, r.Preempted)
	}
	for _, w := range r.Workflows {
		if want := map[string]int{"i1": 2}[w.ID]; w.Attempts != max(want, 1) {
			t.Errorf("workflow %s: %d attempts, want %d", w.ID, w.Attempts, max(want, 1))
		}
	}
}
