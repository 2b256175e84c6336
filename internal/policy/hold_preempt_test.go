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
// timeout preempts the stuck attempt that started last and not preempted
// yet, never the first, and the hold stays armed; without it the hold releases
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
		calm      string // an attempt whose sandbox is not stuck: no thread blocked (it creeps, uses no CPU)
		frozen    string // an attempt whose sandbox the gate froze the step before: frozen, no thread blocked
		deferred  bool   // frozen is frozen though the gate let it run (residency's page-in deferred)
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
		{name: "a younger sandbox that is not stuck is never the victim", preempt: true, calm: "c", periods: []period{
			{0, "", HoldBegan, ""}, {3000, "", HoldPreempt, "b"}, {6000, "", HoldRelease, ""},
		}, preempted: 1},
		{name: "a younger sandbox the gate froze goes after the stuck ones, before a release", preempt: true, frozen: "c", periods: []period{
			{0, "", HoldBegan, ""}, {3000, "", HoldPreempt, "b"}, {6000, "", HoldPreempt, "c"}, {9000, "", HoldRelease, ""},
		}, preempted: 2},
		{name: "a younger sandbox frozen though let run waits for memory: stuck, the victim", preempt: true, frozen: "c", deferred: true, periods: []period{
			{0, "", HoldBegan, ""}, {3000, "", HoldPreempt, "c"}, {6000, "", HoldPreempt, "b"},
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
					if id == tc.calm {
						mem, blocked = mem+int64(p.ms)<<10, 0
					}
					s := gate.Sample{ID: "s" + id, Footprint: mem, Blocked: blocked}
					if id == tc.frozen {
						s.Blocked, s.Frozen = 0, true
						// The gate's denial at the previous step froze it,
						// or (deferred) it allowed it and residency did not
						// thaw it.
						m.frozen = slices.DeleteFunc(m.frozen, func(x string) bool { return x == s.ID })
						if !tc.deferred {
							m.frozen = append(m.frozen, s.ID)
						}
					}
					smp = append(smp, s)
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

// TestHoldPreemptNewcomer: an attempt that starts during a deadlocked wait
// (a victim's restart) is denied while the wait lasts, whatever the gate
// decided, and is never the victim: the next goes to the youngest of
// those the wait holds.
func TestHoldPreemptNewcomer(t *testing.T) {
	const mib = 1 << 20
	m := mustMachine(t, Config{Spec: Spec{Name: "gate", Gate: true}, Budget: 1 << 30, Hold: 3 * time.Second})
	m.SetHoldPreempt()
	obs := &fakeObs{avail: 1 << 30}
	start := func(ms int, id string) {
		submit(t, m, ms, id, wfPeak(id, 96), obs)
		if _, ok, err := m.ActionReady(at(ms), id, 0, &m.agents[id].wf.Actions[0], "s"+id); err != nil || !ok {
			t.Fatalf("%s: ActionReady: ok %v, err %v", id, ok, err)
		}
	}
	start(-200, "a")
	start(-100, "b")
	start(-50, "c")
	sample := func(ms int, ids ...string) Step {
		var smp []gate.Sample
		for _, id := range ids {
			smp = append(smp, gate.Sample{ID: "s" + id, Footprint: 80 * mib, Blocked: 1})
		}
		return m.Sample(at(ms), Observation{Available: 1 << 29, Sandboxes: smp, UnderOOM: true})
	}
	sample(0, "a", "b", "c")
	if st := sample(3000, "a", "b", "c"); st.Hold != HoldPreempt || st.Preempt.Agent != "c" {
		t.Fatalf("first timeout: %v %+v, want c preempted", st.Hold, st.Preempt)
	}
	if err := m.ActionDone(at(3050), "c", Done{PeakBytes: 80 * mib}); err != nil {
		t.Fatal(err)
	}
	m.AgentEnd(at(3050), "c", obs)
	start(3100, "d") // c's restart, say
	st := sample(3200, "a", "b", "d")
	if !slices.Contains(st.Gate.Denied, "sd") || slices.Contains(st.Gate.Denied, "sa") {
		t.Errorf("during the wait: denied %v, want sd (a newcomer) and not sa (the gate is green)", st.Gate.Denied)
	}
	if st := sample(6100, "a", "b", "d"); st.Hold != HoldPreempt || st.Preempt.Agent != "b" {
		t.Fatalf("second timeout: %v %+v, want b preempted (d started during the wait)", st.Hold, st.Preempt)
	}
	// Once the wait is over, the newcomer is the gate's again.
	if st := m.Sample(at(6200), Observation{Available: 1 << 29, Sandboxes: []gate.Sample{{ID: "sa", Footprint: 80 * mib}, {ID: "sd", Footprint: mib}}}); st.Hold != HoldResolved || slices.Contains(st.Gate.Denied, "sd") {
		t.Errorf("after the wait: hold %v, denied %v; want resolved, sd allowed", st.Hold, st.Gate.Denied)
	}
}
