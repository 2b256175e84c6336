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
// timeout preempts the stuck attempt that loses the least work per byte
// it frees (of sandboxes holding as much, the one that started last) and
// is not preempted yet, never the first, and the hold stays armed;
// without it the hold releases at the first timeout, as before.
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
		large     string // an attempt whose sandbox holds twice what the others hold
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
		{name: "an older attempt holding twice the memory loses less work per byte: it goes first", preempt: true, large: "b", periods: []period{
			{0, "", HoldBegan, ""}, {3000, "", HoldPreempt, "b"}, {6000, "", HoldPreempt, "c"}, {9000, "", HoldRelease, ""},
		}, preempted: 2},
		{name: "the first-started attempt is never the victim, however much it holds", preempt: true, large: "a", periods: []period{
			{0, "", HoldBegan, ""}, {3000, "", HoldPreempt, "c"}, {6000, "", HoldPreempt, "b"}, {9000, "", HoldRelease, ""},
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
					if id == tc.large {
						mem = 2 * mem
					}
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

// TestHoldPreemptIdle: a deadlock of idle sandboxes. Attempts a, b, c, d
// started in that order; a and b ran an action and wait (for the model)
// with their sandboxes holding memory, c's sandbox was torn down (it holds
// nothing), d runs an action stuck at the limit and is the only running
// one, so holdVictim spares it. Where the host ends idle attempts
// (SetHoldPreemptIdle) the first timeout preempts b, the youngest idle
// attempt that holds memory; the next, with only a (the first-started,
// never a victim) idle beside it, preempts d, the deadlock being between
// the two; then the hold releases. Where it preempts running actions only,
// d goes first. Without preemption the hold releases at the first timeout.
func TestHoldPreemptIdle(t *testing.T) {
	const mib = 1 << 20
	type step struct {
		ms    int
		hold  HoldAction
		agent string
		idle  bool
	}
	for _, tc := range []struct {
		name          string
		preempt, idle bool
		want          []step
	}{
		{"no preemption", false, false, []step{{0, HoldBegan, "", false}, {3000, HoldRelease, "", false}}},
		{"running actions only", true, false, []step{{0, HoldBegan, "", false}, {3000, HoldPreempt, "d", false}, {6000, HoldRelease, "", false}}},
		{"idle attempts too", true, true, []step{{0, HoldBegan, "", false}, {3000, HoldPreempt, "b", true},
			{6000, HoldPreempt, "d", false}, {9000, HoldRelease, "", false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMachine(t, Config{Spec: Spec{Name: "gate", Gate: true}, Budget: 256 * mib, Hold: 3 * time.Second})
			if tc.preempt {
				m.SetHoldPreempt()
			}
			if tc.idle {
				m.SetHoldPreemptIdle()
			}
			obs := &fakeObs{avail: 256 * mib}
			for i, id := range []string{"a", "b", "c", "d"} {
				ms := -400 + 100*i
				w := wfPeak(id, 96)
				w.Actions = append(w.Actions, w.Actions[0])
				submit(t, m, ms, id, w, obs)
				if _, ok, err := m.ActionReady(at(ms), id, 0, &m.agents[id].wf.Actions[0], "s"+id); err != nil || !ok {
					t.Fatalf("%s: ActionReady: ok %v, err %v", id, ok, err)
				}
				if id != "d" {
					if err := m.ActionDone(at(ms+50), id, Done{Index: 0, PeakBytes: 90 * mib, AfterBytes: 60 * mib}); err != nil {
						t.Fatal(err)
					}
				}
			}
			gone := map[string]bool{} // sandboxes the host destroyed
			for _, w := range tc.want {
				var smp []gate.Sample
				for _, s := range []gate.Sample{
					{ID: "sa", Footprint: 60 * mib}, {ID: "sb", Footprint: 60 * mib},
					{ID: "sd", Footprint: 130 * mib, Blocked: 1},
				} {
					if !gone[s.ID] {
						smp = append(smp, s)
					}
				}
				st := m.Sample(at(w.ms), Observation{Available: 0, Sandboxes: smp, UnderOOM: true})
				if st.Hold != w.hold || st.Preempt.Agent != w.agent || st.Preempt.Idle != w.idle {
					t.Fatalf("t=%dms: hold %v, preempt %+v; want %v, %q (idle %v)", w.ms, st.Hold, st.Preempt, w.hold, w.agent, w.idle)
				}
				if w.hold == HoldPreempt && st.Preempt.Sandbox != "s"+w.agent {
					t.Errorf("t=%dms: preempted sandbox %q, want s%s", w.ms, st.Preempt.Sandbox, w.agent)
				}
				if w.idle { // the host destroys the sandbox and ends the attempt
					gone[st.Preempt.Sandbox] = true
					m.AgentEnd(at(w.ms+10), w.agent, obs)
				}
			}
		})
	}
}

// idleVictimMachine is the machine of TestIdleVictimChoice (v2: with the
// freezing hold): attempts a, b, c and d started in that order, each
// admitted on a 100 MiB prediction from 10 MiB; a, b and c done (50 MiB
// after), d still running.
func idleVictimMachine(t *testing.T, v2 bool) *Machine {
	t.Helper()
	const mib = 1 << 20
	m := mustMachine(t, Config{Spec: Spec{Name: "tenon", Admission: true, Gate: true, Predictor: PredCurrent},
		Budget: 1 << 30, Model: constPred{peak: 100 * mib}, Hold: 3 * time.Second})
	m.SetHoldPreempt()
	m.SetHoldPreemptIdle()
	if v2 {
		m.SetHoldFreeze()
	}
	obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{"sa": 10 * mib, "sb": 10 * mib, "sc": 10 * mib, "sd": 10 * mib}}
	for i, id := range []string{"a", "b", "c", "d"} {
		w := wfPeak(id, 100)
		w.Actions = append(w.Actions, w.Actions[0])
		if got := submit(t, m, i, id, w, obs); len(got) != 1 {
			t.Fatalf("%s did not start: %v", id, got)
		}
		if _, _, err := m.ActionReady(at(10+i), id, 0, &m.agents[id].wf.Actions[0], "s"+id); err != nil {
			t.Fatal(err)
		}
		m.Schedule(at(10+i), obs)
		if id != "d" {
			if err := m.ActionDone(at(20+i), id, Done{Index: 0, PeakBytes: 100 * mib, AfterBytes: 50 * mib}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return m
}

// TestIdleVictimChoice: which idle attempt a deadlock preempts. Attempts
// a, b, c, d started in that order; a, b and c wait idle, d runs an
// action admitted on a 100 MiB prediction from 10 MiB, now at 40 MiB and
// stuck at the limit: it is short of 70 MiB. The victim is the youngest
// idle attempt holding that (not c with 4 MiB); with none holding it,
// the youngest, if all of them together hold it; if not, no idle victim
// (then d itself, the deadlock being between it and the idle a, older).
// On v2, with the 70 MiB free below memory.max, none: the release lets d
// grow into it.
func TestIdleVictimChoice(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name   string
		b, c   int64 // MiB held by b's and c's sandboxes
		avail  int64
		v2     bool
		victim string
		idle   bool
	}{
		{"the youngest that holds enough", 100, 4, 0, false, "b", true},
		{"none holds enough: the youngest", 68, 4, 0, false, "c", true},
		{"all together hold too little: the running one", 30, 4, 0, false, "d", false},
		{"v2 with room below memory.max: none", 100, 4, 80 * mib, true, "", false},
		{"v2 without: as v1", 100, 4, 20 * mib, true, "b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := idleVictimMachine(t, tc.v2)
			smp := []gate.Sample{{ID: "sa", Footprint: 200 * mib}, {ID: "sb", Footprint: tc.b * mib},
				{ID: "sc", Footprint: tc.c * mib}, {ID: "sd", Footprint: 40 * mib, Blocked: 1}}
			var st Step
			for ms := 100; ms <= 3100; ms += 100 {
				st = m.Sample(at(ms), Observation{Available: tc.avail, Sandboxes: smp, UnderOOM: true, AboveHoldLine: true})
				if st.Hold == HoldPreempt || st.Hold == HoldRelease {
					break
				}
			}
			want := HoldPreempt
			if tc.victim == "" {
				want = HoldRelease
			}
			if st.Hold != want || st.Preempt.Agent != tc.victim || st.Preempt.Idle != tc.idle {
				t.Errorf("hold %v, preempt %+v; want %v of %q (idle %v)", st.Hold, st.Preempt, want, tc.victim, tc.idle)
			}
		})
	}
}

// TestIdleVictimAfterRelease: on v2 an action past its prediction needs
// nothing by stuckNeed, so the first wait at the limit with room below
// memory.max is released. Back at the limit right after, the room it was
// released into is gone: where it took more than half of it (as much
// again would not fit), the next wait preempts as v1 does, an idle
// attempt holding the rest or, with only the first-started one idle, the
// running one; where it took less, or the wait begins long after the
// release, the hold releases again. Attempts as in TestIdleVictimChoice;
// d, admitted on 100 MiB from 10 MiB, holds 150 MiB.
func TestIdleVictimAfterRelease(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name   string
		b      int64         // MiB held by b's sandbox
		avail  int64         // MiB free at the second wait (60 at the first)
		gap    time.Duration // from the release to the second wait
		victim string
		idle   bool
	}{
		{"took 40 of 60 MiB: an idle victim", 100, 20, 200 * time.Millisecond, "b", true},
		{"took 20 of 60 MiB: released again", 100, 40, 200 * time.Millisecond, "", false},
		{"a wait long after: released again", 100, 20, 10 * time.Second, "", false},
		{"only the first-started idle holds memory: the running one", 0, 20, 200 * time.Millisecond, "d", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := idleVictimMachine(t, true)
			smp := []gate.Sample{{ID: "sa", Footprint: 200 * mib}, {ID: "sb", Footprint: tc.b * mib},
				{ID: "sc", Footprint: 4 * mib}, {ID: "sd", Footprint: 150 * mib, Blocked: 1}}
			// wait samples the hold at the limit every 100 ms from ms on,
			// free MiB free, until it preempts or releases.
			wait := func(ms int, free int64) (Step, int) {
				for ; ms <= 100000; ms += 100 {
					st := m.Sample(at(ms), Observation{Available: free * mib, Sandboxes: smp, UnderOOM: true, AboveHoldLine: true})
					if st.Hold == HoldPreempt || st.Hold == HoldRelease {
						return st, ms
					}
				}
				t.Fatal("the hold never ended its wait")
				return Step{}, 0
			}
			st, ms := wait(100, 60)
			if st.Hold != HoldRelease {
				t.Fatalf("first wait: hold %v, preempt %+v; want a release (60 MiB free below memory.max)", st.Hold, st.Preempt)
			}
			// Out of the hold at the release (memory.high lifted), then
			// back at the limit once d has grown.
			gap := int(tc.gap / time.Millisecond)
			if st := m.Sample(at(ms+gap/2), Observation{Available: tc.avail * mib, Sandboxes: smp}); st.Hold != HoldRearm {
				t.Fatalf("after the release: hold %v, want re-armed", st.Hold)
			}
			smp[3].Footprint = (150 + 60 - tc.avail) * mib
			st, _ = wait(ms+gap, tc.avail)
			want := HoldPreempt
			if tc.victim == "" {
				want = HoldRelease
			}
			if st.Hold != want || st.Preempt.Agent != tc.victim || st.Preempt.Idle != tc.idle {
				t.Errorf("second wait: hold %v, preempt %+v; want %v of %q (idle %v)", st.Hold, st.Preempt, want, tc.victim, tc.idle)
			}
		})
	}
}
