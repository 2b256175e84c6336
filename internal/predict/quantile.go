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
	// quantileTrees is the number of trees of each fold's forest.
	quantileTrees = 20
	// minClassResiduals is the fewest residuals a class needs for a
	// quantile of its own; smaller classes take the quantile over all.
	minClassResiduals = 20
)

// Quantile is a calibrated residual quantile of the peak forest: the
// q-quantile of actual minus predicted peak in the model's target space
// (log1p MiB by default), per normalized class and over all actions. The
// residuals are out-of-fold: each action's peak is predicted by a forest
// that never saw its task, as a new task's actions will be, so the quantile
// holds on tasks the model has not seen (in-bag residuals of the forest
// itself would be far too narrow). Residuals below zero are stored as zero:
// the upper quantile is never below the point prediction.
type Quantile struct {
	Q        float64            `json:"q"`
	Class    map[string]float64 `json:"class,omitempty"`
	Residual float64            `json:"residual"` // over all actions; a class missing from Class
}

// residual is the residual quantile of class.
func (q *Quantile) residual(class string) float64 {
	if r, ok := q.Class[class]; ok {
		return r
	}
	return q.Residual
}

// fitQuantile cross-fits the peak forest by task (quantileFolds folds of
// whole workflows) and returns the q-quantile of the out-of-fold residuals
// y - prediction. It returns nil with fewer than two tasks.
func fitQuantile(examples []Example, X [][]float64, y []float64, allowed []int, fc ForestConfig, q float64) *Quantile {
	ids := shuffledWorkflows(examples, fc.Seed, 0x9a11)
	if len(ids) < 2 {
		return nil
	}
	k := min(quantileFolds, len(ids))
	fold := make(map[string]int, len(ids))
	for i, id := range ids {
		fold[id] = i % k
	}
	fc.Trees = min(fc.Trees, quantileTrees)
	res := make([]float64, len(y))
	for f := range k {
		var tx [][]float64
		var ty []float64
		for i, e := range examples {
			if fold[e.Ctx.WorkflowID] != f {
				tx, ty = append(tx, X[i]), append(ty, y[i])
			}
		}
		fc.Seed ^= uint64(f+1) * 0x94d049bb133111eb
		forest := FitForest(tx, ty, allowed, fc)
		for i, e := range examples {
			if fold[e.Ctx.WorkflowID] == f {
				res[i] = y[i] - forest.Predict(X[i])
			}
		}
	}
	byClass := map[string][]float64{}
	for i, e := range examples {
		c := NormalizeClass(e.Ctx.Class)
		byClass[c] = append(byClass[c], res[i])
	}
	out := &Quantile{Q: q, Class: map[string]float64{}, Residual: quantileOf(res, q)}
	for c, r := range byClass {
		if len(r) >= minClassResiduals {
			out.Class[c] = quantileOf(r, q)
		}
	}
	return out
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
