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
