package policy

import (
	"reflect"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// notPlentiful is a free share below PlentifulShare: green decides by
// amortization.
const notPlentiful = 0.3

func TestDecideTickByTick(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, ws int64, restartable bool, wait time.Duration) IdleSandbox {
		return IdleSandbox{ID: id, WorkingSet: ws, Restartable: restartable, IdleSince: t0,
			PredictedWait: wait, TeardownCost: time.Second, RematCost: 2 * time.Second}
	}
	idle := []IdleSandbox{
		mk("small", 100<<20, true, 10*time.Second),
		mk("big", 900<<20, true, 4*time.Second),
		mk("pinned", 2000<<20, false, time.Minute),
		mk("mid", 400<<20, true, 0), // wait unknown
		mk("tie", 400<<20, true, 2*time.Second),
	}
	tests := []struct {
		name string
		at   time.Duration // since t0
		p    gate.Pressure
		cfg  ResidencyConfig
		want []string
		free float64 // 0: notPlentiful
	}{
		{"green t=0: waits ≥ 3s amortize", 0, gate.Green, ResidencyConfig{}, []string{"big", "small"}, 0},
		{"green t=1s: big has 3s left", time.Second, gate.Green, ResidencyConfig{}, []string{"big", "small"}, 0},
		{"green t=1.5s: big has 2.5s left", 1500 * time.Millisecond, gate.Green, ResidencyConfig{}, []string{"small"}, 0},
		{"green t=7.5s: small has 2.5s left", 7500 * time.Millisecond, gate.Green, ResidencyConfig{}, nil, 0},
		{"green t=20s: every wait is over", 20 * time.Second, gate.Green, ResidencyConfig{}, nil, 0},
		{"green amortize 3x", 0, gate.Green, ResidencyConfig{GreenAmortize: 3}, []string{"small"}, 0},
		{"green min working set", 0, gate.Green, ResidencyConfig{GreenMinWorkingSet: 200 << 20}, []string{"big"}, 0},
		{"yellow t=0: waits ≥ 3s amortize, the unknown one goes", 0, gate.Yellow, ResidencyConfig{}, []string{"big", "mid", "small"}, 0},
		{"yellow t=20s: only the unknown wait", 20 * time.Second, gate.Yellow, ResidencyConfig{}, []string{"mid"}, 0},
		{"yellow ignores green's min working set", 0, gate.Yellow, ResidencyConfig{GreenMinWorkingSet: 200 << 20}, []string{"big", "mid", "small"}, 0},
		{"red", 0, gate.Red, ResidencyConfig{}, []string{"big", "mid", "tie", "small"}, 0},
		{"red always resident", 0, gate.Red, ResidencyConfig{AlwaysResident: true}, nil, 0},
		{"green always resident", 0, gate.Green, ResidencyConfig{AlwaysResident: true}, nil, 0},
		{"green, half the budget free: all stay", 0, gate.Green, ResidencyConfig{}, nil, 0.5},
		{"green, free unknown: waits amortize", 0, gate.Green, ResidencyConfig{}, []string{"big", "small"}, -1},
		{"green, 90 % free, plentiful at 95 %", 0, gate.Green, ResidencyConfig{Plentiful: 0.95}, []string{"big", "small"}, 0.9},
		{"green, all free, plentiful rule off", 0, gate.Green, ResidencyConfig{Plentiful: -1}, []string{"big", "small"}, 1},
		{"yellow amortizes whatever is free", 0, gate.Yellow, ResidencyConfig{}, []string{"big", "mid", "small"}, 0.9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			free := tc.free
			if free == 0 {
				free = notPlentiful
			}
			got := decisionIDs(DecideReclaim(t0.Add(tc.at), tc.p, free, -1, idle, tc.cfg))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decide = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMayRematerialize(t *testing.T) {
	tests := []struct {
		p          gate.Pressure
		predictive bool
		want       bool
	}{
		{gate.Green, true, true}, {gate.Green, false, true},
		{gate.Yellow, true, false}, {gate.Yellow, false, true},
		{gate.Red, true, false}, {gate.Red, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.p.String(), func(t *testing.T) {
			if got := MayRematerialize(tc.p, tc.predictive); got != tc.want {
				t.Errorf("MayRematerialize(%v, predictive=%v) = %v, want %v", tc.p, tc.predictive, got, tc.want)
			}
		})
	}
}

// TestDecidePageOut checks the page-out tier: sandboxes that are not
// restart-safe are paged out outside green when the tier is on, a
// restart-safe one is paged out instead of torn down only when that frees
// more per second of delay, paged-out and tiny ones are left alone, and
// green amortizes the page-in.
func TestDecidePageOut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	idle := []IdleSandbox{
		{ID: "pinned", WorkingSet: 200 << 20, PageFrees: 130 << 20, PageInCost: 400 * time.Millisecond, IdleSince: t0, PredictedWait: 10 * time.Second},
		{ID: "paged", WorkingSet: 70 << 20, PagedOut: true, PageFrees: 40 << 20, PageInCost: 100 * time.Millisecond, IdleSince: t0},
		{ID: "tiny", WorkingSet: 1 << 20, PageFrees: 700 << 10, PageInCost: time.Millisecond, IdleSince: t0},
		// Restart-safe with a long predicted wait: torn down, as the
		// wait pays for it, though a page-out is cheaper per byte.
		{ID: "longwait", WorkingSet: 40 << 20, Restartable: true, TeardownCost: 250 * time.Millisecond, RematCost: 250 * time.Millisecond,
			PageFrees: 27 << 20, PageInCost: 50 * time.Millisecond, IdleSince: t0, PredictedWait: 30 * time.Second},
		// Restart-safe with a process backend's idle floor: a page-out
		// frees less, but per second of the way back far more.
		{ID: "floor", WorkingSet: 5 << 20, Restartable: true, TeardownCost: 250 * time.Millisecond, RematCost: 250 * time.Millisecond,
			PageFrees: 3400 << 10, PageInCost: 20 * time.Millisecond, IdleSince: t0},
		// Restart-safe and slow to rematerialize: page-out frees 90 MiB per
		// 0.1 s, teardown 100 MiB per 3 s.
		{ID: "slowremat", WorkingSet: 100 << 20, Restartable: true, TeardownCost: time.Second, RematCost: 2 * time.Second,
			PageFrees: 90 << 20, PageInCost: 100 * time.Millisecond, IdleSince: t0},
		// Restart-safe and quick: teardown wins.
		{ID: "quick", WorkingSet: 50 << 20, Restartable: true, TeardownCost: 10 * time.Millisecond, RematCost: 10 * time.Millisecond,
			PageFrees: 20 << 20, PageInCost: 100 * time.Millisecond, IdleSince: t0},
		// Waits for admission (or is frozen) long enough: paged out in red
		// only, never torn down; one stalled briefly is left alone.
		{ID: "queued", WorkingSet: 30 << 20, Restartable: true, Stalled: 2 * time.Second, TeardownCost: time.Millisecond,
			PageFrees: 10 << 20, PageInCost: 20 * time.Millisecond, IdleSince: t0, PredictedWait: time.Hour},
		{ID: "frozen briefly", WorkingSet: 300 << 20, Stalled: 300 * time.Millisecond,
			PageFrees: 200 << 20, PageInCost: 20 * time.Millisecond, IdleSince: t0, PredictedWait: time.Hour},
		// Stalled past Stall but not as long as its page-in would take
		// (3 GiB at 500 MiB/s): left alone, as a page-out that the gate's
		// next thaw undoes costs more than waiting did.
		{ID: "frozen giant", WorkingSet: 3 << 30, Stalled: 2 * time.Second,
			PageFrees: 2 << 30, PageInCost: 6 * time.Second, IdleSince: t0, PredictedWait: time.Hour},
	}
	type pick struct {
		ID   string
		Kind ReclaimKind
	}
	picks := func(ds []ReclaimDecision) []pick {
		var out []pick
		for _, d := range ds {
			out = append(out, pick{d.ID, d.Kind})
		}
		return out
	}
	tests := []struct {
		name string
		p    gate.Pressure
		cfg  ResidencyConfig
		want []pick
	}{
		{"tier off: teardowns only", gate.Red, ResidencyConfig{},
			[]pick{{"slowremat", ReclaimTeardown}, {"quick", ReclaimTeardown}, {"longwait", ReclaimTeardown}, {"floor", ReclaimTeardown}}},
		{"tier on, red", gate.Red, ResidencyConfig{PageOut: true},
			[]pick{{"pinned", ReclaimPageOut}, {"slowremat", ReclaimPageOut}, {"quick", ReclaimTeardown}, {"longwait", ReclaimTeardown}, {"queued", ReclaimPageOut}, {"floor", ReclaimPageOut}}},
		{"tier on, min page-out 100 MiB", gate.Yellow, ResidencyConfig{PageOut: true, MinPageOut: 100 << 20},
			[]pick{{"pinned", ReclaimPageOut}, {"slowremat", ReclaimTeardown}, {"quick", ReclaimTeardown}, {"longwait", ReclaimTeardown}, {"floor", ReclaimTeardown}}},
		{"tier on, min page-out 4 MiB", gate.Red, ResidencyConfig{PageOut: true, MinPageOut: 4 << 20},
			[]pick{{"pinned", ReclaimPageOut}, {"slowremat", ReclaimPageOut}, {"quick", ReclaimTeardown}, {"longwait", ReclaimTeardown}, {"queued", ReclaimPageOut}, {"floor", ReclaimTeardown}}},
		{"tier on, green: only the known long wait amortizes", gate.Green, ResidencyConfig{PageOut: true},
			[]pick{{"pinned", ReclaimPageOut}, {"longwait", ReclaimTeardown}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := picks(DecideReclaim(t0.Add(time.Second), tc.p, notPlentiful, -1, idle, tc.cfg))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DecideReclaim = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDecideKindByWait: a restart-safe sandbox that can also be paged out
// is torn down while its remaining predicted wait pays for the teardown,
// and paged out (the quicker way back) once it does not.
func TestDecideKindByWait(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := IdleSandbox{ID: "a", WorkingSet: 40 << 20, Restartable: true, TeardownCost: 250 * time.Millisecond,
		RematCost: 250 * time.Millisecond, PageFrees: 27 << 20, PageInCost: 50 * time.Millisecond,
		IdleSince: t0, PredictedWait: 2 * time.Second}
	for _, tc := range []struct {
		at   time.Duration // since IdleSince
		wait time.Duration // PredictedWait
		want ReclaimKind
	}{
		{0, 2 * time.Second, ReclaimTeardown},
		{1500 * time.Millisecond, 2 * time.Second, ReclaimTeardown}, // 0.5 s left: just pays
		{1600 * time.Millisecond, 2 * time.Second, ReclaimPageOut},
		{3 * time.Second, 2 * time.Second, ReclaimPageOut}, // past its prediction
		{0, 0, ReclaimPageOut},                             // wait unknown
	} {
		s.PredictedWait = tc.wait
		ds := DecideReclaim(t0.Add(tc.at), gate.Red, notPlentiful, -1, []IdleSandbox{s}, ResidencyConfig{PageOut: true})
		if len(ds) != 1 || ds[0].Kind != tc.want {
			t.Errorf("%v into a predicted %v wait: %+v, want a %v", tc.at, tc.wait, ds, tc.want)
		}
	}
}

func TestReclaimPressure(t *testing.T) {
	for _, tc := range []struct {
		p       gate.Pressure
		waiting int
		pageOut bool
		want    gate.Pressure
	}{
		{gate.Green, 0, true, gate.Green}, {gate.Green, 3, true, gate.Green},
		{gate.Yellow, 0, true, gate.Yellow}, {gate.Yellow, 1, true, gate.Red},
		{gate.Yellow, 1, false, gate.Yellow},
		{gate.Red, 0, true, gate.Red}, {gate.Red, 2, false, gate.Red},
	} {
		if got := ReclaimPressure(tc.p, tc.waiting, tc.pageOut); got != tc.want {
			t.Errorf("ReclaimPressure(%v, %d, pageOut %v) = %v, want %v", tc.p, tc.waiting, tc.pageOut, got, tc.want)
		}
	}
}

// decisionIDs is the ids of ds, in order.
func decisionIDs(ds []ReclaimDecision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// TestDecideNeed checks that the pressure reclaims only what need asks:
// the reclaims whose wait amortizes go whatever need is and count toward
// it, the others cheapest per byte first (bytes freed per second of the
// way back) until their frees cover need; an unknown need (negative)
// reclaims every candidate.
func TestDecideNeed(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	idle := []IdleSandbox{
		// Wait unknown; teardowns of 1 s each way: 5 MiB/s and 100 MiB/s.
		{ID: "small-td", WorkingSet: 10 << 20, Restartable: true, TeardownCost: time.Second, RematCost: time.Second, IdleSince: t0},
		{ID: "big-td", WorkingSet: 200 << 20, Restartable: true, TeardownCost: time.Second, RematCost: time.Second, IdleSince: t0},
		// Page-outs: 60 MiB for 0.1 s (600 MiB/s), 30 MiB for 0.1 s.
		{ID: "page", WorkingSet: 90 << 20, PageFrees: 60 << 20, PageInCost: 100 * time.Millisecond, IdleSince: t0},
		{ID: "page-half", WorkingSet: 45 << 20, PageFrees: 30 << 20, PageInCost: 100 * time.Millisecond, IdleSince: t0},
		// A known wait of a minute amortizes its page-out (8 MiB).
		{ID: "long-wait", WorkingSet: 12 << 20, PageFrees: 8 << 20, PageInCost: 10 * time.Millisecond, IdleSince: t0, PredictedWait: time.Minute},
	}
	cfg := ResidencyConfig{PageOut: true}
	tests := []struct {
		name string
		p    gate.Pressure
		need int64
		want []string // in decision order: decreasing frees
	}{
		{"red, need unknown: every one", gate.Red, -1, []string{"big-td", "page", "page-half", "small-td", "long-wait"}},
		{"red, need 0: only what amortizes", gate.Red, 0, []string{"long-wait"}},
		{"red, the amortized frees cover the need", gate.Red, 8 << 20, []string{"long-wait"}},
		{"red, need 50 MiB: the cheapest per byte", gate.Red, 50 << 20, []string{"page", "long-wait"}},
		{"red, need 70 MiB: the two page-outs", gate.Red, 70 << 20, []string{"page", "page-half", "long-wait"}},
		{"red, need 100 MiB: then the best teardown", gate.Red, 100 << 20, []string{"big-td", "page", "page-half", "long-wait"}},
		{"red, need 1 GiB: every one", gate.Red, 1 << 30, []string{"big-td", "page", "page-half", "small-td", "long-wait"}},
		{"yellow, need 50 MiB: unknown waits only, cheapest first", gate.Yellow, 50 << 20, []string{"page", "long-wait"}},
		{"green: need does not matter", gate.Green, 1 << 30, []string{"long-wait"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decisionIDs(DecideReclaim(t0.Add(time.Second), tc.p, notPlentiful, tc.need, idle, cfg))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DecideReclaim(need %d MiB) = %v, want %v", tc.need>>20, got, tc.want)
			}
		})
	}
}
