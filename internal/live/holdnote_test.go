package live

import (
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
)

// TestHoldProgressNoted: a wait under the OOM hold that goes on because
// something counts as progress logs what, once per holdNoteEvery; any
// step with a hold action (a state change, or a preemption) starts the
// count over.
func TestHoldProgressNoted(t *testing.T) {
	clk := clocktest.NewManual(time.Time{})
	var got []controller.Event
	env := controller.Env{Clock: clk, Emit: func(e controller.Event) { got = append(got, e) }}
	m, err := policy.NewMachine(policy.Config{Spec: policy.Spec{Name: "gate", Gate: true}, Budget: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	p := New(m, Options{})
	p.holder = holdDomain{&fakeDomain{}}
	step := func(d time.Duration, st policy.Step) {
		clk.Advance(d)
		p.applyHold(env, st)
	}
	step(0, policy.Step{Hold: policy.HoldBegan})
	for range 25 { // 2.5 s of waiting, each period with progress
		step(100*time.Millisecond, policy.Step{HoldProgress: "cpu sb-1"})
	}
	step(100*time.Millisecond, policy.Step{}) // nothing progressed
	for range 100 {
		step(100*time.Millisecond, policy.Step{HoldProgress: "resting sb-2"})
	}
	step(0, policy.Step{Hold: policy.HoldResolved})
	step(time.Second, policy.Step{HoldProgress: "cpu sb-3"}) // outside any wait the machine reports none; a stray one starts a count
	var notes []string
	for _, e := range got {
		if e.Kind != controller.EventHold {
			t.Fatalf("event %+v", e)
		}
		if e.Reason != "began" && e.Reason != "resolved: memory freed, no kill" {
			notes = append(notes, e.Sandbox+" | "+e.Reason)
		}
	}
	// The first progress came at 0.1 s; 10 s later (10.1 s, the wait's
	// 101st period) sb-2 was the one.
	want := []string{"sb-2 | waiting: progress by resting sb-2"}
	if len(notes) != len(want) || notes[0] != want[0] {
		t.Fatalf("notes %q, want %q", notes, want)
	}
}
