//go:build linux

package replay

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestLivePreemptIdle is a deadlock of idle floors live (policy's
// idleVictim): in a 256 MiB domain, under the gate alone with the OOM
// hold and no retries, i0 and i1 each leave a process holding 100 MiB
// behind and wait 30 s for the model; big arrives once they idle and
// ramps to 120 MiB, alone at the limit with nothing running that could
// end. The hold preempts i1's attempt (the youngest idle one holding
// memory; i0 started first and is never the victim) instead of releasing
// to the OOM killer: its sandbox goes, big finishes, i1 restarts and
// finishes too. Asserted: no OOM kill, every workflow done, i1 preempted,
// neither big nor i0 (preempting only running actions, the hold preempted
// big again and again until i0 was done).
//
// big arrives 12 s in: in a CI run on a host whose two CPUs were kept
// busy by other work, the gate's red took turns between i0's and i1's
// ramps and i1 was still growing its floor 10 s in (it reached it 20 s
// later); arriving at 6 s, big was denied while i1, permitted, grew, and
// stayed below the limit until the model waits ended: no hold, no
// preemption.
func TestLivePreemptIdle(t *testing.T) {
	layout := liveLayout(t)
	res := liveRunWith(t, layout, 256*units.MiB, "gate", nil, recorded(idleFloorWorkload()), -1)
	t.Logf("%d preempted, %d OOM kills, %d of %d done, makespan %v", res.Preempted, res.OOMEvents, res.Completed, len(res.Workflows), res.Makespan)
	if res.OOMEvents != 0 || res.Completed != len(res.Workflows) {
		t.Errorf("%d OOM kills, %d of %d workflows done; want 0 and all", res.OOMEvents, res.Completed, len(res.Workflows))
	}
	for _, w := range res.Workflows {
		// big is not the victim: preempting it (the running one) would not
		// end the deadlock, which only an idle sandbox's memory can.
		switch {
		case w.ID == "big" && w.Preempted != 0:
			t.Errorf("big preempted %d times: the idle sandboxes' memory was never taken", w.Preempted)
		case w.ID == "i1" && w.Preempted == 0:
			t.Errorf("i1 never preempted")
		case w.ID == "i0" && w.Preempted != 0:
			t.Errorf("i0, the first-started attempt, preempted %d times", w.Preempted)
		}
	}
}

// idleFloorWorkload is TestLivePreemptIdle's: two agents whose first
// action leaves 100 MiB held by a background process before a long model
// wait, and a 120 MiB action arriving while they wait.
func idleFloorWorkload() []trajectory.Workflow {
	floor := func(id string, arrival float64) trajectory.Workflow {
		return trajectory.Workflow{Version: trajectory.Version, ID: id, Task: id, Arrival: arrival,
			Actions: []trajectory.Action{
				{Wait: 0.5, Class: "bash", Command: "serve",
					Mem: &trajectory.MemProfile{PeakMiB: 100, RampS: 0.3, HoldS: 0.2, RetainMiB: 100, RetainS: 0.1, Background: true}},
				{Wait: 30, Class: "bash", Command: "check", Mem: &trajectory.MemProfile{PeakMiB: 8, RampS: 0.1, HoldS: 0.1}},
			}}
	}
	return []trajectory.Workflow{floor("i0", 0), floor("i1", 0.5),
		{Version: trajectory.Version, ID: "big", Task: "big", Arrival: 12,
			Actions: []trajectory.Action{{Wait: 0.1, Class: "test", Command: "pytest",
				Mem: &trajectory.MemProfile{PeakMiB: 120, RampS: 2, HoldS: 1}}}}}
}
