package policy

import (
	"slices"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// TestHoldPreempt steps a gate machine with the OOM hold over a deadlock:
// three attempts (a, b, c, started in that order) run actions whose
// sandboxes are all stuck at the limit (a thread in D state, no CPU, no
// growth), so nothing progresses. With preemption (SetHoldPreempt) each
// timeout preempts the attempt that started last and not preempted yet,
// never the first, and the hold stays armed; without it the hold releases
// at the first timeout, as before.
func TestHoldPreempt(t *testing.T) {
	const mib = 1 << 20
	const budget = 256 * mib
	type period struct {
		ms      int
		done    string // an attempt whose action ends before the sample
		hold    HoldAction
		preempt string // the agent preempted at this step
	}
	for _, tc := range []struct {
		name      string
		preempt   bool
		freeze    bool
		periods   []period
		preempted uint64
	}{
		{name: "without preemption the deadlock is released to the OOM killer", periods: []period{
			{0, "", HoldBegan, ""}, {2900, "", HoldNone, ""}, {3000, "", HoldRelease, ""},
		}},
		{name: "the youngest is preempted, then the next; the first never: released after", preempt: true, periods: []period{
			{0, "", HoldBegan, ""}, {2900, "", HoldNone, ""}, {3000, "", HoldPreempt, "c"},
			{3100, "", HoldNone, ""}, {5900, "", HoldNone, ""}, {6000, "", HoldPreempt, "b"},
			{9000, "", HoldRelease, ""},
		}, preempted: 2},
		{name: "a victim whose action ended is forgotten; the youngest left goes next", preempt: true, periods: []period{
			{0, "", HoldBegan, ""}, {3000, "", HoldPreempt, "c"},
			{3100, "c", HoldNone, ""}, {6000, "", HoldPreempt, "b"},
		}, preempted: 2},
		{name: "the freezing hold keeps the others frozen and thaws the victim", preempt: true, freeze: true, periods: []period{
			{0, "", HoldNone, ""}, {100, "", HoldBegan, ""}, {3100, "", HoldPreempt, "c"}, {3200, "", HoldNone, ""},
		}, preempted: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMachine(t, Config{Spec: Spec{Name: "gate", Gate: true}, Budget: budget, Hold: 3 * time.Second})
			if tc.freeze {
				m.SetHoldFreeze()
			}
			if tc.preempt {
				m.SetHoldPreempt()
			}
			obs := &fakeObs{avail: budget}
			running := map[string]bool{}
			for i, id := range []string{"a", "b", "c"} {
				submit(t, m, -300+100*i, id, wfPeak(id, 96), obs)
				if _, ok, err := m.ActionReady(at(-300+100*i), id, 0, &m.agents[id].wf.Actions[0], "s"+id); err != nil || !ok {
					t.Fatalf("%s: ActionReady: ok %v, err %v", id, ok, err)
				}
				running[id] = true
			}
			var victims []string
			for i, p := range tc.periods {
				if p.done != "" {
					if err := m.ActionDone(at(p.ms), p.done, Done{Index: 0, PeakBytes: 60 * mib}); err != nil {
						t.Fatal(err)
					}
					m.AgentEnd(at(p.ms), p.done, obs)
					delete(running, p.done)
				}
				var smp []gate.Sample
				for _, id := range []string{"a", "b", "c"} {
					if !running[id] {
						continue
					}
					// Before the wait (with the freezing hold: the first
					// period) every sandbox grows; then all are stuck.
					mem, blocked := int64(80*mib), 1
					if tc.freeze && p.ms == 0 {
						mem, blocked = 50*mib, 0
					}
					smp = append(smp, gate.Sample{ID: "s" + id, Footprint: mem, Blocked: blocked})
				}
				under := !tc.freeze || p.ms > 0
				st := m.Sample(at(p.ms), Observation{Available: 0, Sandboxes: smp, UnderOOM: under, AboveHoldLine: under})
				if st.Hold != p.hold || st.Preempt.Agent != p.preempt {
					t.Fatalf("period %d (t=%dms): hold %v, preempt %+v; want %v, %q", i, p.ms, st.Hold, st.Preempt, p.hold, p.preempt)
				}
				if st.Hold == HoldPreempt {
					if st.Preempt.Sandbox != "s"+p.preempt {
						t.Errorf("period %d: preempted sandbox %q, want s%s", i, st.Preempt.Sandbox, p.preempt)
					}
					victims = append(victims, p.preempt)
				}
				// A victim whose action still runs is allowed (thawed: its
				// kill must land) and never held by the freezing hold.
				for _, v := range victims {
					if !running[v] {
						continue
					}
					if slices.Contains(st.HoldFrozen, "s"+v) || slices.Contains(st.Gate.Denied, "s"+v) {
						t.Errorf("period %d: victim %s held %v, denied %v", i, v, st.HoldFrozen, st.Gate.Denied)
					}
				}
				if tc.freeze && p.ms >= 100 {
					for _, id := range []string{"a", "b"} {
						if !slices.Contains(st.HoldFrozen, "s"+id) {
							t.Errorf("period %d: %s not held by the freezing hold: %v", i, id, st.HoldFrozen)
						}
					}
				}
			}
			if got := m.HoldStats().Preempted; got != tc.preempted {
				t.Errorf("preempted %d, want %d", got, tc.preempted)
			}
		})
	}
}
