package trajectory

import (
	"math"
	"testing"

	"github.com/tenon-dev/tenon/internal/units"
)

func mem(peak, dur, retain float64, bg bool) Action {
	return Action{Class: "x", Mem: &MemProfile{PeakMiB: peak, RampS: dur / 4, HoldS: dur * 3 / 4, RetainMiB: retain, Background: bg}}
}

func TestActionMeasures(t *testing.T) {
	tests := []struct {
		name                string
		a                   Action
		dur, peak, retained float64
	}{
		{"mem profile", mem(100, 8, 10, true), 8, 100, 10},
		{"retain without background is not retained", mem(100, 8, 10, false), 8, 100, 0},
		{"hint background retains", Action{Class: "x", Hints: Hints{Background: true}, Mem: &MemProfile{PeakMiB: 50, RampS: 1, HoldS: 1, RetainMiB: 5}}, 2, 50, 5},
		{"files are retained; retain_s is part of the duration", Action{Class: "x", Mem: &MemProfile{PeakMiB: 50, RampS: 1, HoldS: 1, RetainS: 3, FilesMiB: 7}}, 5, 50, 7},
		{"recorded peak wins when larger", Action{Class: "x", Mem: &MemProfile{PeakMiB: 5, HoldS: 1}, Recorded: &Recorded{DurationS: 9, PeakMiB: 40}}, 1, 40, 0},
		{"run action uses recorded", Action{Class: "x", Run: "true", Recorded: &Recorded{DurationS: 3, PeakMiB: 12}}, 3, 12, 0},
		{"run action without record", Action{Class: "x", Run: "true"}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d, p, r := tt.a.DurationS(), tt.a.PeakMiB(), tt.a.RetainedMiB(); d != tt.dur || p != tt.peak || r != tt.retained {
				t.Errorf("duration %g peak %g retained %g; want %g %g %g", d, p, r, tt.dur, tt.peak, tt.retained)
			}
		})
	}
}

func TestWorkflowMeasures(t *testing.T) {
	w := Workflow{Arrival: 10, Actions: []Action{
		mem(100, 4, 60, true), // footprint 100, then 60 retained
		mem(50, 2, 0, false),  // 60+50 = 110
		mem(80, 2, 40, true),  // 60+80 = 140, then 100 retained
		mem(30, 2, 0, false),  // 100+30 = 130
	}}
	w.Actions[0].Wait, w.Actions[1].Wait, w.Actions[2].Wait, w.Actions[3].Wait = 1, 2, 3, 4
	if got := w.TotalWaitS(); got != 10 {
		t.Errorf("TotalWaitS = %g, want 10", got)
	}
	if got := w.LengthS(); got != 20 {
		t.Errorf("LengthS = %g, want 20", got)
	}
	if got := w.PeakMiB(); got != 100 {
		t.Errorf("PeakMiB = %g, want 100", got)
	}
	if got := w.ProfiledPeakMiB(); got != 140 {
		t.Errorf("ProfiledPeakMiB = %g, want 140", got)
	}
}

func TestLowerBoundAndOversubscription(t *testing.T) {
	// Two workflows of one 1024 MiB action for 10 s each.
	one := func(id string, arrival, wait float64) Workflow {
		return Workflow{ID: id, Arrival: arrival, Actions: []Action{{Wait: wait, Class: "x", Mem: &MemProfile{PeakMiB: 1024, RampS: 2, HoldS: 8}}}}
	}
	tests := []struct {
		name   string
		wfs    []Workflow
		budget int64
		lb     float64
		over   float64
	}{
		{"area dominates", []Workflow{one("a", 0, 1), one("b", 0, 1)}, 1 * units.GiB, 20, 2},
		{"longest workflow dominates", []Workflow{one("a", 0, 30), one("b", 0, 1)}, 1 * units.GiB, 40, 2},
		{"arrival counts", []Workflow{one("a", 25, 1), one("b", 0, 1)}, 4 * units.GiB, 36, 0.5},
		{"no budget: longest only", []Workflow{one("a", 0, 1), one("b", 0, 1)}, 0, 11, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LowerBound(tt.wfs, tt.budget); math.Abs(got-tt.lb) > 1e-9 {
				t.Errorf("LowerBound = %g, want %g", got, tt.lb)
			}
			if got := Oversubscription(tt.wfs, tt.budget); math.Abs(got-tt.over) > 1e-9 {
				t.Errorf("Oversubscription = %g, want %g", got, tt.over)
			}
		})
	}
}
