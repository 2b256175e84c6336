package sim

import (
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TestHoldWaitsForTheLongestAction: a sandbox held at the budget waits for
// another's action that progresses for ten minutes, longer than the hold's
// default bound (HoldMaxWait: 100 times its 3 s timeout); with the action
// timeout of the workload (ten times its longest action) the hold waits it
// out and nothing is killed, without it the bound hands the OOM killer a
// wait that was about to resolve.
func TestHoldWaitsForTheLongestAction(t *testing.T) {
	wfs := []trajectory.Workflow{
		wf("long", 0, memAction(0, 250, 1, 600)),
		wf("late", 5, memAction(0, 200, 5, 1)),
	}
	run := func(timeout time.Duration) *Result {
		t.Helper()
		r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, "gate"), Budget: 400 * tMiB,
			SandboxBase: 4 * tMiB, ActionTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(0); r.OOMEvents == 0 {
		t.Fatalf("setup: without an action timeout no OOM kill (holds %d, released %d); the case does not outlast the hold's bound", r.Holds, r.HoldsReleased)
	}
	r := run(6010 * time.Second)
	if r.OOMEvents != 0 || r.HoldsReleased != 0 || r.Completed != len(wfs) || r.Timeouts != 0 {
		t.Fatalf("with a 6010 s action timeout: %d OOM kills, %d holds released, %d timeouts, %d of %d done; want none killed, all done",
			r.OOMEvents, r.HoldsReleased, r.Timeouts, r.Completed, len(wfs))
	}
}
