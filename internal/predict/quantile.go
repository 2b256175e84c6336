package predict

import (
	"math"
	"slices"
)

// PeakQuantile is the quantile of the peak a Model predicts as PredP90.
const PeakQuantile = 0.9

const (
	// quantileFolds is the number of by-task folds the peak residuals are
	// cross-fitted on.
	quantileFolds = 5
	// quantileTrees is the number of trees of each fold's forest and of
	// the scale forest.
	quantileTrees = 20
	// scaleMinLeaf is the fewest residuals in a leaf of a scale forest: the
	// scale is a smooth spread, not a copy of single residuals.
	scaleMinLeaf = 20
	// minScale is the smallest residual scale (target space): where the
	// training actions were all predicted almost exactly, the bound still
	// allows a few percent.
	minScale = 0.05
)

// Quantile is a calibrated, locally adaptive upper quantile of the peak
// forest (normalized split-conformal prediction). Scale predicts, from an
// action's features, how far the peak forest typically misses (the
// absolute residual, in the model's target space: log1p(MiB / LogScaleMiB)
// by default);
// Residual is the q-quantile of the residuals divided by that scale. The
// bound of an action is prediction + Residual × scale: wide for actions
// like those the forest missed by much in training (a test run of a task
// whose runs vary), narrow for actions it always got right (a file read).
//
// All residuals are out-of-fold: each action's peak is predicted by a
// forest that never saw its task, and its scale by a scale forest fitted
// on the out-of-fold residuals of the other folds' tasks, as a new task's
// actions will be, so the quantile holds on tasks the model has not seen
// (in-bag residuals of the forest itself would be far too narrow). One
// quantile over all actions rather than one per class: the scale already
// separates the classes, and a class quantile fitted on one trace set
// under-covered the other (haiku -> batch18: 77 % of peaks at or below
// the bound, against 86-88 % with the scale; see bench/results/predict.md).
type Quantile struct {
	Q        float64 `json:"q"`
	Residual float64 `json:"residual"` // q-quantile of residual / scale, at least 0
	Scale    *Forest `json:"scale"`
}

// bound is the upper quantile, in target space, of an action whose peak
// forest predicts target from features x.
func (q *Quantile) bound(target float64, x []float64) float64 {
	return target + q.Residual*max(q.Scale.Predict(x), minScale)
}

// fitQuantile cross-fits the peak forest by task (quantileFolds folds of
// whole workflows), then the scale forest on the other folds' absolute
// residuals, and returns the q-quantile of the out-of-fold normalized
// residuals with a scale forest fitted on all of them. It returns nil with
// fewer than two tasks.
func fitQuantile(examples []Example, X [][]float64, y []float64, allowed []int, fc ForestConfig, q float64) *Quantile {
	ids := shuffledWorkflows(examples, fc.Seed, 0x9a11)
	if len(ids) < 2 {
		return nil
	}
	k := min(quantileFolds, len(ids))
	fold := make([]int, len(examples))
	byID := make(map[string]int, len(ids))
	for i, id := range ids {
		byID[id] = i % k
	}
	for i, e := range examples {
		fold[i] = byID[e.Ctx.WorkflowID]
	}
	fc.Trees = min(fc.Trees, quantileTrees)
	// crossFit sets out[i] for each example from a forest fitted on the
	// examples of the other folds.
	crossFit := func(target []float64, fc ForestConfig, out []float64, stream uint64) {
		for f := range k {
			var tx [][]float64
			var ty []float64
			for i := range examples {
				if fold[i] != f {
					tx, ty = append(tx, X[i]), append(ty, target[i])
				}
			}
			fc.Seed ^= uint64(f+1) * stream
			forest := FitForest(tx, ty, allowed, fc)
			for i := range examples {
				if fold[i] == f {
					out[i] = forest.Predict(X[i])
				}
			}
		}
	}
	res := make([]float64, len(y))
	crossFit(y, fc, res, 0x94d049bb133111eb)
	abs := make([]float64, len(y))
	for i := range res {
		res[i] = y[i] - res[i]
		abs[i] = math.Abs(res[i])
	}
	sc := make([]float64, len(y))
	fc.MinLeaf = max(fc.MinLeaf, scaleMinLeaf)
	crossFit(abs, fc, sc, 0xbf58476d1ce4e5b9)
	for i := range res {
		res[i] /= max(sc[i], minScale)
	}
	fc.Seed ^= 0x2545f4914f6cdd1d
	return &Quantile{Q: q, Residual: quantileOf(res, q), Scale: FitForest(X, abs, allowed, fc)}
}

// quantileOf is the nearest-rank q-quantile of v, at least 0.
func quantileOf(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	i := min(max(int(math.Ceil(q*float64(len(s))))-1, 0), len(s)-1)
	return max(s[i], 0)
}

// UpperQuantile scores a predictor's upper quantile as its peak: its
// descriptors carry PredP90 as PredPeak. Its name is P's with "-p90".
type UpperQuantile struct{ P Predictor }

var _ Predictor = UpperQuantile{}

// Name is P's name with "-p90".
func (u UpperQuantile) Name() string { return u.P.Name() + "-p90" }

// Predict is P's descriptor with the peak raised to PredP90.
func (u UpperQuantile) Predict(ctx ActionContext) Descriptor {
	d := u.P.Predict(ctx)
	d.PredPeak = max(d.PredPeak, d.PredP90)
	return d
}
