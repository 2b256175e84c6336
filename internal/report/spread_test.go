package report

import (
	"math"
	"testing"
)

// rep is one repetition: eager and tenon with the given makespans (run
// lengths) and unfinished counts out of 10 workflows.
func rep(eagerRun float64, eagerLeft int, tenonRun float64, tenonLeft int) *Comparison {
	mk := func(p string, run float64, left int) Metrics {
		m := Metrics{Policy: p, RunS: run, MakespanS: Seconds(run), P50S: Seconds(run / 2), P95S: Seconds(run * 0.9),
			Workflows: 10, Completed: 10 - left, Unfinished: left, GoodputPerHour: float64(10-left) / (run / 3600), OOMEvents: left}
		if left > 0 {
			m.MakespanS, m.P95S = DNF, DNF
		}
		return m
	}
	c := &Comparison{LowerBoundS: 10, Results: []Metrics{mk("eager", eagerRun, eagerLeft), mk("tenon", tenonRun, tenonLeft)}}
	c.relate()
	return c
}

func TestAggregate(t *testing.T) {
	tests := []struct {
		name       string
		reps       []*Comparison
		tenon      Seconds // median makespan
		tenonSpan  [2]Seconds
		eager      Seconds
		eagerLeft  int
		speedup    float64
		dnf        string
		tenonBound float64
	}{
		{name: "three finished reps", reps: []*Comparison{rep(60, 0, 20, 0), rep(50, 0, 25, 0), rep(70, 0, 22, 0)},
			tenon: 22, tenonSpan: [2]Seconds{20, 25}, eager: 60, speedup: 60.0 / 22, tenonBound: 2.2},
		// Eager gave up in one rep of three: the median rep finished, so its
		// median makespan is measured and the speedup stands.
		{name: "eager gave up once", reps: []*Comparison{rep(60, 0, 20, 0), rep(30, 4, 25, 0), rep(70, 0, 22, 0)},
			tenon: 22, tenonSpan: [2]Seconds{20, 25}, eager: 70, speedup: 70.0 / 22, tenonBound: 2.2},
		// Eager gave up in two reps of three, ending sooner each time: its
		// median is dnf, and no ratio is claimed over it.
		{name: "eager gave up twice", reps: []*Comparison{rep(30, 5, 20, 0), rep(30, 4, 25, 0), rep(70, 0, 22, 0)},
			tenon: 22, tenonSpan: [2]Seconds{20, 25}, eager: DNF, eagerLeft: 4, dnf: "eager did not finish 4 of 10", tenonBound: 2.2},
		{name: "even reps, tenon split", reps: []*Comparison{rep(60, 0, 20, 0), rep(60, 0, 25, 1)},
			tenon: DNF, tenonSpan: [2]Seconds{20, DNF}, eager: 60, dnf: "tenon did not finish 1 of 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Aggregate(tt.reps)
			eager, _ := c.Policy("eager")
			tenon, _ := c.Policy("tenon")
			if tenon.MakespanS != tt.tenon && math.Abs(float64(tenon.MakespanS-tt.tenon)) > 1e-9 {
				t.Errorf("tenon median makespan %v, want %v", tenon.MakespanS, tt.tenon)
			}
			if tenon.Spread == nil || tenon.Spread.MakespanS != tt.tenonSpan || tenon.Reps != len(tt.reps) {
				t.Errorf("tenon reps %d spread %+v, want makespan %v over %d", tenon.Reps, tenon.Spread, tt.tenonSpan, len(tt.reps))
			}
			if eager.MakespanS != tt.eager || eager.Unfinished != tt.eagerLeft {
				t.Errorf("eager median makespan %v unfinished %d, want %v %d", eager.MakespanS, eager.Unfinished, tt.eager, tt.eagerLeft)
			}
			if math.Abs(tenon.SpeedupVsEager-tt.speedup) > 1e-9 || tenon.VsEagerDidNotFinish != tt.dnf {
				t.Errorf("tenon vs eager %g %q, want %g %q", tenon.SpeedupVsEager, tenon.VsEagerDidNotFinish, tt.speedup, tt.dnf)
			}
			if math.Abs(tenon.OverLowerBound-tt.tenonBound) > 1e-9 {
				t.Errorf("tenon / bound %g, want %g", tenon.OverLowerBound, tt.tenonBound)
			}
		})
	}
}

func TestAggregateEdges(t *testing.T) {
	if c := Aggregate(nil); c != nil {
		t.Errorf("Aggregate(nil) = %+v, want nil", c)
	}
	one := rep(60, 0, 20, 0)
	c := Aggregate([]*Comparison{one, nil})
	for i, m := range c.Results {
		if m.Reps != 1 || m.Spread != nil || m.MakespanS != one.Results[i].MakespanS {
			t.Errorf("one rep: %+v, want it unchanged with Reps 1 and no spread", m)
		}
	}
	// A policy missing from a rep (its replay failed) is the median of the
	// reps it ran in.
	partial := &Comparison{LowerBoundS: 10, Results: one.Results[:1]}
	c = Aggregate([]*Comparison{one, partial, rep(80, 0, 30, 0)})
	if e, _ := c.Policy("eager"); e.Reps != 3 || e.MakespanS != 60 {
		t.Errorf("eager %+v, want 3 reps, median 60", e)
	}
	if tn, _ := c.Policy("tenon"); tn.Reps != 2 || tn.MakespanS != 25 || tn.Spread.Completed != [2]float64{10, 10} {
		t.Errorf("tenon %+v, want 2 reps, median 25", tn)
	}
}
