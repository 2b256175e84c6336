package bench

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/report"
)

// fakeResults is a full run: a static sweep and a headline case.
func fakeResults(tenon report.Metrics, extra ...report.Metrics) *Results {
	head := &report.Comparison{Oversubscription: 9.2, LowerBoundS: 10, Results: append([]report.Metrics{
		metrics("eager", 120, 12, 20, 80),
		metrics("agent-reservation", 200, 20, 20, 0),
	}, extra...)}
	tenon.OverLowerBound = tenon.MakespanS / head.LowerBoundS
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
	}
	tests := []struct {
		name  string
		res   *Results
		wants map[string]want
	}{
		{"all met", fakeResults(metrics("tenon", 14, 20, 20, 0)), map[string]want{
			"headline oversubscription":                    {9.2, true},
			"tenon completes every workflow":               {100, true},
			"tenon OOM events":                             {0, true},
			"speedup over Eager":                           {120.0 / 14, true},
			"speedup over the best Static-N reaching 100%": {80.0 / 14, true}, // static-6 was faster but lost workflows
			"speedup over agent-level reservation":         {200.0 / 14, true},
			"tenon makespan / lower bound":                 {1.4, true},
		}},
		{"slow tenon with kills", fakeResults(metrics("tenon", 50, 19, 20, 3)), map[string]want{
			"tenon completes every workflow":               {95, false},
			"tenon OOM events":                             {3, false},
			"speedup over Eager":                           {2.4, false},
			"speedup over the best Static-N reaching 100%": {1.6, false},
			"speedup over agent-level reservation":         {4, false},
			"tenon makespan / lower bound":                 {5, false},
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
				if !ok || !g.Known {
					t.Errorf("%s: missing or not measured: %+v", name, g)
					continue
				}
				if d := g.Value - w.value; d > 1e-9 || d < -1e-9 || g.Met != w.met {
					t.Errorf("%s: value %g met %v, want %g %v (%s)", name, g.Value, g.Met, w.value, w.met, g.Measured)
				}
			}
		})
	}
}

func TestGoalsWithoutHeadline(t *testing.T) {
	r := &Results{Cases: 1, Outcomes: []Outcome{{Case: Case{Name: "main/swe/1GiB", Headline: true}, Err: errFake}}}
	for _, g := range Goals(r) {
		if g.Known || g.Met || g.Status() != "not measured" {
			t.Errorf("%s: %+v, want not measured", g.Name, g)
		}
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
