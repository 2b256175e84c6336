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
		name                      string
		a                         Action
		dur, peak, retained, area float64
	}{
		{"mem profile", mem(100, 8, 10, true), 8, 100, 10, 700},
		{"retain without background is not retained", mem(100, 8, 10, false), 8, 100, 0, 700},
		{"hint background retains", Action{Class: "x", Hints: Hints{Background: true}, Mem: &MemProfile{PeakMiB: 50, RampS: 1, HoldS: 1, RetainMiB: 5}}, 2, 50, 5, 75},
		{"files are retained; retain_s is part of the duration", Action{Class: "x", Mem: &MemProfile{PeakMiB: 50, RampS: 1, HoldS: 1, RetainS: 3, FilesMiB: 7}}, 5, 50, 7, 75},
		{"the retain phase has its area", Action{Class: "x", Mem: &MemProfile{PeakMiB: 100, RampS: 2, HoldS: 3, RetainMiB: 10, RetainS: 4}}, 9, 100, 0, 100 + 300 + 40},
		{"recorded peak wins when larger; the profile's area", Action{Class: "x", Mem: &MemProfile{PeakMiB: 5, HoldS: 1}, Recorded: &Recorded{DurationS: 9, PeakMiB: 40, AvgMiB: 40}}, 1, 40, 0, 5},
		{"run action uses recorded: its average", Action{Class: "x", Run: "true", Recorded: &Recorded{DurationS: 3, PeakMiB: 12, AvgMiB: 4}}, 3, 12, 0, 12},
		{"run action: the simulator's curve, ¾ of the peak", Action{Class: "x", Run: "true", Recorded: &Recorded{DurationS: 3, PeakMiB: 12, AvgMiB: 10}}, 3, 12, 0, 27},
		{"run action without record", Action{Class: "x", Run: "true"}, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d, p, r := tt.a.DurationS(), tt.a.PeakMiB(), tt.a.RetainedMiB(); d != tt.dur || p != tt.peak || r != tt.retained {
				t.Errorf("duration %g peak %g retained %g; want %g %g %g", d, p, r, tt.dur, tt.peak, tt.retained)
			}
			if a := tt.a.AreaMiBS(); a != tt.area {
				t.Errorf("area %g MiB·s, want %g", a, tt.area)
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

func TestOversubscription(t *testing.T) {
	// Two workflows of one 1024 MiB action.
	one := func(id string) Workflow {
		return Workflow{ID: id, Actions: []Action{{Wait: 1, Class: "x", Mem: &MemProfile{PeakMiB: 1024, RampS: 2, HoldS: 8}}}}
	}
	tests := []struct {
		name   string
		budget int64
		over   float64
	}{
		{"twice the budget", 1 * units.GiB, 2},
		{"half the budget", 4 * units.GiB, 0.5},
		{"no budget", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Oversubscription([]Workflow{one("a"), one("b")}, tt.budget); math.Abs(got-tt.over) > 1e-9 {
				t.Errorf("Oversubscription = %g, want %g", got, tt.over)
			}
		})
	}
}
