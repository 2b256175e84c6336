package report

import (
	"math"
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Metrics are one policy's numbers. The first fields are the JSON contract
// of `tenon bench --json`; the rest are extras.
type Metrics struct {
	Policy         string  `json:"policy"`
	MakespanS      float64 `json:"makespan_s"`
	P50S           float64 `json:"p50_s"`
	P95S           float64 `json:"p95_s"`
	PeakBytes      int64   `json:"peak_bytes"`
	OOMEvents      int     `json:"oom_events"`
	Timeouts       int     `json:"timeouts"`
	Attempts       int     `json:"attempts"`
	FailedAttempts int     `json:"failed_attempts"`
	Workflows      int     `json:"workflows"`
	Completed      int     `json:"completed"`

	Failed             int     `json:"failed"`
	Lost               int     `json:"sandboxes_lost"`
	AttemptFailureRate float64 `json:"attempt_failure_rate"`
	// OverLowerBound is makespan / lower bound; 0 when the bound is unknown.
	OverLowerBound float64 `json:"makespan_over_lower_bound,omitempty"`
	// SpeedupVsEager is the eager makespan / this makespan; 0 without an eager run.
	SpeedupVsEager float64 `json:"speedup_vs_eager,omitempty"`
	// PeakOverBudget is peak memory / budget; 0 without a budget.
	PeakOverBudget float64 `json:"peak_over_budget,omitempty"`
	MeanQueuedS    float64 `json:"mean_queued_s"` // admission wait per workflow
	// Residency is the lifecycle summary of policies that tear sandboxes
	// down (nil for the others).
	Residency *Residency `json:"residency,omitempty"`
}

// Residency is replay.ResidencyStats with the restartable share.
type Residency struct {
	replay.ResidencyStats
	RestartableShare float64 `json:"restartable_share"`
}

// Summarize computes one result's metrics. P50 and P95 are over completed
// workflows (submit to completion, retries included); failed workflows are
// counted in Failed instead.
func Summarize(res *replay.Result) Metrics {
	m := Metrics{
		Policy: res.Policy, MakespanS: res.Makespan.Seconds(), PeakBytes: res.PeakBytes,
		OOMEvents: res.OOMEvents, Timeouts: res.Timeouts, Attempts: res.Attempts,
		FailedAttempts: res.FailedAttempts, Workflows: len(res.Workflows),
		Completed: res.Completed, Failed: res.Failed, Lost: res.Lost,
	}
	var lat []float64
	var queued time.Duration
	for _, w := range res.Workflows {
		if w.Completed {
			lat = append(lat, w.Latency.Seconds())
		}
		queued += w.Queued
	}
	m.P50S, m.P95S = Percentile(lat, 50), Percentile(lat, 95)
	if m.Attempts > 0 {
		m.AttemptFailureRate = float64(m.FailedAttempts) / float64(m.Attempts)
	}
	if n := len(res.Workflows); n > 0 {
		m.MeanQueuedS = queued.Seconds() / float64(n)
	}
	if res.Budget > 0 {
		m.PeakOverBudget = float64(res.PeakBytes) / float64(res.Budget)
	}
	if rs := res.Residency; rs.Boundaries > 0 || rs.Teardowns > 0 {
		m.Residency = &Residency{ResidencyStats: rs, RestartableShare: rs.RestartableShare()}
	}
	return m
}

// Percentile is the p-th percentile (0..100) of xs with linear
// interpolation between closest ranks; 0 for no values.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// Comparison is several policies replayed on the same workload and budget.
type Comparison struct {
	BudgetBytes      int64   `json:"budget_bytes"`
	Oversubscription float64 `json:"oversubscription"`
	// LowerBoundS is the makespan lower bound of the schedule as replayed
	// (after TimeScale), seconds.
	LowerBoundS float64   `json:"lower_bound_s"`
	TimeScale   float64   `json:"time_scale,omitempty"`
	Results     []Metrics `json:"results"`

	results []*replay.Result // for the plot
}

// Compare summarizes results of replaying wfs under budget at timeScale
// (0 means 1), in the order given. Speedups are relative to the result
// whose policy is "eager", if any.
func Compare(wfs []trajectory.Workflow, budget int64, timeScale float64, results ...*replay.Result) *Comparison {
	if timeScale <= 0 {
		timeScale = 1
	}
	c := &Comparison{
		BudgetBytes:      budget,
		Oversubscription: trajectory.Oversubscription(wfs, budget),
		LowerBoundS:      trajectory.LowerBound(replay.Scale(wfs, timeScale), budget),
		TimeScale:        timeScale,
		results:          results,
	}
	var eager float64
	for _, r := range results {
		if r.Policy == "eager" {
			eager = r.Makespan.Seconds()
		}
	}
	for _, r := range results {
		m := Summarize(r)
		if c.LowerBoundS > 0 {
			m.OverLowerBound = m.MakespanS / c.LowerBoundS
		}
		if eager > 0 && m.MakespanS > 0 {
			m.SpeedupVsEager = eager / m.MakespanS
		}
		c.Results = append(c.Results, m)
	}
	return c
}
