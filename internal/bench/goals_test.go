package bench

import (
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/report"
)

// fakeResults is a full run: a static sweep and a headline case.
func fakeResults(tenon report.Metrics, extra ...report.Metrics) *Results {
	head := &report.Comparison{Oversubscription: 9.2, LowerBoundS: 10, Results: append([]report.Metrics{
		metrics("eager", 120, 12, 20, 80),
		metrics("agent-reservation", 200, 20, 20, 0),
	}, extra...)}
	tenon.OverLowerBound = float64(tenon.MakespanS) / head.LowerBoundS
	head.Results = append(head.Results, tenon)
	return &Results{Cases: 3, Outcomes: []Outcome{
		{Case: Case{Name: "static/swe/1GiB/N=2", Group: GroupStatic}, Comparison: &report.Comparison{Results: []report.Metrics{metrics("static-2", 80, 20, 20, 0)}}},
		{Case: Case{Name: "static/swe/1GiB/N=6", Group: GroupStatic}, Comparison: &report.Comparison{Results: []report.Metrics{metrics("static-6", 30, 18, 20, 30)}}},
		{Case: Case{Name: "main/swe/1GiB", Group: GroupMain, Headline: true}, Comparison: head},
	}}
}

func goalByName(gs []Goal) map[string]Goal {
	m := map[string]Goal{}
	for _, g := range gs {
		m[g.Name] = g
	}
	return m
}

func TestGoals(t *testing.T) {
	type want struct {
		value float64
		met   bool
		dnf   string // the goal has no ratio: a run did not finish
	}
	eagerDone := func(r *Results) *Results {
		head := r.Outcomes[2].Comparison
		head.Results[0] = metrics("eager", 120, 20, 20, 80)
		return r
	}
	tests := []struct {
		name  string
		res   *Results
		wants map[string]want
	}{
		{"all met", eagerDone(fakeResults(metrics("tenon", 14, 20, 20, 0))), map[string]want{
			"headline oversubscription":                    {value: 9.2, met: true},
			"tenon completes every workflow":               {value: 100, met: true},
			"tenon OOM events":                             {value: 0, met: true},
			"speedup over Eager":                           {value: 120.0 / 14, met: true},
			"speedup over the best Static-N reaching 100%": {value: 80.0 / 14, met: true}, // static-6 was faster but lost workflows
			"speedup over agent-level reservation":         {value: 200.0 / 14, met: true},
			"tenon makespan / lower bound":                 {value: 1.4, met: true},
		}},
		// Eager gave up on 8 workflows: however soon it stopped, there is
		// no speedup over it.
		{"eager did not finish", fakeResults(metrics("tenon", 14, 20, 20, 0)), map[string]want{
			"speedup over Eager":                   {dnf: "eager did not finish 8 of 20"},
			"speedup over agent-level reservation": {value: 200.0 / 14, met: true},
		}},
		{"slow tenon with kills", eagerDone(fakeResults(metrics("tenon", 50, 20, 20, 3))), map[string]want{
			"tenon completes every workflow":               {value: 100, met: true},
			"tenon OOM events":                             {value: 3, met: false},
			"speedup over Eager":                           {value: 2.4, met: false},
			"speedup over the best Static-N reaching 100%": {value: 1.6, met: false},
			"speedup over agent-level reservation":         {value: 4, met: false},
			"tenon makespan / lower bound":                 {value: 5, met: false},
		}},
		{"tenon did not finish", eagerDone(fakeResults(metrics("tenon", 14, 19, 20, 3))), map[string]want{
			"tenon completes every workflow":               {value: 95, met: false},
			"speedup over Eager":                           {dnf: "tenon did not finish 1 of 20"},
			"speedup over the best Static-N reaching 100%": {dnf: "tenon did not finish 1 of 20"},
			"tenon makespan / lower bound":                 {dnf: "tenon did not finish 1 of 20"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := goalByName(Goals(tt.res))
			if len(got) != 7 {
				t.Fatalf("%d goals, want 7: %v", len(got), got)
			}
			for name, w := range tt.wants {
				g, ok := got[name]
				switch {
				case !ok:
					t.Errorf("%s: missing", name)
				case w.dnf != "":
					if g.DidNotFinish != w.dnf || g.Known || g.Met || g.Status() != "did not finish" || g.Measured != w.dnf {
						t.Errorf("%s: %+v (%s), want did not finish %q", name, g, g.Status(), w.dnf)
					}
				case !g.Known:
					t.Errorf("%s: not measured: %+v", name, g)
				default:
					if d := g.Value - w.value; d > 1e-9 || d < -1e-9 || g.Met != w.met {
						t.Errorf("%s: value %g met %v, want %g %v (%s)", name, g.Value, g.Met, w.value, w.met, g.Measured)
					}
				}
			}
		})
	}
}

func TestGoalsWithoutHeadline(t *testing.T) {
	r := &Results{Cases: 1, Outcomes: []Outcome{{Case: Case{Name: "main/swe/1GiB", Headline: true}, Err: errFake}}}
	goals := Goals(r)
	for _, g := range goals {
		if g.Known || g.Met || g.Status() != "not measured" {
			t.Errorf("%s: %+v, want not measured", g.Name, g)
		}
	}
	if Judged(goals) {
		t.Error("Judged = true for a run that measured no goal")
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, Meta{Name: "x"}, r, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), NotJudged) || strings.Contains(md.String(), "| goal |") {
		t.Errorf("markdown of a run without goals:\n%s\nwant %q and no goal table", md.String(), NotJudged)
	}
	if !Judged(Goals(fakeResults(metrics("tenon", 14, 20, 20, 0)))) {
		t.Error("Judged = false for a run with the headline case")
	}
}

func TestGoalsIgnoreIncompleteStatic(t *testing.T) {
	r := fakeResults(metrics("tenon", 14, 20, 20, 0))
	r.Outcomes = r.Outcomes[1:] // only static-6, which lost workflows
	g := goalByName(Goals(r))["speedup over the best Static-N reaching 100%"]
	if g.Known || g.Status() != "not measured" {
		t.Errorf("goal %+v measured against a static that did not reach 100%%", g)
	}
}

// TestGoalsOnMedians: with repetitions, each goal is judged on the median
// metrics and carries the min and max of the goal over the repetitions.
func TestGoalsOnMedians(t *testing.T) {
	rep := func(tenonS, eagerS float64, tenonDone int) *Results {
		r := fakeResults(metrics("tenon", tenonS, tenonDone, 20, 20-tenonDone))
		r.Outcomes[2].Comparison.Results[0] = metrics("eager", eagerS, 20, 20, 80)
		return r
	}
	// tenon 10, 20, 12 s (median 12); eager 120, 60, 96 s (median 96);
	// the second rep lost a workflow.
	reps := []*Results{rep(10, 120, 20), rep(20, 60, 19), rep(12, 96, 20)}
	r := reps[0]
	for i := range r.Outcomes {
		var cs []*report.Comparison
		for _, x := range reps {
			cs = append(cs, x.Outcomes[i].Comparison)
		}
		r.Outcomes[i].Reps = cs
		r.Outcomes[i].Comparison = report.Aggregate(cs)
	}
	got := goalByName(Goals(r))
	tests := []struct {
		name          string
		value         float64
		met           bool
		min, max      float64
		reps          int
		measuredHints []string
	}{
		{"speedup over Eager", 96.0 / 12, true, 120.0 / 10, 96.0 / 12, 2, []string{"8.00x", "over 2 reps: min 8.00x, max 12.00x"}},
		{"tenon completes every workflow", 100, true, 95, 100, 3, []string{"100.0%", "min 95.0%, max 100.0%"}},
		{"tenon OOM events", 0, true, 0, 1, 3, []string{"over 3 reps: min 0, max 1"}},
		{"tenon makespan / lower bound", 1.2, true, 1, 1.2, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := got[tt.name]
			near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
			if !g.Known || !near(g.Value, tt.value) || g.Met != tt.met || !near(g.Min, min(tt.min, tt.max)) || !near(g.Max, max(tt.min, tt.max)) || g.Reps != tt.reps {
				t.Errorf("%+v, want value %g met %v min–max %g–%g over %d", g, tt.value, tt.met, tt.min, tt.max, tt.reps)
			}
			for _, h := range tt.measuredHints {
				if !strings.Contains(g.Measured, h) {
					t.Errorf("measured %q lacks %q", g.Measured, h)
				}
			}
		})
	}
}
