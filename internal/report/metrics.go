package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Metrics are one policy's numbers. The first fields are the JSON contract
// of `tenon bench --json`; the rest are extras.
//
// Makespan and the latency percentiles are over every workflow, as seed 000
// §5.1 reports them (all its workflows completed within the retries): a
// workflow that never completed has an infinite latency, so the makespan of
// a run that left work unfinished is DNF, and so is a percentile that falls
// on an unfinished workflow. RunS is how long the run took whatever
// happened, and GoodputPerHour what it got done in that time.
type Metrics struct {
	Policy         string  `json:"policy"`
	MakespanS      Seconds `json:"makespan_s"` // DNF (null) unless every workflow completed
	P50S           Seconds `json:"p50_s"`
	P95S           Seconds `json:"p95_s"`
	PeakBytes      int64   `json:"peak_bytes"`
	OOMEvents      int     `json:"oom_events"`
	Timeouts       int     `json:"timeouts"`
	Attempts       int     `json:"attempts"`
	FailedAttempts int     `json:"failed_attempts"`
	Workflows      int     `json:"workflows"`
	Completed      int     `json:"completed"`
	// Infeasible workflows cannot fit the budget (trajectory.ErrInfeasible):
	// no policy can complete them, so they are reported apart and left out
	// of the makespan and the percentiles.
	Infeasible int `json:"infeasible,omitempty"`
	// Unfinished is Workflows - Completed: workflows that gave up after
	// their retries, were cancelled or stalled.
	Unfinished int `json:"unfinished"`
	// RunS is from the start to the end of the last workflow, completed or
	// failed; it equals MakespanS when every workflow completed.
	RunS float64 `json:"run_s"`
	// GoodputPerHour is completed workflows per hour of RunS, on the run's
	// clock (a run at time scale 0.2 counts its own, compressed hours).
	GoodputPerHour float64 `json:"goodput_per_h"`

	Failed             int     `json:"failed"`
	Lost               int     `json:"sandboxes_lost"`
	AttemptFailureRate float64 `json:"attempt_failure_rate"`
	// OverLowerBound is makespan / lower bound; 0 when the bound is unknown
	// or the run did not finish.
	OverLowerBound float64 `json:"makespan_over_lower_bound,omitempty"`
	// SpeedupVsEager is the eager makespan / this makespan; 0 without an
	// eager run or when either left work unfinished, and then
	// VsEagerDidNotFinish says which (see Speedup).
	SpeedupVsEager      float64 `json:"speedup_vs_eager,omitempty"`
	VsEagerDidNotFinish string  `json:"vs_eager_did_not_finish,omitempty"`
	// PeakOverBudget is peak memory / budget; 0 without a budget.
	PeakOverBudget float64 `json:"peak_over_budget,omitempty"`
	MeanQueuedS    float64 `json:"mean_queued_s"` // admission wait per workflow
	// Residency is the lifecycle summary of policies that tear sandboxes
	// down (nil for the others).
	Residency *Residency `json:"residency,omitempty"`

	// Reps is how many repetitions these metrics are the median of (0 or 1:
	// one run); Spread holds their min and max (see Aggregate).
	Reps   int     `json:"reps,omitempty"`
	Spread *Spread `json:"spread,omitempty"`
}

// Residency is replay.ResidencyStats with the restartable share.
type Residency struct {
	replay.ResidencyStats
	RestartableShare float64 `json:"restartable_share"`
}

// Summarize computes one result's metrics. P50 and P95 are over every
// workflow (submit to completion, retries included), an unfinished one
// counting as an infinite latency: a policy that fails its slow workflows
// gets a DNF percentile instead of a fast one once they reach the rank.
func Summarize(res *replay.Result) Metrics {
	m := Metrics{
		Policy: res.Policy, PeakBytes: res.PeakBytes,
		OOMEvents: res.OOMEvents, Timeouts: res.Timeouts, Attempts: res.Attempts,
		FailedAttempts: res.FailedAttempts, Workflows: len(res.Workflows),
		Completed: res.Completed, Failed: res.Failed, Lost: res.Lost,
		RunS: res.Makespan.Seconds(), Infeasible: res.Infeasible,
	}
	m.Unfinished = m.Workflows - m.Completed - m.Infeasible
	m.MakespanS = Seconds(m.RunS)
	if m.Unfinished > 0 {
		m.MakespanS = DNF
	}
	lat := make([]float64, 0, len(res.Workflows))
	var queued time.Duration
	for _, w := range res.Workflows {
		if w.Infeasible {
			continue
		}
		l := math.Inf(1)
		if w.Completed {
			l = w.Latency.Seconds()
		}
		lat = append(lat, l)
		queued += w.Queued
	}
	m.P50S, m.P95S = Seconds(Percentile(lat, 50)), Seconds(Percentile(lat, 95))
	if m.RunS > 0 {
		m.GoodputPerHour = float64(m.Completed) / (m.RunS / 3600)
	}
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
// interpolation between closest ranks; 0 for no values. +Inf values sort
// last, and a percentile that interpolates towards one is +Inf.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	frac := pos - float64(lo)
	switch {
	case frac == 0 || s[lo] == s[hi]:
		return s[lo]
	case math.IsInf(s[hi], 1):
		return s[hi]
	}
	return s[lo] + (s[hi]-s[lo])*frac
}

// DidNotFinish is "eager did not finish 5 of 12" for a run that left
// workflows unfinished, "" when every workflow completed.
func (m Metrics) DidNotFinish() string {
	if m.Unfinished <= 0 {
		return ""
	}
	return fmt.Sprintf("%s did not finish %d of %d", m.Policy, m.Unfinished, m.Workflows-m.Infeasible)
}

// Speedup is how many times sooner m finished the work than base: base's
// makespan over m's. A speedup over a policy that did not finish the work
// is not a speedup, so the ratio exists only when both completed every
// workflow; otherwise it is 0 and dnf says which did not ("tenon did not
// finish 1 of 20; eager did not finish 12 of 20"). Both are zero values
// when a makespan is unknown (0).
func Speedup(m, base Metrics) (ratio float64, dnf string) {
	var why []string
	for _, x := range []Metrics{m, base} {
		if s := x.DidNotFinish(); s != "" && !slices.Contains(why, s) {
			why = append(why, s)
		}
	}
	if len(why) > 0 {
		return 0, strings.Join(why, "; ")
	}
	if m.MakespanS <= 0 || base.MakespanS <= 0 || !m.MakespanS.Finite() || !base.MakespanS.Finite() {
		return 0, ""
	}
	return float64(base.MakespanS / m.MakespanS), ""
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

// Runs are the replay results the comparison summarizes, in its order.
func (c *Comparison) Runs() []*replay.Result { return c.results }

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
		LowerBoundS:      trajectory.LowerBound(replay.Scale(feasible(wfs, budget), timeScale), budget),
		TimeScale:        timeScale,
		results:          results,
	}
	for _, r := range results {
		c.Results = append(c.Results, Summarize(r))
	}
	c.relate()
	return c
}

// relate fills in each result's makespan over the lower bound and its
// speedup over eager.
func (c *Comparison) relate() {
	eager, hasEager := c.Policy("eager")
	for i := range c.Results {
		m := &c.Results[i]
		m.OverLowerBound = 0
		if c.LowerBoundS > 0 && m.MakespanS.Finite() {
			m.OverLowerBound = float64(m.MakespanS) / c.LowerBoundS
		}
		m.SpeedupVsEager, m.VsEagerDidNotFinish = 0, ""
		if hasEager {
			m.SpeedupVsEager, m.VsEagerDidNotFinish = Speedup(*m, eager)
		}
	}
}

// Policy finds a policy's metrics; false when c is nil or lacks it.
func (c *Comparison) Policy(policy string) (Metrics, bool) {
	if c == nil {
		return Metrics{}, false
	}
	for _, m := range c.Results {
		if m.Policy == policy {
			return m, true
		}
	}
	return Metrics{}, false
}

// feasible is wfs without the workflows that can never fit budget: no
// policy starts them (trajectory.ErrInfeasible), so they bound nothing.
func feasible(wfs []trajectory.Workflow, budget int64) []trajectory.Workflow {
	out := make([]trajectory.Workflow, 0, len(wfs))
	for _, w := range wfs {
		if budget <= 0 || w.Feasible(budget) == nil {
			out = append(out, w)
		}
	}
	return out
}
