package policy

import (
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// rollbackPair is a tenon machine with the hold (3 s) on a 1 GiB budget,
// agents a and b started in that order in sandboxes sa and sb (10 MiB
// each), each with its first action admitted at a reservation of 50 MiB;
// preempt and rollback say whether the host preempts attempts and rolls
// actions back.
func rollbackPair(t *testing.T, preempt, rollback bool) (*Machine, *fakeObs) {
	t.Helper()
	const mib = 1 << 20
	m := mustMachine(t, Config{Spec: Spec{Name: "tenon", Admission: true, Gate: true, Predictor: PredCurrent},
		Budget: 1 << 30, Model: constPred{peak: 50 * mib}, Margin: 100 * mib, Hold: 3 * time.Second})
	if preempt {
		m.SetHoldPreempt()
	}
	if rollback {
		m.SetHoldRollback()
	}
	obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{"sa": 10 * mib, "sb": 10 * mib}}
	for i, id := range []string{"a", "b"} {
		if got := submit(t, m, i, id, nil, obs); len(got) != 1 {
			t.Fatalf("%s did not start: %v", id, got)
		}
	}
	for _, id := range []string{"a", "b"} {
		if _, _, err := m.ActionReady(at(10), id, 0, &m.agents[id].wf.Actions[0], "s"+id); err != nil {
			t.Fatal(err)
		}
	}
	if g := m.Schedule(at(10), obs); len(g) != 2 {
		t.Fatalf("admitted %v, want both", g)
	}
	return m, obs
}

// TestHoldRollback: two admitted actions, both reserved 50 MiB; a grew to
// 600 MiB and is stuck at the limit under the hold, b stays within its
// reservation and uses CPU (progress, so the hold neither releases nor
// preempts). With SetHoldRollback the hold rolls a back once the wait has
// lasted its timeout, not before; without it, never.
func TestHoldRollback(t *testing.T) {
	const mib = 1 << 20
	for _, on := range []bool{false, true} {
		m, obs := rollbackPair(t, false, on)
		var got []string
		for ms := 100; ms <= 4000; ms += 100 {
			st := m.Sample(at(ms), Observation{Available: 0, UnderOOM: true, Sandboxes: []gate.Sample{
				{ID: "sa", Footprint: 600 * mib, CPU: time.Second, Blocked: 1},
				{ID: "sb", Footprint: 40 * mib, CPU: time.Duration(ms) * time.Millisecond},
			}})
			if st.Hold == HoldRelease || st.Hold == HoldPreempt {
				t.Fatalf("on=%v %dms: hold %v, want it waiting", on, ms, st.Hold)
			}
			if st.Rollback.Agent != "" {
				if ms < 3000 {
					t.Fatalf("on=%v: rolled back %s at %dms, before the hold's timeout", on, st.Rollback.Agent, ms)
				}
				got = append(got, st.Rollback.Agent)
			}
		}
		if on {
			// The host killed a: it ends OOM-killed and runs again, admitted
			// on what it reached, and grows far past that too. An action is
			// rolled back once an attempt: the rerun waits as before.
			if err := m.ActionDone(at(4000), "a", Done{Index: 0, PeakBytes: 600 * mib, OOM: true}); err != nil {
				t.Fatal(err)
			}
			obs.avail = 1 << 30
			if _, _, err := m.ActionReady(at(4000), "a", 0, &m.agents["a"].wf.Actions[0], "sa"); err != nil {
				t.Fatal(err)
			}
			if g := m.Schedule(at(4000), obs); len(g) != 1 {
				t.Fatalf("rerun admitted %v, want a", g)
			}
			for ms := 4100; ms <= 9000; ms += 100 {
				st := m.Sample(at(ms), Observation{Available: 0, UnderOOM: true, Sandboxes: []gate.Sample{
					{ID: "sa", Footprint: 1000 * mib, CPU: time.Second, Blocked: 1},
					{ID: "sb", Footprint: 40 * mib, CPU: time.Duration(ms) * time.Millisecond},
				}})
				if st.Rollback.Agent != "" {
					t.Fatalf("%dms: rolled back %s again", ms, st.Rollback.Agent)
				}
			}
		}
		switch {
		case !on && len(got) > 0:
			t.Fatalf("without SetHoldRollback: rolled back %v", got)
		case on && (len(got) != 1 || got[0] != "a"):
			t.Fatalf("rolled back %v, want a (past its reservation) once (its action has not ended), not b", got)
		}
	}
}

// TestHoldRollbackDeadlock: a deadlock (both sandboxes stuck at the limit,
// neither uses CPU) where a, the first-started attempt, grew far past its
// reservation and b stays within its own. The preemption's victim is b
// (the youngest stuck attempt; the first-started never is). With
// SetHoldRollback the hold rolls a back instead at the timeout (losing
// a's action, not b's attempt) and preempts nothing then; once a is
// rolled back and the domain is still stuck a timeout later, b is
// preempted as before. Without it, b is preempted at the timeout.
func TestHoldRollbackDeadlock(t *testing.T) {
	const mib = 1 << 20
	for _, on := range []bool{false, true} {
		m, _ := rollbackPair(t, true, on)
		type ev struct {
			ms           int
			back, preemp string
		}
		var got []ev
		end := 6500
		if !on {
			end = 6000 // then, b preempted and a the first-started, the hold releases
		}
		for ms := 100; ms <= end; ms += 100 {
			st := m.Sample(at(ms), Observation{Available: 0, UnderOOM: true, Sandboxes: []gate.Sample{
				{ID: "sa", Footprint: 600 * mib, CPU: time.Second, Blocked: 1},
				{ID: "sb", Footprint: 40 * mib, CPU: time.Second, Blocked: 1},
			}})
			if st.Hold == HoldRelease {
				t.Fatalf("on=%v %dms: released with a victim to take", on, ms)
			}
			if st.Rollback.Agent != "" || st.Preempt.Agent != "" {
				got = append(got, ev{ms, st.Rollback.Agent, st.Preempt.Agent})
			}
		}
		want := []ev{{3100, "", "b"}}
		if on {
			want = []ev{{3100, "a", ""}, {6100, "", "b"}}
		}
		if len(got) != len(want) {
			t.Fatalf("on=%v: rollbacks and preemptions %v, want %v", on, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("on=%v: rollbacks and preemptions %v, want %v", on, got, want)
			}
		}
		if p := m.HoldStats().Preempted; p != uint64(1) {
			t.Fatalf("on=%v: %d preempted counted, want 1", on, p)
		}
	}
}
