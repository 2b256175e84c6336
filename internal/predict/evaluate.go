package predict

import (
	"math"
	"slices"
)

// APEFloor is the smallest actual peak used as the denominator of the
// absolute percentage error, so that actions that allocate (almost) nothing
// do not make the percentage infinite.
const APEFloor int64 = 1 * mib

// Metrics are the Table 2 measures of a predictor's peak-memory predictions.
type Metrics struct {
	Name           string  `json:"name"`
	MAEMiB         float64 `json:"mae_mib"`         // mean absolute error of the peak, MiB
	P90APE         float64 `json:"p90_ape"`         // 90th percentile absolute percentage error, %
	HeavyPrecision float64 `json:"heavy_precision"` // %, of actions predicted heavy, share that are
	HeavyRecall    float64 `json:"heavy_recall"`    // %, of heavy actions, share predicted heavy
	N              int     `json:"n"`
}

// Evaluate predicts each validation example's peak and compares it with the
// measured one. An action is heavy when its measured peak exceeds
// heavyThreshold (0 means DefaultHeavyThreshold) and predicted heavy when the
// predicted peak does. Precision (recall) is 0 when nothing is predicted
// heavy (nothing is heavy); the APE uses max(actual, APEFloor) as denominator
// and the nearest-rank percentile.
func Evaluate(pred Predictor, val []Example, heavyThreshold int64) Metrics {
	if heavyThreshold <= 0 {
		heavyThreshold = DefaultHeavyThreshold
	}
	m := Metrics{Name: pred.Name(), N: len(val)}
	if len(val) == 0 {
		return m
	}
	var absSum float64
	apes := make([]float64, 0, len(val))
	var c confusion
	for _, e := range val {
		d := pred.Predict(e.Ctx)
		diff := math.Abs(float64(d.PredPeak - e.PeakBytes))
		absSum += diff / mib
		apes = append(apes, 100*diff/float64(max(e.PeakBytes, APEFloor)))
		c.add(e.PeakBytes > heavyThreshold, d.PredPeak > heavyThreshold)
	}
	m.MAEMiB = absSum / float64(len(val))
	slices.Sort(apes)
	m.P90APE = apes[int(math.Ceil(0.9*float64(len(apes))))-1]
	m.HeavyPrecision, m.HeavyRecall = percent(c.tp, c.tp+c.fp), percent(c.tp, c.tp+c.fn)
	return m
}

// confusion counts heavy-action predictions: true positives, false
// positives and false negatives.
type confusion struct{ tp, fp, fn int }

func (c *confusion) add(actual, predicted bool) {
	switch {
	case actual && predicted:
		c.tp++
	case predicted:
		c.fp++
	case actual:
		c.fn++
	}
}
