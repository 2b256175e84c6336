package predict

import "slices"

// HistoryOnly predicts that an action needs what the preceding completed
// action of the same workflow needed. A workflow's first action gets the
// median of its class in the training set, or the global median for a class
// not seen in training.
type HistoryOnly struct {
	HeavyThreshold int64
	classAvg       map[string]int64
	classPeak      map[string]int64
	avg, peak      int64
}

var _ Predictor = (*HistoryOnly)(nil)

// NewHistoryOnly computes the fallback medians from training examples.
// heavyThreshold 0 means DefaultHeavyThreshold.
func NewHistoryOnly(train []Example, heavyThreshold int64) *HistoryOnly {
	if heavyThreshold <= 0 {
		heavyThreshold = DefaultHeavyThreshold
	}
	h := &HistoryOnly{HeavyThreshold: heavyThreshold,
		classAvg: map[string]int64{}, classPeak: map[string]int64{}}
	avgs, peaks := map[string][]int64{}, map[string][]int64{}
	var allA, allP []int64
	for _, e := range train {
		c := NormalizeClass(e.Ctx.Class)
		avgs[c] = append(avgs[c], e.AvgBytes)
		peaks[c] = append(peaks[c], e.PeakBytes)
		allA = append(allA, e.AvgBytes)
		allP = append(allP, e.PeakBytes)
	}
	for c := range avgs {
		h.classAvg[c] = median(avgs[c])
		h.classPeak[c] = median(peaks[c])
	}
	h.avg, h.peak = median(allA), median(allP)
	return h
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// Name is "history-only".
func (h *HistoryOnly) Name() string { return "history-only" }

// Predict returns the preceding action's demand; HeavyRisk is 1 when that
// demand was heavy.
func (h *HistoryOnly) Predict(ctx ActionContext) Descriptor {
	c := NormalizeClass(ctx.Class)
	d := Descriptor{Class: c, Priority: priorityOf(ctx.Hints)}
	if n := len(ctx.History); n > 0 {
		d.PredAvg, d.PredPeak = ctx.History[n-1].AvgBytes, ctx.History[n-1].PeakBytes
	} else if p, ok := h.classPeak[c]; ok {
		d.PredAvg, d.PredPeak = h.classAvg[c], p
	} else {
		d.PredAvg, d.PredPeak = h.avg, h.peak
	}
	d.PredP90 = d.PredPeak
	if d.PredPeak > h.HeavyThreshold {
		d.HeavyRisk = 1
	}
	return d
}
