package bench

import (
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// realWFs are two tasks of run actions with recorded peaks.
func realWFs() []trajectory.Workflow {
	mk := func(id string, peaks ...float64) trajectory.Workflow {
		w := trajectory.Workflow{Version: trajectory.Version, ID: id, Kind: "real"}
		for _, p := range peaks {
			w.Actions = append(w.Actions, trajectory.Action{Wait: 2, Class: "test", Command: "python3 -m pytest | tee log", Run: "true",
				Recorded: &trajectory.Recorded{DurationS: 1, AvgMiB: p / 2, PeakMiB: p}})
		}
		return w
	}
	return []trajectory.Workflow{mk("a", 40, 100), mk("b", 300)}
}

func TestRealToolsCase(t *testing.T) {
	m := DefaultMatrix()
	m.Only = []string{GroupRealTools}
	m.RealTools, m.RealToolsAgents = realWFs(), 5
	m.RealToolsMiB = map[string]float64{"a": 93, "b": 928}
	cases, err := m.Cases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 1 {
		t.Fatalf("%d cases, want 1", len(cases))
	}
	c := cases[0]
	if len(c.Workflows) != 5 || c.Group != GroupRealTools || len(c.Policies) != len(AllPolicies) || c.ReferenceMiB["b"] != 928 {
		t.Fatalf("case %+v", c)
	}
	for i, w := range c.Workflows {
		if want := RealToolsSpacingS * float64(i); w.Arrival != want {
			t.Errorf("workflow %d (%s) arrives at %g s, want %g (staggered)", i, w.ID, w.Arrival, want)
		}
	}
	// profiled peaks 100, 300, 100, 300, 100 = 900 MiB: 225 MiB is 4x, but
	// the 300 MiB action needs 334 MiB.
	if want := int64(334) * units.MiB; c.Budget != want {
		t.Errorf("budget %s, want %s", units.FormatSize(c.Budget), units.FormatSize(want))
	}
	// The copies run in their task's image (tenon bench --image).
	m.RealTools[0].Image, m.RealTools[1].Image = "real:1", "real:2"
	cases, err = m.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range cases[0].Workflows {
		if want := []string{"real:1", "real:2"}[i%2]; w.Image != want {
			t.Errorf("workflow %d (%s) runs in image %q, want its task's %q", i, w.ID, w.Image, want)
		}
	}
	m.RealToolsAgents = 32
	cases, err = m.Cases()
	if err != nil {
		t.Fatal(err)
	}
	if got := cases[0].Oversubscription(); got < RealToolsOversubscription || got > RealToolsOversubscription+0.01 {
		t.Errorf("32 agents: oversubscription %.3f, want %d", got, RealToolsOversubscription)
	}
	m.RealTools = nil
	if _, err := m.Cases(); err == nil {
		t.Error("a real-tools group without workflows was accepted")
	}
}

func TestActionPeaksTable(t *testing.T) {
	m := DefaultMatrix()
	m.Only = []string{GroupRealTools}
	m.RealTools, m.RealToolsAgents = realWFs(), 3
	m.RealToolsMiB = map[string]float64{"a": 93, "b": 928}
	cases, err := m.Cases()
	if err != nil {
		t.Fatal(err)
	}
	c := cases[0]
	res := &replay.Result{Policy: "eager", Workflows: []replay.WorkflowResult{
		{ID: "a-r0", Completed: true, ActionPeaks: []int64{30 * units.MiB, 90 * units.MiB}},
		{ID: "b-r0", Completed: true, ActionPeaks: []int64{200 * units.MiB}},
		{ID: "a-r1", Completed: true, ActionPeaks: []int64{50 * units.MiB, 0}},
	}}
	o := Outcome{Case: c, Reps: []*report.Comparison{report.Compare(c.Workflows, c.Budget, c.TimeScale, res)}}
	var b strings.Builder
	writeActionPeaks(&b, o)
	got := b.String()
	for _, row := range []string{
		"| a | 0 | test | `python3 -m pytest \\| tee log` | 40.0 MiB | 93 MiB | 50.0 MiB | 50.0 MiB | 2 |",
		"| a | 1 | test | `python3 -m pytest \\| tee log` | 100.0 MiB | 93 MiB | 90.0 MiB | 90.0 MiB | 1 |",
		"| b | 0 | test | `python3 -m pytest \\| tee log` | 300.0 MiB | 928 MiB | 200.0 MiB | 200.0 MiB | 1 |",
	} {
		if !strings.Contains(got, row) {
			t.Errorf("table lacks %q:\n%s", row, got)
		}
	}
}
