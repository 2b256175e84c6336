package predict

import (
	"math"
	"slices"
)

// ClassFloor raises the peak P predicts for an action to the largest peak an
// earlier completed action of the same class reached in the same workflow,
// or, for the first action of its class in the workflow, to the class's
// prior (ClassPriors: a high quantile of the class's training peaks).
// Tool calls of one task repeat (the same test suite with other -k
// filters, the same build), so an agent that already ran a 600 MiB test
// will likely run another; a forest trained on a few workflows sees that
// history feature too rarely to learn it and under-predicts, which is what
// OOM-kills an admitted action. HeavyRisk becomes 1 when the floor is above
// HeavyThreshold (0: DefaultHeavyThreshold). PredP90 is raised to the floor
// too, never lowered.
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

// Name is the wrapped predictor's name.
func (c ClassFloor) Name() string { return c.P.Name() }

// Predict is P's descriptor with the class floor applied.
func (c ClassFloor) Predict(ctx ActionContext) Descriptor {
	d := c.P.Predict(ctx)
	cls := NormalizeClass(ctx.Class)
	floor, seen := int64(0), false
	for _, h := range ctx.History {
		if NormalizeClass(h.Class) == cls {
			floor, seen = max(floor, h.PeakBytes), true
		}
	}
	if !seen {
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
