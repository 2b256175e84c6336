package report

import (
	"cmp"
	"math"
	"slices"
)

// Spread is the smallest and largest value of each metric over the
// repetitions that Aggregate took the median of: [min, max].
type Spread struct {
	MakespanS          [2]Seconds `json:"makespan_s"`
	P50S               [2]Seconds `json:"p50_s"`
	P95S               [2]Seconds `json:"p95_s"`
	RunS               [2]float64 `json:"run_s"`
	GoodputPerHour     [2]float64 `json:"goodput_per_h"`
	PeakBytes          [2]float64 `json:"peak_bytes"`
	OOMEvents          [2]float64 `json:"oom_events"`
	Timeouts           [2]float64 `json:"timeouts"`
	Completed          [2]float64 `json:"completed"`
	AttemptFailureRate [2]float64 `json:"attempt_failure_rate"`
}

// Aggregate is the median of several repetitions of one comparison (the
// same workload, budget and policies replayed again): each policy's
// metrics are the per-metric medians over the repetitions it ran in, with
// their min and max in Spread. Counts are rounded medians; the makespan and
// percentiles take DNF repetitions as +Inf, so the median makespan is
// finite exactly when more than half the repetitions completed every
// workflow, and Completed is its median rounded down, so that Unfinished
// (Workflows minus Completed) is positive exactly when the median makespan
// is DNF. Residency is that
// of the repetition whose run length is the median. The speedups over
// eager and the bound ratios are recomputed from the medians. One
// repetition is returned with Reps 1 and no spread; none gives nil.
func Aggregate(reps []*Comparison) *Comparison {
	reps = slices.DeleteFunc(slices.Clone(reps), func(c *Comparison) bool { return c == nil })
	if len(reps) == 0 {
		return nil
	}
	first := reps[0]
	out := &Comparison{BudgetBytes: first.BudgetBytes, Oversubscription: first.Oversubscription,
		LowerBoundS: first.LowerBoundS, TimeScale: first.TimeScale}
	if len(reps) == 1 {
		out.results = first.results
	}
	var order []string
	runs := map[string][]Metrics{}
	for _, c := range reps {
		for _, m := range c.Results {
			if _, ok := runs[m.Policy]; !ok {
				order = append(order, m.Policy)
			}
			runs[m.Policy] = append(runs[m.Policy], m)
		}
	}
	for _, p := range order {
		out.Results = append(out.Results, median(runs[p]))
	}
	out.relate()
	return out
}

// median aggregates one policy's repetitions (see Aggregate).
func median(ms []Metrics) Metrics {
	if len(ms) == 1 {
		m := ms[0]
		m.Reps, m.Spread = 1, nil
		return m
	}
	col := func(f func(Metrics) float64) []float64 {
		xs := make([]float64, len(ms))
		for i, m := range ms {
			xs[i] = f(m)
		}
		return xs
	}
	med := func(xs []float64) float64 { return Percentile(xs, 50) }
	medInt := func(xs []float64) int { return int(math.Round(med(xs))) }
	span := func(xs []float64) [2]float64 { return [2]float64{slices.Min(xs), slices.Max(xs)} }
	spanS := func(xs []float64) [2]Seconds {
		return [2]Seconds{Seconds(slices.Min(xs)), Seconds(slices.Max(xs))}
	}
	sec := func(f func(Metrics) Seconds) []float64 {
		return col(func(m Metrics) float64 { return float64(f(m)) })
	}
	var (
		makespan  = sec(func(m Metrics) Seconds { return m.MakespanS })
		p50       = sec(func(m Metrics) Seconds { return m.P50S })
		p95       = sec(func(m Metrics) Seconds { return m.P95S })
		run       = col(func(m Metrics) float64 { return m.RunS })
		goodput   = col(func(m Metrics) float64 { return m.GoodputPerHour })
		peak      = col(func(m Metrics) float64 { return float64(m.PeakBytes) })
		ooms      = col(func(m Metrics) float64 { return float64(m.OOMEvents) })
		timeouts  = col(func(m Metrics) float64 { return float64(m.Timeouts) })
		completed = col(func(m Metrics) float64 { return float64(m.Completed) })
		failRate  = col(func(m Metrics) float64 { return m.AttemptFailureRate })
	)
	m := Metrics{
		Policy: ms[0].Policy, Workflows: int(slices.Max(col(func(m Metrics) float64 { return float64(m.Workflows) }))),
		MakespanS: Seconds(med(makespan)), P50S: Seconds(med(p50)), P95S: Seconds(med(p95)),
		RunS: med(run), GoodputPerHour: med(goodput), PeakBytes: int64(math.Round(med(peak))),
		OOMEvents: medInt(ooms), Timeouts: medInt(timeouts), Completed: int(math.Floor(med(completed))),
		Attempts:           medInt(col(func(m Metrics) float64 { return float64(m.Attempts) })),
		FailedAttempts:     medInt(col(func(m Metrics) float64 { return float64(m.FailedAttempts) })),
		Failed:             medInt(col(func(m Metrics) float64 { return float64(m.Failed) })),
		Lost:               medInt(col(func(m Metrics) float64 { return float64(m.Lost) })),
		AttemptFailureRate: med(failRate),
		PeakOverBudget:     med(col(func(m Metrics) float64 { return m.PeakOverBudget })),
		MeanQueuedS:        med(col(func(m Metrics) float64 { return m.MeanQueuedS })),
		Reps:               len(ms),
		Spread: &Spread{
			MakespanS: spanS(makespan), P50S: spanS(p50), P95S: spanS(p95), RunS: span(run),
			GoodputPerHour: span(goodput), PeakBytes: span(peak), OOMEvents: span(ooms),
			Timeouts: span(timeouts), Completed: span(completed), AttemptFailureRate: span(failRate),
		},
	}
	m.Infeasible = ms[0].Infeasible // a property of the workload and budget: the same in every repetition
	m.Unfinished = m.Workflows - m.Completed - m.Infeasible
	// The median repetition by run length lends its residency counters.
	byRun := slices.Clone(ms)
	slices.SortStableFunc(byRun, func(a, b Metrics) int { return cmp.Compare(a.RunS, b.RunS) })
	m.Residency = byRun[(len(byRun)-1)/2].Residency
	return m
}
