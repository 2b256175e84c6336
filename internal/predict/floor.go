package predict

import (
	"math"
	"slices"
)

// ClassFloor raises the peak P predicts for an action to the largest peak of
// the latest classFloorRuns earlier completed actions of the same class in
// the same workflow, or, for the first action of its class in the
// workflow, to the class's prior (ClassPriors over FirstOfClass: a high
// quantile of the peaks of the training actions that were the first of
// their class in their workflow). Tool calls of one task repeat (the same test
// suite with other -k filters, the same build), so an agent that already
// ran a 600 MiB test will likely run another; a forest trained on a few
// workflows sees that history feature too rarely to learn it and
// under-predicts, which is what OOM-kills an admitted action. HeavyRisk
// becomes 1 when the floor is above HeavyThreshold (0:
// DefaultHeavyThreshold). PredP90 is raised to the floor too, never
// lowered.
type ClassFloor struct {
	P              Predictor
	HeavyThreshold int64
	// Prior maps a normalized class to the peak its first action in a
	// workflow is assumed to reach at least; nil or a missing class: none.
	// A forest's point prediction for an action it has no history for is
	// its weakest: the first heavy test of a task is predicted like the
	// light ones, admitted beside another heavy action and OOM-killed.
	Prior map[string]int64
}

var _ Predictor = ClassFloor{}

// classFloorRuns is how many of a class's latest actions in the workflow
// the class floor takes the largest peak of. An agent moves on: the whole
// test suite it ran early bounds the next few tests, not every narrow
// re-run after it, and one search through a large tree (152 MiB in a haiku
// task whose other searches stay under 6 MiB) does not make every later
// search heavy: with the largest peak of all of them, each of that task's
// later searches waited for a heavy action's room, up to 250 s, and tenon
// took 1524.5 s on haiku x2 at 1 GiB against 1212.0 s with the
// history-only predictor. Over the 72 simulated real-trace runs (both
// trace sets, 768 MiB to 4 GiB, six orders each, predictors cross-fitted
// by task): no window 92550.6 s in sum, a window of 3 89568.1 s (the
// history-only predictor 91813.9 s), 0 OOM kills each (the window's one
// kill went with the OOM hold's wait bound, policy.HoldMaxWaitFor).
const classFloorRuns = 3

// Name is the wrapped predictor's name.
func (c ClassFloor) Name() string { return c.P.Name() }

// Predict is P's descriptor with the class floor applied.
func (c ClassFloor) Predict(ctx ActionContext) Descriptor {
	d := c.P.Predict(ctx)
	cls := NormalizeClass(ctx.Class)
	floor, seen := int64(0), 0
	for i := len(ctx.History) - 1; i >= 0 && seen < classFloorRuns; i-- {
		if h := ctx.History[i]; NormalizeClass(h.Class) == cls {
			floor, seen = max(floor, h.PeakBytes), seen+1
		}
	}
	if seen == 0 {
		floor = c.Prior[cls]
	}
	if floor <= d.PredPeak {
		return d
	}
	d.PredPeak, d.PredP90 = floor, max(d.PredP90, floor)
	if heavyPeak(floor, c.HeavyThreshold) {
		d.HeavyRisk = 1
	}
	return d
}

// heavyPeak reports whether peak is above the heavy threshold (0:
// DefaultHeavyThreshold).
func heavyPeak(peak, threshold int64) bool {
	if threshold <= 0 {
		threshold = DefaultHeavyThreshold
	}
	return peak > threshold
}

// ClassPriors returns, per normalized class, the q-quantile (0 < q <= 1) of
// the peaks of the examples' actions of that class.
//
// ClassFloor applies a prior only to the first action of a class in a
// workflow, so its callers pass FirstOfClass(examples): the prior is then
// the quantile of the very population it predicts.
func ClassPriors(examples []Example, q float64) map[string]int64 {
	peaks := map[string][]int64{}
	for _, e := range examples {
		c := NormalizeClass(e.Ctx.Class)
		peaks[c] = append(peaks[c], e.PeakBytes)
	}
	out := make(map[string]int64, len(peaks))
	for c, v := range peaks {
		slices.Sort(v)
		i := min(max(int(math.Ceil(q*float64(len(v))))-1, 0), len(v)-1)
		out[c] = v[i]
	}
	return out
}

// FirstOfClass returns, in order, the examples whose action is the first of
// its normalized class in its workflow (no action of that class in its
// history): the actions ClassFloor applies a class prior to.
//
// Priors from every action of a class were a high quantile of a population
// the prior is never applied to: the later actions of a class run after a
// task has grown (its full test suite, its build, sub-agents that search a
// large tree), the first ones mostly before. On the haiku traces twice at
// 1 GiB in the simulator, the first sub-agent of each task (class task,
// 30-360 s long) of one fold was predicted at the p90 of the other fold's
// sub-agents, 141 MiB, and queued as heavy; 16 of the 17 sub-agents
// predicted heavy peaked under 64 MiB, and the sub-agents held 173 GiB·s
// of admission charge above their peaks (86 % of all actions' excess).
// Over bench/traces-sim.sh's 72 runs (both trace sets, 768 MiB to 4 GiB,
// six orders) with priors from first actions: summed makespan -3.1 %
// (cgroup v1), -4.9 % (no swap), -3.1 % (v2), P50 -3.8, -6.1, -1.3 %, no
// OOM kill either way; bench/results/traces-sim.md.
func FirstOfClass(examples []Example) []Example {
	var out []Example
	for _, e := range examples {
		c := NormalizeClass(e.Ctx.Class)
		if !slices.ContainsFunc(e.Ctx.History, func(h Completed) bool { return NormalizeClass(h.Class) == c }) {
			out = append(out, e)
		}
	}
	return out
}
