package bench

import (
	"context"
	"errors"
	"testing"

	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/units"
)

// metrics builds one policy's fake metrics: a run of makespan seconds
// (dnf when workflows are left unfinished).
func metrics(policy string, makespan float64, completed, workflows, ooms int) report.Metrics {
	m := report.Metrics{Policy: policy, MakespanS: report.Seconds(makespan), RunS: makespan, Completed: completed, Workflows: workflows,
		Unfinished: workflows - completed, Failed: workflows - completed, OOMEvents: ooms, PeakBytes: units.GiB,
		P50S: report.Seconds(makespan / 2), P95S: report.Seconds(makespan * 0.9)}
	if m.Unfinished > 0 {
		m.MakespanS, m.P95S = report.DNF, report.DNF
	}
	return m
}

// fakeRun answers each case from table[case name][policy]; a missing case
// fails with errFake.
type fakeRun map[string]map[string]report.Metrics

var errFake = errors.New("fake failure")

func (f fakeRun) run(_ context.Context, c Case, _ int) (*report.Comparison, error) {
	byPolicy, ok := f[c.Name]
	if !ok {
		return nil, errFake
	}
	cmp := &report.Comparison{BudgetBytes: c.Budget, Oversubscription: c.Oversubscription(), LowerBoundS: 10, TimeScale: c.TimeScale}
	for _, p := range c.Policies {
		m, ok := byPolicy[p]
		if !ok {
			return cmp, errFake
		}
		if m.MakespanS.Finite() {
			m.OverLowerBound = float64(m.MakespanS) / cmp.LowerBoundS
		}
		cmp.Results = append(cmp.Results, m)
	}
	return cmp, nil
}

func mustCases(t *testing.T, m Matrix) []Case {
	t.Helper()
	cs, err := m.Cases()
	if err != nil {
		t.Fatalf("Cases: %v", err)
	}
	return cs
}
