package policy

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// TestHoldRestSignal steps the resting-at-peak signal alone over one
// sandbox's footprints, memory stall totals and blocked threads, one
// sample per 100 ms period, with a wait beginning at 500 ms: with the
// threads' states known (the process backend) and without (docker).
func TestHoldRestSignal(t *testing.T) {
	const kib, p = 1 << 10, 96 << 10 // p: a 96 MiB peak, in KiB
	const period = 100 * time.Millisecond
	since := at(500)
	for _, tc := range []struct {
		name  string
		mem   []int64 // KiB at 0, 100, ... ms; the wait begins at the sixth
		stall []int   // memory stall totals, ms (nil: 0, as on v1)
		block int     // threads in D state at the last sample; -1: the backend cannot tell
		procs int     // tasks at the last sample (0: not said)
		// frozen at the last sample: 0 not, 1 by the policy (the gate),
		// 2 though the policy let it run (residency's page-in deferred)
		frozen      int
		want, stuck bool // resting, and stalled, at the last sample
	}{
		{name: "known: flat for two periods, nothing blocked: resting", mem: []int64{10, 30, 60, p, p, p, p, p}, want: true},
		{name: "known: reached its peak as the wait began, flat since: resting", mem: []int64{10, 30, 60, 80, 90, p, p, p, p}, want: true},
		{name: "known: reached its peak a period ago: not yet", mem: []int64{10, 30, 60, 80, 90, p, p, p + 8, p + 8}},
		{name: "known: a thread in D state (v1's OOM wait): not resting", mem: []int64{p, p, p, p, p, p, p, p}, block: 1, stuck: true},
		{name: "known: frozen by the gate: neither resting nor stuck", mem: []int64{p, p, p, p, p, p, p, p}, frozen: 1},
		{name: "known: frozen by the gate, a thread in the OOM wait: stuck", mem: []int64{p, p, p, p, p, p, p, p}, frozen: 1, block: 1, stuck: true},
		{name: "known: frozen though let run (page-in deferred): stuck", mem: []int64{p, p, p, p, p, p, p, p}, frozen: 2, stuck: true},
		{name: "unknown: frozen by the gate: neither resting nor stuck", mem: []int64{10, p / 2, p, p, p, p, p, p}, block: -1, frozen: 1},
		{name: "known: flat, nothing blocked, an action process left: resting", mem: []int64{p, p, p, p, p, p, p, p}, procs: 2, want: true},
		{name: "known: flat, nothing blocked, its init alone (the action ended, its result on the way): not resting", mem: []int64{p, p, p, p, p, p, p, p}, procs: 1},
		{name: "unknown: flat since long before the wait, its init alone: not resting", mem: []int64{p, p, p, p, p, p, p, p}, block: -1, procs: 1},
		{name: "known: stalled on memory (v2 pressure): not resting", mem: []int64{p, p, p, p, p, p, p, p}, stall: []int{0, 0, 0, 0, 0, 5, 10, 20}, stuck: true},
		{name: "known: stalled before, not since the last sample: resting", mem: []int64{p, p, p, p, p, p, p, p}, stall: []int{0, 0, 0, 0, 5, 20, 20, 20}, want: true},
		{name: "known: grows during the wait: not resting", mem: []int64{p, p, p, p, p, p, p + 100, p + 200}},
		{name: "unknown: flat since long before the wait: resting", mem: []int64{10, p / 2, p, p, p, p, p, p}, block: -1, want: true},
		{name: "unknown: grew into the limit the period before the wait: stuck", mem: []int64{10, 30, 60, 80, p, p, p, p, p, p}, block: -1},
		{name: "unknown: grew two periods before the wait: stuck", mem: []int64{10, 30, 60, p, p, p, p, p}, block: -1},
		{name: "unknown: grew three periods before the wait: resting", mem: []int64{10, 60, p, p, p, p, p, p, p}, block: -1, want: true},
		{name: "unknown: creeps during the wait (a throttled v2 allocator): not resting", mem: []int64{p, p, p, p, p, p + 2, p + 4, p + 6}, block: -1},
		{name: "unknown: first seen in the wait, flat: resting", mem: []int64{0, 0, 0, 0, 0, 0, p, p}, block: -1, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r holdRest
			for i, m := range tc.mem {
				now := at(100 * i)
				var smp []gate.Sample
				if m > 0 {
					s := gate.Sample{ID: "a", Footprint: m * kib}
					if tc.stall != nil {
						s.MemStall = time.Duration(tc.stall[i]) * time.Millisecond
					}
					if tc.block < 0 || i == len(tc.mem)-1 {
						s.Blocked = tc.block
					}
					if i == len(tc.mem)-1 {
						s.Procs, s.Frozen = tc.procs, tc.frozen > 0
					}
					smp = append(smp, s)
				}
				froze := func(string) bool { return tc.frozen == 1 }
				r.observe(now, smp, !now.Before(since.Add(period)), froze)
			}
			if got := r.resting("a", since, period); got != tc.want {
				t.Fatalf("resting = %v, want %v", got, tc.want)
			}
			if got := r.seen["a"].stalled; got != tc.stuck {
				t.Fatalf("stalled = %v, want %v", got, tc.stuck)
			}
		})
	}
}

// TestHoldWaitsForResting: under the gate alone with a 1 s hold, sandbox
// "a" ran up to its peak and sleeps there (no CPU) while "b" grew into the
// limit and waits (a thread in D state); the hold does not release while
// a's action runs, and releases a timeout after a last rested, with b
// still waiting. Without the signal (CPU alone) it released at 1.6 s.
// Whether a's action is over (ActionDone) or only its processes are
// (nothing but its init left, its result not yet received: at the v1
// budget its write can wait for memory) makes no difference.
func TestHoldWaitsForResting(t *testing.T) {
	for _, ended := range []bool{false, true} {
		t.Run(fmt.Sprintf("result pending %v", ended), func(t *testing.T) { holdWaitsForResting(t, ended) })
	}
}

func holdWaitsForResting(t *testing.T, ended bool) {
	const mib = 1 << 20
	m := mustMachine(t, Config{Spec: Spec{Name: "gate", Gate: true}, Budget: 1 << 30, Hold: time.Second})
	for _, id := range []string{"a", "b"} {
		submit(t, m, 0, id, nil, &fakeObs{})
		if _, ok, err := m.ActionReady(at(0), id, 0, &wfPeak(id, 10).Actions[0], "sb-"+id); err != nil || !ok {
			t.Fatalf("ActionReady %s: %v %v", id, ok, err)
		}
	}
	smp := func(a, b int64, under, aEnded bool) []gate.Sample {
		s := []gate.Sample{{ID: "sb-a", Footprint: a * mib, Procs: 2}, {ID: "sb-b", Footprint: b * mib, Procs: 2}}
		if under {
			s[1].Blocked = 1 // b's allocating thread sleeps in the OOM wait
		}
		if aEnded {
			s[0].Procs = 1
		}
		return s
	}
	steps := []struct {
		ms    int
		a, b  int64
		under bool
		done  bool // a's action ends before this sample
		want  HoldAction
	}{
		{0, 10, 10, false, false, HoldNone},
		{100, 96, 10, false, false, HoldNone},
		{200, 96, 10, false, false, HoldNone},
		{300, 96, 10, false, false, HoldNone},
		{400, 96, 50, false, false, HoldNone},
		{500, 96, 96, true, false, HoldBegan},
		{1600, 96, 96, true, false, HoldNone}, // a rests at its peak: progress
		{3000, 96, 96, true, false, HoldNone},
		{3100, 96, 96, true, true, HoldNone}, // a's action ended: nothing progresses from here
		{3950, 96, 96, true, false, HoldNone},
		{4000, 96, 96, true, false, HoldRelease}, // a timeout after a last rested
	}
	aEnded := false
	for i, s := range steps {
		if s.done {
			if ended {
				aEnded = true
			} else if err := m.ActionDone(at(s.ms), "a", Done{Index: 0}); err != nil {
				t.Fatal(err)
			}
		}
		st := m.Sample(at(s.ms), Observation{Available: 1 << 29, Sandboxes: smp(s.a, s.b, s.under, aEnded), UnderOOM: s.under})
		if st.Hold != s.want {
			t.Fatalf("step %d (t=%dms): %v, want %v", i, s.ms, st.Hold, s.want)
		}
		by := "resting sb-a"
		if s.ms < 1600 || s.ms >= 3100 {
			by = ""
		}
		if s.ms >= 1600 && st.HoldProgress != by {
			t.Errorf("step %d (t=%dms): progress %q, want %q", i, s.ms, st.HoldProgress, by)
		}
	}
}

// TestHoldThawsResting: while tasks wait under the hold, the gate's
// denial of a sandbox that rested at its peak before it was denied is
// lifted (frozen since, as its sample says); one that grew until it was
// denied, one running no action, one the freezing hold holds and one with
// a blocked thread stay denied.
func TestHoldThawsResting(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name    string
		grewMs  int  // a's last growth
		blocked int  // a's threads in D state
		held    bool // the freezing hold holds a
		action  bool // a runs an action
		want    bool // a's denial lifted
	}{
		{name: "rested before it was denied: lifted", grewMs: 100, action: true, want: true},
		{name: "grew until it was denied: kept", grewMs: 400, action: true},
		{name: "runs no action: kept", grewMs: 100},
		{name: "held by the freezing hold: kept", grewMs: 100, held: true, action: true},
		{name: "a blocked thread: kept", grewMs: 100, blocked: 1, action: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMachine(t, Config{Spec: Spec{Name: "gate", Gate: true}, Budget: 1 << 30, Hold: time.Second})
			m.SetHoldFreeze()
			submit(t, m, 0, "a", nil, &fakeObs{})
			if tc.action {
				if _, ok, err := m.ActionReady(at(0), "a", 0, &wfPeak("a", 10).Actions[0], "sb-a"); err != nil || !ok {
					t.Fatalf("ActionReady: %v %v", ok, err)
				}
			}
			for ms := 0; ms <= 500; ms += 100 {
				mem := int64(10)
				if ms >= tc.grewMs {
					mem = 96
				}
				s := gate.Sample{ID: "sb-a", Footprint: mem * mib}
				if ms == 500 {
					// Denied at 400 ms: frozen since, its threads in the
					// freezer (not counted as blocked).
					s.Blocked, s.Frozen = tc.blocked, true
					m.frozen = []string{"sb-a"}
				}
				m.rest.observe(at(ms), []gate.Sample{s}, false, m.froze)
			}
			if tc.held {
				m.freeze.held = []string{"sb-a"}
			}
			m.deniedAt = map[string]time.Time{"sb-a": at(400)}
			d := gate.Decision{Denied: []string{"sb-a"}, Sandboxes: []gate.SandboxDecision{{ID: "sb-a"}}}
			n := m.thawResting(&d)
			if got := d.Sandboxes[0].Allowed; got != tc.want || (n == 1) != tc.want || slices.Contains(d.Denied, "sb-a") == tc.want {
				t.Fatalf("allowed %v (lifted %d, denied %v, permitted %v), want %v", got, n, d.Denied, d.Permitted, tc.want)
			}
			if tc.want {
				d = gate.Decision{Denied: []string{"sb-a"}, Sandboxes: []gate.SandboxDecision{{ID: "sb-a"}}}
				if n := m.thawResting(&d); n != 0 || !d.Sandboxes[0].Allowed {
					t.Fatalf("the next period: lifted %d (want it counted once), allowed %v", n, d.Sandboxes[0].Allowed)
				}
			}
		})
	}
}

// TestAllowEnded: the gate's denial of a sandbox with nothing but its
// init left is lifted (its executor must send the ended action's result);
// one whose action still has a process, one whose task count is not known
// and one the freezing hold holds stay denied.
func TestAllowEnded(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "gate", Gate: true}, Budget: 1 << 30, Hold: time.Second})
	m.SetHoldFreeze()
	m.freeze.held = []string{"held"}
	ids := []string{"ended", "running", "unknown", "held"}
	d := gate.Decision{Denied: slices.Clone(ids)}
	for _, id := range ids {
		d.Sandboxes = append(d.Sandboxes, gate.SandboxDecision{ID: id})
	}
	m.allowEnded(&d, []gate.Sample{{ID: "ended", Procs: 1}, {ID: "running", Procs: 2}, {ID: "unknown"}, {ID: "held", Procs: 1}})
	if !slices.Equal(d.Permitted, []string{"ended"}) || !slices.Equal(d.Denied, []string{"running", "unknown", "held"}) || !d.Sandboxes[0].Allowed {
		t.Fatalf("permitted %v, denied %v (ended allowed %v); want only the ended sandbox lifted", d.Permitted, d.Denied, d.Sandboxes[0].Allowed)
	}
}
