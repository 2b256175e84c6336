package policy

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

func TestAgentSlots(t *testing.T) {
	tests := []struct {
		name string
		in   SlotsInput
		want int
	}{
		{name: "empty node takes one whatever the headroom",
			in: SlotsInput{Headroom: -50 * mib, Need: 100 * mib, Floor: 150 * mib, Reserve: 200 * mib}, want: 1},
		// 924 - 150k >= 100 + 150 + 200 for k = 0..3.
		{name: "floors measured",
			in: SlotsInput{Headroom: 924 * mib, Need: 100 * mib, Floor: 150 * mib, Reserve: 200 * mib, Active: 1}, want: 4},
		{name: "agents waiting at the node take slots first",
			in: SlotsInput{Headroom: 924 * mib, Need: 100 * mib, Floor: 150 * mib, Reserve: 200 * mib, Active: 1, Queued: 3}, want: 1},
		{name: "more waiting than fit",
			in: SlotsInput{Headroom: 924 * mib, Need: 100 * mib, Floor: 150 * mib, Reserve: 200 * mib, Active: 1, Queued: 9}, want: 0},
		{name: "headroom short of peak, floor and reserve",
			in: SlotsInput{Headroom: 449 * mib, Need: 100 * mib, Floor: 150 * mib, Reserve: 200 * mib, Active: 3}, want: 0},
		{name: "exactly one",
			in: SlotsInput{Headroom: 450 * mib, Need: 100 * mib, Floor: 150 * mib, Reserve: 200 * mib, Active: 3}, want: 1},
		// No floor measured: each agent costs the reserve (200 MiB > its
		// 100 MiB peak). The first is free: 924 - 200 = 724, then
		// 724 - 200k >= 100 + 200 + 200 for k = 0, 1.
		{name: "fresh node charges the reserve",
			in: SlotsInput{Headroom: 924 * mib, Need: 100 * mib, Reserve: 200 * mib}, want: 3},
		{name: "nothing known: one at a time",
			in: SlotsInput{Headroom: 900 * mib}, want: 1},
		{name: "nothing known, one running",
			in: SlotsInput{Headroom: 900 * mib, Active: 1}, want: 0},
		{name: "tiny floors are capped",
			in: SlotsInput{Headroom: 1 << 40, Floor: 1, Active: 1}, want: MaxAgentSlots},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := AgentSlots(tc.in); got != tc.want {
				t.Fatalf("AgentSlots(%+v) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

// TestAgentSlotsIsPacing checks AgentSlots against pacing's rule itself:
// AgentMayStart asked agent after agent, each taking its cost from the
// headroom, the queued ones first.
func TestAgentSlotsIsPacing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		in := SlotsInput{Headroom: r.Int64N(4096*mib) - 512*mib, Need: r.Int64N(600 * mib), Floor: r.Int64N(300 * mib),
			Reserve: r.Int64N(512 * mib), Active: r.IntN(3), Queued: r.IntN(4)}
		h, active, n := in.Headroom, in.Active, 0
		if slotCost(in) == 0 {
			in.Floor = 1
		}
		for AgentMayStart(active, 0, gate.Green, func() int64 { return h }, in.Need+slotCost(in), in.Reserve) && n < MaxAgentSlots+in.Queued {
			h -= slotCost(in)
			active++
			n++
		}
		if want := max(n-in.Queued, 0); AgentSlots(in) != want {
			t.Fatalf("AgentSlots(%+v) = %d, pacing starts %d new", in, AgentSlots(in), want)
		}
	}
}

// TestMachineAgentSlots: the slots a machine publishes are the agents its
// own pacing then starts, all of them and no more.
func TestMachineAgentSlots(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "admission", Admission: true, Predictor: PredCurrent},
		Budget: 1 << 30, Model: constPred{peak: 100 * mib}, Margin: 100 * mib, AgentReserve: 200 * mib})
	obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{"sa": 150 * mib}}
	if n, ok := m.AgentSlots(at(0), obs); !ok || n != 3 {
		t.Fatalf("fresh node: AgentSlots = %d, %v; want 3 (each charged the 200 MiB reserve)", n, ok)
	}
	submit(t, m, 0, "a", nil, obs)
	act := &trajectory.Action{Class: "bash", Command: "c"}
	if _, _, err := m.ActionReady(at(1), "a", 0, act, "sa"); err != nil {
		t.Fatal(err)
	}
	if g := m.Schedule(at(2), obs); len(g) != 1 {
		t.Fatalf("a's action not admitted: %+v", g)
	}
	if err := m.ActionDone(at(3), "a", Done{Index: 0, PeakBytes: 150 * mib, AfterBytes: 150 * mib}); err != nil {
		t.Fatal(err)
	}
	// Pacing's headroom 1024 - 100 = 924 MiB, floor 150, first peak 100,
	// reserve 200: four agents (as in TestAgentSlots).
	slots, _ := m.AgentSlots(at(4), obs)
	if slots != 4 {
		t.Fatalf("AgentSlots = %d, want 4", slots)
	}
	// Close pacing (an action waits for admission), queue one agent more
	// than the slots, open it again: pacing starts exactly the slots.
	if _, _, err := m.ActionReady(at(5), "a", 1, act, "sa"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range slots + 1 {
		id := string(rune('b' + i))
		ids = append(ids, id)
		if got := submit(t, m, 6, id, nil, obs); len(got) != 0 {
			t.Fatalf("%s started with pacing closed", id)
		}
	}
	if n, _ := m.AgentSlots(at(7), obs); n != 0 {
		t.Fatalf("AgentSlots with %d agents waiting = %d, want 0", slots+1, n)
	}
	m.CancelAction(at(8), "a")
	if got := m.Pace(at(9), obs); !slices.Equal(got, ids[:slots]) {
		t.Fatalf("Pace started %v, want the %d published slots %v", got, slots, ids[:slots])
	}
	if _, ok := mustMachine(t, Config{Spec: Spec{Name: "eager"}}).AgentSlots(at(0), obs); ok {
		t.Fatal("eager has no pacing, yet published slots")
	}
}

// TestSlotsChargeStartedAgentsTheirPredictedFloor: agents pacing started
// that hold less than the predicted floor (no sandbox yet, here) grow to
// it before long, and the published slots charge them the rest. Without
// that, three fresh agents on a node whose ended agent kept 150 MiB leave
// the 4 slots of an empty node, which it cannot hold once they grow.
func TestSlotsChargeStartedAgentsTheirPredictedFloor(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "admission", Admission: true, Predictor: PredCurrent},
		Budget: 1 << 30, Model: constPred{peak: 100 * mib}, Margin: 100 * mib, AgentReserve: 200 * mib})
	obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{}}
	submit(t, m, 0, "a", nil, obs)
	if _, _, err := m.ActionReady(at(1), "a", 0, &trajectory.Action{Class: "bash", Command: "c"}, "sa"); err != nil {
		t.Fatal(err)
	}
	if g := m.Schedule(at(2), obs); len(g) != 1 {
		t.Fatalf("a's action not admitted: %+v", g)
	}
	if err := m.ActionDone(at(3), "a", Done{Index: 0, PeakBytes: 150 * mib, AfterBytes: 150 * mib}); err != nil {
		t.Fatal(err)
	}
	m.AgentEnd(at(4), "a", obs)
	// An empty node: 924 MiB of headroom, floor 150, need 100 + 150 + 200
	// reserve: 4 slots (as in TestAgentSlots).
	if n, _ := m.AgentSlots(at(5), obs); n != 4 {
		t.Fatalf("AgentSlots on the empty node = %d, want 4", n)
	}
	// Pacing starts b (the node is empty), c and d: 924, 774, 624 >= 450.
	var started []string
	for _, id := range []string{"b", "c", "d"} {
		started = append(started, submit(t, m, 10, id, nil, obs)...)
	}
	if !slices.Equal(started, []string{"b", "c", "d"}) {
		t.Fatalf("started %v, want b, c, d", started)
	}
	// None holds memory yet; each owes its 150 MiB: 924 - 450 = 474 MiB,
	// one agent more (474 >= 450, then 324 < 450).
	if n, _ := m.AgentSlots(at(20), obs); n != 1 {
		t.Fatalf("AgentSlots = %d, want 1 (three fresh agents owe their 150 MiB floors)", n)
	}
	// Pacing itself reads them as it always did: it would start 4 more.
	if got := m.paceHeadroom(obs, 0); got != 924*mib {
		t.Fatalf("pacing's headroom %d MiB, want 924", got/mib)
	}
}
