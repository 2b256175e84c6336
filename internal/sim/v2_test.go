package sim

import (
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TestV2Hold: on a v2 domain (400 MiB, hold line 350 MiB) a holds 300 MiB
// from t=0.1 s to 10.1 s and b ramps 200 MiB over 1 s from t=1.1 s. Under
// the hold b stops just above the line, not at the budget, and goes on
// once a frees its memory: no kill. Released after its timeout, b grows on
// toward the budget, where the OOM killer takes the largest (a), later than
// v1's release kills it (at the release itself, TestOOMHold): the hold is
// re-armed a period after each release (b, growing, is not stalled), so b
// gains a period's growth per release until it reaches the budget, as the
// live v2 hold does (memory.high back at the line). Without the hold a is
// killed when b reaches the budget.
func TestV2Hold(t *testing.T) {
	crowd := []trajectory.Workflow{
		wf("a", 0, memAction(0, 300, 0, 10)),
		wf("b", 1, memAction(0, 200, 1, 1)),
	}
	const line = 350 * tMiB
	for _, tc := range []struct {
		name     string
		timeout  time.Duration
		killed   string
		killFrom time.Duration // the kill comes no earlier
		peakMax  int64
		released int // at least
		resolved int
	}{
		{name: "off: a is killed at the budget", killed: "a", killFrom: 1400 * time.Millisecond, peakMax: 400 * tMiB},
		{name: "armed: b waits above the line, no kill", timeout: time.Minute, peakMax: line + v2Over, resolved: 1},
		{name: "released: b grows on to the budget, a is killed there", timeout: 2 * time.Second,
			killed: "a", killFrom: 3500 * time.Millisecond, peakMax: 400 * tMiB, released: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runHeld(t, Config{Workflows: crowd, Policy: mustSpec(t, "eager"), Budget: 400 * tMiB,
				V2: true, HoldLine: line}, tc.timeout, 0)
			wantOOM := 0
			if tc.killed != "" {
				wantOOM = 1
			}
			if r.OOMEvents != wantOOM || r.HoldsReleased < tc.released || r.HoldsResolved != tc.resolved {
				t.Fatalf("OOM %d released %d resolved %d; want %d, at least %d, %d", r.OOMEvents, r.HoldsReleased,
					r.HoldsResolved, wantOOM, tc.released, tc.resolved)
			}
			if r.PeakBytes > tc.peakMax {
				t.Fatalf("peak %d MiB, want at most %d MiB", r.PeakBytes/tMiB, tc.peakMax/tMiB)
			}
			for _, w := range r.Workflows {
				switch {
				case w.ID == tc.killed:
					if w.Completed || w.OOMs != 1 || w.End < tc.killFrom {
						t.Fatalf("%s: %+v, want killed after %v", w.ID, w, tc.killFrom)
					}
				case !w.Completed || w.OOMs != 0:
					t.Fatalf("%s: %+v, want completed without a kill", w.ID, w)
				}
			}
		})
	}
}

// TestV2WaiterBelowLineGoesOn: on a v2 domain (400 MiB, hold line 350 MiB)
// b ramps into the line beside a's 300 MiB and c's; at 3.1 s c's action
// ends and frees half a MiB, which takes usage back below the line by less
// than the memory that wakes a stopped grower on v1. Below memory.high the
// kernel does not throttle, so b grows on past the line (and the hold
// takes it there again) long before a frees its memory at 10.1 s. Woken
// only by a MiB free, as on v1, b slept below the line (sim.growerWake).
func TestV2WaiterBelowLineGoesOn(t *testing.T) {
	const line = 350 * tMiB
	var above bool
	r := runHeld(t, Config{Workflows: []trajectory.Workflow{
		wf("a", 0, memAction(0, 300, 0, 10)),
		wf("b", 1, memAction(0, 200, 1, 1)),
		wf("c", 0, memAction(0, 0.5, 0, 3)),
	}, Policy: mustSpec(t, "eager"), Budget: 400 * tMiB, V2: true, HoldLine: line,
		Observe: func(a Accounting) {
			if a.T > 3200*time.Millisecond && a.T < 10*time.Second && a.Used > line {
				above = true
			}
		}}, time.Minute, 0)
	if r.OOMEvents != 0 {
		t.Fatalf("%d OOM kills, want none", r.OOMEvents)
	}
	if !above {
		t.Fatal("b stayed below the line from c's free until a's: a throttled waiter slept where the kernel does not throttle")
	}
}

// TestV2NeedsLine: a v2 domain without a hold line below the budget is a
// configuration error.
func TestV2NeedsLine(t *testing.T) {
	for _, line := range []int64{0, 400 * tMiB} {
		_, err := Run(t.Context(), Config{Workflows: []trajectory.Workflow{wf("a", 0, memAction(0, 10, 0, 1))},
			Budget: 400 * tMiB, V2: true, HoldLine: line})
		if err == nil {
			t.Errorf("hold line %d: no error", line)
		}
	}
}
