package predict

import (
	"fmt"
	"math"
	"slices"
)

// Feature sets a model may be trained on.
const (
	FeatureSetCurrent = "current" // class, hints, command and task history
	FeatureSetStatic  = "static"  // class, hints and command only
)

// DefaultHeavyThreshold is the peak above which an action is heavy (Table 2).
const DefaultHeavyThreshold int64 = 1024 * mib

// TrainConfig are the knobs of Train. Zero fields take the defaults shown.
type TrainConfig struct {
	FeatureSet      string  // FeatureSetCurrent (default) or FeatureSetStatic
	Trees           int     // 60
	MaxDepth        int     // 12
	MinLeaf         int     // 3
	FeatureFraction float64 // 0.33
	MaxBins         int     // 64
	Seed            uint64
	// Linear fits memory in MiB instead of log1p(MiB / LogScaleMiB). Log
	// space is the default: peaks are heavily skewed (see the package
	// tests' evaluation).
	Linear bool
	// LogScaleMiB is the memory below which the log target is about
	// linear (DefaultLogScaleMiB).
	LogScaleMiB    float64
	HeavyThreshold int64 // DefaultHeavyThreshold
}

// DefaultLogScaleMiB is the log target's scale: forests fit
// log1p(MiB / DefaultLogScaleMiB). Half the real traces' actions peak below
// 2.2 MiB and many at 0-0.5 MiB (the traces' resolution is 0.1 MiB); with
// log1p(MiB), a scale of 1 MiB, all of those sit near 0 and a leaf mixing
// them with a few 10-50 MiB runs averages to 2-3 MiB, which misses the
// light majority by 200-300 % (the P90 APE of bench/results/predict.md). A
// finer scale keeps the light runs apart in the target, so the leaf's mean
// lands near its typical run; heavy peaks are unchanged (the log of a large
// peak only shifts by a constant).
const DefaultLogScaleMiB = 0.1

func (c TrainConfig) withDefaults() TrainConfig {
	if c.FeatureSet == "" {
		c.FeatureSet = FeatureSetCurrent
	}
	if c.Trees <= 0 {
		c.Trees = 60
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = 12
	}
	if c.MinLeaf <= 0 {
		c.MinLeaf = 3
	}
	if c.FeatureFraction <= 0 || c.FeatureFraction > 1 {
		c.FeatureFraction = 0.33
	}
	if c.MaxBins <= 0 {
		c.MaxBins = 64
	}
	if c.HeavyThreshold <= 0 {
		c.HeavyThreshold = DefaultHeavyThreshold
	}
	if c.LogScaleMiB <= 0 {
		c.LogScaleMiB = DefaultLogScaleMiB
	}
	return c
}

// Model predicts descriptors with three forests (average, peak, heavy risk)
// over the features of its feature set. It implements Predictor and is safe
// for concurrent use.
type Model struct {
	FeatureSet string
	Linear     bool
	// LogScaleMiB is the scale of the log target, log1p(MiB / LogScaleMiB);
	// 1 in model files written before it.
	LogScaleMiB    float64
	HeavyThreshold int64
	IDF            []float64
	Avg, Peak      *Forest
	Heavy          *Forest
	// P90 calibrates PredP90 (PeakQuantile); nil (fewer than two training
	// tasks) makes PredP90 equal PredPeak.
	P90 *Quantile
	// Resident is the median of the sandbox levels (ActionContext.
	// ResidentBytes) known in the training examples, 0 when none was:
	// Predict assumes it for an action whose level is unknown, so that a
	// model trained on recorded levels and asked by a host that does not
	// measure them sees a typical level rather than one it never saw.
	Resident int64
	// TrainTasks are the workflow ids of the training examples, sorted, so
	// that an evaluation can keep them out of its test set and fit its
	// baselines on them.
	TrainTasks []string
}

var _ Predictor = (*Model)(nil)

// Train fits a model to examples. The IDF weights are learned from the
// training commands only.
func Train(examples []Example, cfg TrainConfig) (*Model, error) {
	cfg = cfg.withDefaults()
	if len(examples) == 0 {
		return nil, ErrNoExamples
	}
	var allowed []int
	switch cfg.FeatureSet {
	case FeatureSetCurrent:
		allowed = featureRange(FeatureCount)
	case FeatureSetStatic:
		allowed = featureRange(staticCount)
	default:
		return nil, fmt.Errorf("training: unknown feature set %q (want %q or %q)",
			cfg.FeatureSet, FeatureSetCurrent, FeatureSetStatic)
	}
	cmds := make([]string, len(examples))
	for i, e := range examples {
		cmds[i] = e.Ctx.Command
	}
	m := &Model{FeatureSet: cfg.FeatureSet, Linear: cfg.Linear, LogScaleMiB: cfg.LogScaleMiB,
		HeavyThreshold: cfg.HeavyThreshold, IDF: learnIDF(cmds), TrainTasks: Tasks(examples),
		Resident: medianResident(examples)}
	X := make([][]float64, len(examples))
	ya := make([]float64, len(examples))
	yp := make([]float64, len(examples))
	yh := make([]float64, len(examples))
	for i, e := range examples {
		X[i] = Features(e.Ctx, m.IDF, nil)
		ya[i] = m.toTarget(e.AvgBytes)
		yp[i] = m.toTarget(e.PeakBytes)
		if e.PeakBytes > cfg.HeavyThreshold {
			yh[i] = 1
		}
	}
	fc := ForestConfig{Trees: cfg.Trees, MaxDepth: cfg.MaxDepth, MinLeaf: cfg.MinLeaf,
		FeatureFraction: cfg.FeatureFraction, MaxBins: cfg.MaxBins, Seed: cfg.Seed}
	m.Avg = FitForest(X, ya, allowed, fc)
	fc.Seed = cfg.Seed ^ 0x9e3779b97f4a7c15
	m.Peak = FitForest(X, yp, allowed, fc)
	m.P90 = fitQuantile(examples, X, yp, allowed, fc, PeakQuantile)
	fc.Seed = cfg.Seed ^ 0x3c6ef372fe94f82a
	m.Heavy = FitForest(X, yh, allowed, fc)
	return m, nil
}

// medianResident is the median of the examples' known sandbox levels, 0
// when none is known.
func medianResident(examples []Example) int64 {
	var v []int64
	for _, e := range examples {
		if e.Ctx.ResidentBytes > 0 {
			v = append(v, e.Ctx.ResidentBytes)
		}
	}
	return median(v)
}

// Tasks returns the distinct workflow ids of examples, sorted.
func Tasks(examples []Example) []string {
	var ids []string
	for _, e := range examples {
		ids = append(ids, e.Ctx.WorkflowID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// OfTasks splits examples into those of the given workflow ids and the rest,
// each in order.
func OfTasks(examples []Example, tasks []string) (in, out []Example) {
	set := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		set[t] = true
	}
	for _, e := range examples {
		if set[e.Ctx.WorkflowID] {
			in = append(in, e)
		} else {
			out = append(out, e)
		}
	}
	return in, out
}

func featureRange(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

func (m *Model) toTarget(b int64) float64 {
	v := max(toMiB(b), 0)
	if m.Linear {
		return v
	}
	return math.Log1p(v / m.logScale())
}

// logScale is LogScaleMiB, 1 (log1p(MiB)) where unset.
func (m *Model) logScale() float64 {
	if m.LogScaleMiB > 0 {
		return m.LogScaleMiB
	}
	return 1
}

func (m *Model) fromTarget(v float64) int64 {
	if !m.Linear {
		v = m.logScale() * math.Expm1(v)
	}
	return int64(max(v, 0) * mib)
}

// Name is the model's feature set: "current" or "static".
func (m *Model) Name() string { return m.FeatureSet }

// Predict computes the descriptor of the action in ctx. A model of the
// current feature set (it sees the task's history) raises the forest's peak
// and PredP90 to the median peak of the latest earlier runs of the command
// the action repeats (same class and command skeleton, see Skeleton): the
// repeat floor.
func (m *Model) Predict(ctx ActionContext) Descriptor {
	if ctx.ResidentBytes <= 0 {
		ctx.ResidentBytes = m.Resident
	}
	var buf [FeatureCount]float64
	x := Features(ctx, m.IDF, buf[:])
	cls := NormalizeClass(ctx.Class)
	target := m.Peak.Predict(x)
	peak := m.fromTarget(target)
	p90 := peak
	if m.P90 != nil {
		p90 = max(m.fromTarget(m.P90.bound(target, x)), peak)
	}
	risk := min(max(m.Heavy.Predict(x), 0), 1)
	if m.FeatureSet == FeatureSetCurrent {
		// The repeat floor: a re-run of a program the task already ran
		// is predicted to need at least what its latest runs needed.
		if r, ok := repeatPeak(ctx); ok && r > peak {
			peak, p90 = r, max(p90, r)
			if heavyPeak(r, m.HeavyThreshold) {
				risk = 1
			}
		}
	}
	avg := min(m.fromTarget(m.Avg.Predict(x)), peak)
	return Descriptor{
		Class:     cls,
		PredAvg:   avg,
		PredPeak:  peak,
		PredP90:   p90,
		HeavyRisk: risk,
		Priority:  priorityOf(ctx.Hints),
	}
}
