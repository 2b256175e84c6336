package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// RunFunc replays one case under its (resolved) policies, as repetition
// rep (from 0) of c.Reps. It may return a partial comparison together with
// an error (e.g. one policy failed).
type RunFunc func(ctx context.Context, c Case, rep int) (*report.Comparison, error)

// Outcome is what one case produced.
type Outcome struct {
	Case Case
	// Reps are the comparisons of each repetition that returned one, in
	// run order.
	Reps []*report.Comparison
	// Comparison is their median and min–max (report.Aggregate): what the
	// tables, goals and plots read; nil when no repetition returned one.
	Comparison *report.Comparison
	// Err is the case's error, nil on success.
	Err error
	// Wall is how long the case took, every repetition (with the time an
	// earlier run spent in it, when it went on from there).
	Wall time.Duration
	// Complete is how many of Reps, the first ones, returned without an
	// error: all of them when Err is nil; fewer when a repetition failed,
	// was interrupted or is still running (ErrUnfinished).
	Complete int
	// Resumed marks an outcome taken from an earlier run of the same
	// cases (Config.Done) instead of replayed.
	Resumed bool
	// ResumedReps is how many of Reps, the first ones, were taken from an
	// earlier run that stopped in this case (its complete ones); the
	// others were replayed by this run.
	ResumedReps int
	// WorkflowsDigest identifies the case's workflows (WorkflowsDigest);
	// read back from a results file, whose cases carry no workflows.
	WorkflowsDigest string
	// Host is the machine the case ran on (cores, RAM, kernel, cgroup
	// version, swap: app.Host), "" when not recorded: a resumed run's cases
	// may come from another machine than the run's.
	Host string
}

// Results are the outcomes of a bench run, in run order.
type Results struct {
	Outcomes []Outcome
	// Cases is how many cases were asked for; fewer outcomes means the run
	// was interrupted.
	Cases int
	// BestStatic is the policy that replaced BestStatic, and BestStaticWhy
	// says how it was chosen.
	BestStatic, BestStaticWhy string
	// Interrupted is set when the context was cancelled before every case ran.
	Interrupted bool
}

// Partial reports whether some cases did not run or did not finish.
func (r *Results) Partial() bool { return r.Interrupted || r.Finished() < r.Cases }

// Finished is how many outcomes are of cases that ran to their end
// (with or without an error): all but a case still in flight.
func (r *Results) Finished() int {
	n := 0
	for _, o := range r.Outcomes {
		if !errors.Is(o.Err, ErrUnfinished) {
			n++
		}
	}
	return n
}

// Config drives Run.
type Config struct {
	// Run replays one case; required.
	Run RunFunc
	// Progress, if set, is called before each repetition of a case with
	// the case's index (from 0), the number of cases and the repetition
	// (from 0).
	Progress func(i, n int, c Case, rep int)
	// FallbackStatic replaces BestStatic when no static sweep ran or no
	// Static-N reached 100% success (e.g. "static-4").
	FallbackStatic string
	// Clock times each case (clock.Real when nil).
	Clock clock.Clock
	// Done are outcomes of an earlier run of the same cases (its results
	// file, ReadJSON): a case with a complete one (Reusable) is not
	// replayed again, its outcome is taken as it is, marked Resumed; a
	// case the earlier run stopped in on this Host goes on from its
	// complete repetitions (Resumable).
	Done []Outcome
	// Host names the machine this run replays on (Outcome.Host of the
	// cases it replays).
	Host string
	// AfterCase, if set, is called after each case with the results so
	// far.
	AfterCase func(*Results)
	// Checkpoint, if set, is called after each case and after each
	// repetition with the results so far; a case still in flight is their
	// last outcome, with the repetitions it completed and an error
	// wrapping ErrUnfinished. The host writes them, so that a run stopped
	// for good (a killed process, a lost machine) can be resumed from
	// them, down to the repetition.
	Checkpoint func(*Results)
}

// Run runs the cases in order, each c.Reps times. A failed case is
// recorded and the run goes on (its remaining repetitions are skipped); a
// cancelled context stops the run after recording the case in flight (with
// whatever it returned), and Results.Interrupted is set. After the last
// static-sweep case, BestStatic is resolved for the cases that follow, on
// the medians.
func Run(ctx context.Context, cases []Case, cfg Config) *Results {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	res := &Results{Cases: len(cases), BestStatic: cfg.FallbackStatic, BestStaticWhy: "no static sweep ran; fallback"}
	resolved := false
	resolve := func() {
		resolved = true
		if name, _, why := SelectBestStatic(res.Outcomes); name != "" {
			res.BestStatic, res.BestStaticWhy = name, why
		}
	}
	for i, c := range cases {
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		if !resolved && c.Group != GroupStatic {
			resolve()
		}
		c.Policies = resolvePolicies(c.Policies, res.BestStatic)
		out, ok := Reusable(cfg.Done, c)
		if ok {
			out.Case, out.Resumed = c, true
		} else {
			prior, _ := Resumable(cfg.Done, c, cfg.Host)
			out = runCase(ctx, clk, cfg, c, i, len(cases), prior, func(inFlight Outcome) {
				if cfg.Checkpoint != nil {
					cp := *res
					cp.Outcomes = append(slices.Clone(res.Outcomes), inFlight)
					cfg.Checkpoint(&cp)
				}
			})
		}
		res.Outcomes = append(res.Outcomes, out)
		if cfg.AfterCase != nil {
			cfg.AfterCase(res)
		}
		if cfg.Checkpoint != nil {
			cfg.Checkpoint(res)
		}
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
	}
	if !resolved {
		resolve()
	}
	return res
}

// Reusable returns the outcome among done that stands for case c (its
// policies resolved): the same name, group, workload, workflows
// (WorkflowsDigest, where both know it), budget, policies, parameters,
// time scale and repetitions (a results file keeps the repetitions
// done, not the number asked: with no error they are the same), with
// every repetition done and no error.
func Reusable(done []Outcome, c Case) (Outcome, bool) {
	digest := WorkflowsDigest(c.Workflows)
	for _, o := range done {
		if sameCase(o, c, digest) && o.Err == nil && o.Comparison != nil && len(o.Reps) == max(c.Reps, 1) {
			return o, true
		}
	}
	return Outcome{}, false
}

// Resumable returns the outcome among done of case c that stopped before
// its last repetition (an error, an interruption, a process stopped in
// flight) with some complete ones, made on host (or on a machine not
// recorded): the same case as Reusable asks for, and the repetitions a
// run going on from it keeps. A case's repetitions come from one machine.
func Resumable(done []Outcome, c Case, host string) (Outcome, bool) {
	digest := WorkflowsDigest(c.Workflows)
	for _, o := range done {
		if sameCase(o, c, digest) && o.Err != nil && o.Complete > 0 && o.Complete < max(c.Reps, 1) &&
			o.Complete <= len(o.Reps) && (o.Host == "" || host == "" || o.Host == host) {
			return o, true
		}
	}
	return Outcome{}, false
}

// sameCase reports whether outcome o is of case c, whose workflows'
// digest is digest.
func sameCase(o Outcome, c Case, digest string) bool {
	d := o.Case
	return d.Name == c.Name && d.Group == c.Group && d.Workload == c.Workload && d.Budget == c.Budget &&
		slices.Equal(d.Policies, c.Policies) && maps.Equal(d.Params, c.Params) && d.TimeScale == c.TimeScale &&
		(o.WorkflowsDigest == "" || digest == "" || o.WorkflowsDigest == digest)
}

// WorkflowsDigest is a short digest of workflows (their JSON), "" for
// none: what a results file keeps of a case's workflows, so that a resumed
// run does not take an outcome of other workflows under the same name.
func WorkflowsDigest(wfs []trajectory.Workflow) string {
	if len(wfs) == 0 {
		return ""
	}
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(wfs); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// runCase replays case i of n c.Reps times, until one fails, going on
// after the complete repetitions of prior (Resumable; none when zero)
// and calling inFlight with the outcome so far after each repetition but
// the last, and first when it goes on from prior.
func runCase(ctx context.Context, clk clock.Clock, cfg Config, c Case, i, n int, prior Outcome, inFlight func(Outcome)) Outcome {
	out := Outcome{Case: c, Host: cfg.Host}
	reps := max(c.Reps, 1)
	unfinished := func(o Outcome) {
		o.Reps = slices.Clone(o.Reps)
		o.Comparison = report.Aggregate(o.Reps)
		o.Err = fmt.Errorf("%w: %d of %d repetitions done", ErrUnfinished, o.Complete, reps)
		inFlight(o)
	}
	if prior.Complete > 0 {
		out.Reps = slices.Clone(prior.Reps[:prior.Complete])
		out.Complete, out.ResumedReps, out.Wall = prior.Complete, prior.Complete, prior.Wall
		// Checkpointed at once: the results file this run goes on from
		// may be the one its checkpoints overwrite, and a run killed in
		// its first repetition would lose the earlier ones.
		unfinished(out)
	}
	start := clk.Now()
	for rep := out.Complete; rep < reps && out.Err == nil; rep++ {
		if cfg.Progress != nil {
			cfg.Progress(i, n, c, rep)
		}
		cmp, err := cfg.Run(ctx, c, rep)
		if cmp != nil {
			out.Reps = append(out.Reps, cmp)
		}
		switch {
		case err == nil && cmp == nil:
			err = errors.New("no result")
		case ctx.Err() != nil && err == nil:
			// The run may return what finished without an error; say that
			// the case's numbers are cut short.
			err = fmt.Errorf("interrupted: %w", ctx.Err())
		}
		if err != nil && reps > 1 {
			err = fmt.Errorf("repetition %d of %d: %w", rep+1, reps, err)
		}
		if err == nil {
			out.Complete++
		}
		out.Err = err
		out.Wall = prior.Wall + clk.Now().Sub(start)
		if err == nil && rep+1 < reps {
			unfinished(out)
		}
	}
	out.Comparison = report.Aggregate(out.Reps)
	return out
}

// resolvePolicies replaces BestStatic by best, dropping duplicates.
func resolvePolicies(pols []string, best string) []string {
	out := make([]string, 0, len(pols))
	for _, p := range pols {
		if p == BestStatic {
			p = best
		}
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// SelectBestStatic picks, among the static-sweep outcomes, the Static-N with
// the smallest makespan among those that completed every workflow
// (complete is true). When none did, it picks the one that completed the
// most workflows (then the fastest) and complete is false. name is "" when
// no static sweep ran.
func SelectBestStatic(outs []Outcome) (name string, complete bool, why string) {
	var best *report.Metrics
	tried := 0
	better := func(a, b *report.Metrics) bool { // a better than b
		ca, cb := a.Workflows > 0 && a.Completed == a.Workflows, b.Workflows > 0 && b.Completed == b.Workflows
		switch {
		case ca != cb:
			return ca
		case !ca && a.Completed != b.Completed:
			return a.Completed > b.Completed
		}
		return a.RunS < b.RunS
	}
	for _, o := range outs {
		if o.Case.Group != GroupStatic || o.Comparison == nil {
			continue
		}
		for i := range o.Comparison.Results {
			m := &o.Comparison.Results[i]
			tried++
			if best == nil || better(m, best) {
				best = m
			}
		}
	}
	if best == nil {
		return "", false, ""
	}
	if best.Workflows > 0 && best.Completed == best.Workflows {
		return best.Policy, true, fmt.Sprintf("fastest of %d Static-N in the static sweep that completed every workflow", tried)
	}
	return best.Policy, false, fmt.Sprintf("none of %d Static-N in the static sweep completed every workflow; this one completed the most (%d/%d)", tried, best.Completed, best.Workflows)
}

// Headline returns the headline outcome, or nil when it did not run.
func (r *Results) Headline() *Outcome {
	for i := range r.Outcomes {
		if r.Outcomes[i].Case.Headline {
			return &r.Outcomes[i]
		}
	}
	return nil
}

// usesBestStatic reports whether a static sweep ran or a case replayed the
// chosen static.
func (r *Results) usesBestStatic() bool {
	for _, o := range r.Outcomes {
		if o.Case.Group == GroupStatic || slices.Contains(o.Case.Policies, r.BestStatic) {
			return true
		}
	}
	return false
}
