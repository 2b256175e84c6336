package predict

import (
	"slices"
)

// AdmissionHeavyRisk is the heavy risk at or above which admission queues an
// action as heavy by default (admission.Config.HeavyRisk).
const AdmissionHeavyRisk = 0.5

// ScoreConfig are the cuts a Scorecard reports.
type ScoreConfig struct {
	// Thresholds are the heavy lines of Table 2's precision and recall: an
	// action is heavy when its peak is above the line, predicted heavy when
	// its predicted peak is.
	Thresholds []int64
	// Budgets are admission budgets. Admission's heavy line is Budget/8
	// (admission.Config.HeavyThreshold's default) and it queues an action
	// as heavy when the predicted peak is at or above it or the heavy risk
	// is at least AdmissionHeavyRisk.
	Budgets []int64
}

// Scorecard is the evaluation of several predictors on one test set.
type Scorecard struct {
	Examples   int       `json:"examples"`
	Tasks      int       `json:"tasks"`
	Predictors []Metrics `json:"predictors"` // Table 2 metrics at DefaultHeavyThreshold
	// P90Coverage is, per predictor, the share of test actions whose peak
	// is at or below the predicted PredP90 (PredPeak where it is 0), %:
	// about 90 when the quantile is calibrated.
	P90Coverage []float64        `json:"p90_coverage"`
	Thresholds  []ThresholdScore `json:"thresholds"`
	Admission   []BudgetScore    `json:"admission"`
	Classes     []ClassScore     `json:"classes"`
}

// HeavyScore is one predictor's precision and recall of heavy actions, %.
type HeavyScore struct {
	Name      string  `json:"name"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	// Flagged and Hits count the actions predicted heavy and, of them, the
	// truly heavy ones (admission's view only), so that scores of several
	// test sets can be pooled.
	Flagged int `json:"flagged,omitempty"`
	Hits    int `json:"hits,omitempty"`
}

// ThresholdScore is precision and recall at one heavy line.
type ThresholdScore struct {
	Threshold  int64        `json:"threshold_bytes"`
	Heavy      int          `json:"heavy"` // test actions with a peak above the line
	Predictors []HeavyScore `json:"predictors"`
}

// BudgetScore is admission's view at one budget: which truly heavy actions
// (peak at or above Budget/8) it would have queued as heavy.
type BudgetScore struct {
	Budget     int64        `json:"budget_bytes"`
	Threshold  int64        `json:"threshold_bytes"` // Budget/8
	Heavy      int          `json:"heavy"`
	Predictors []HeavyScore `json:"predictors"`
}

// ClassScore is the peak MAE and P90 APE per predictor on one action class.
type ClassScore struct {
	Class      string    `json:"class"`
	N          int       `json:"n"`
	MaxPeak    int64     `json:"max_peak_bytes"`
	Predictors []Metrics `json:"predictors"`
}

// Score evaluates preds on test. Classes are the normalized classes of the
// test actions, largest first.
func Score(preds []Predictor, test []Example, cfg ScoreConfig) Scorecard {
	s := Scorecard{Examples: len(test), Tasks: countTasks(test)}
	for _, p := range preds {
		s.Predictors = append(s.Predictors, Evaluate(p, test, DefaultHeavyThreshold))
		s.P90Coverage = append(s.P90Coverage, p90Coverage(p, test))
	}
	for _, thr := range cfg.Thresholds {
		ts := ThresholdScore{Threshold: thr, Heavy: countHeavy(test, thr, false)}
		for _, p := range preds {
			m := Evaluate(p, test, thr)
			ts.Predictors = append(ts.Predictors, HeavyScore{Name: m.Name, Precision: m.HeavyPrecision, Recall: m.HeavyRecall})
		}
		s.Thresholds = append(s.Thresholds, ts)
	}
	for _, b := range cfg.Budgets {
		thr := b / 8
		bs := BudgetScore{Budget: b, Threshold: thr, Heavy: countHeavy(test, thr, true)}
		for _, p := range preds {
			bs.Predictors = append(bs.Predictors, admissionHeavy(p, test, thr))
		}
		s.Admission = append(s.Admission, bs)
	}
	byClass := map[string][]Example{}
	for _, e := range test {
		c := NormalizeClass(e.Ctx.Class)
		byClass[c] = append(byClass[c], e)
	}
	for c, ex := range byClass {
		cs := ClassScore{Class: c, N: len(ex)}
		for _, e := range ex {
			cs.MaxPeak = max(cs.MaxPeak, e.PeakBytes)
		}
		for _, p := range preds {
			cs.Predictors = append(cs.Predictors, Evaluate(p, ex, DefaultHeavyThreshold))
		}
		s.Classes = append(s.Classes, cs)
	}
	slices.SortFunc(s.Classes, func(a, b ClassScore) int {
		if a.N != b.N {
			return b.N - a.N
		}
		if a.Class < b.Class {
			return -1
		}
		return 1
	})
	return s
}

// admissionHeavy is the precision and recall of admission's heavy queue:
// heavy are actions whose peak is at or above thr, queued as heavy those
// whose predicted peak is at or above thr or whose risk is at least
// AdmissionHeavyRisk.
func admissionHeavy(p Predictor, test []Example, thr int64) HeavyScore {
	var c confusion
	for _, e := range test {
		d := p.Predict(e.Ctx)
		c.add(e.PeakBytes >= thr, d.PredPeak >= thr || d.HeavyRisk >= AdmissionHeavyRisk)
	}
	return HeavyScore{Name: p.Name(), Precision: percent(c.tp, c.tp+c.fp), Recall: percent(c.tp, c.tp+c.fn),
		Flagged: c.tp + c.fp, Hits: c.tp}
}

func p90Coverage(p Predictor, test []Example) float64 {
	n := 0
	for _, e := range test {
		d := p.Predict(e.Ctx)
		q := d.PredP90
		if q == 0 {
			q = d.PredPeak
		}
		if e.PeakBytes <= q {
			n++
		}
	}
	return percent(n, len(test))
}

func percent(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func countHeavy(ex []Example, thr int64, atOrAbove bool) int {
	n := 0
	for _, e := range ex {
		if e.PeakBytes > thr || atOrAbove && e.PeakBytes == thr {
			n++
		}
	}
	return n
}

func countTasks(ex []Example) int {
	seen := map[string]bool{}
	for _, e := range ex {
		seen[e.Ctx.WorkflowID] = true
	}
	return len(seen)
}
