package predict

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
)

// tracesDir holds the 58 AgentCgroup runs (see /work/shared/traces/README.md).
const tracesDir = "../../../shared/traces/agentcgroup-haiku"

// paperTable2 is seed 000 Table 2 (heavy = peak > 1024 MiB).
var paperTable2 = []Metrics{
	{Name: "paper static", MAEMiB: 198.6, P90APE: 442.3, HeavyPrecision: 52.0, HeavyRecall: 80.0},
	{Name: "paper history-only", MAEMiB: 154.3, P90APE: 175.2, HeavyPrecision: 50.7, HeavyRecall: 48.8},
	{Name: "paper current", MAEMiB: 93.9, P90APE: 88.8, HeavyPrecision: 77.3, HeavyRecall: 82.9},
}

// tuneGrid is searched by 5-fold cross-validation on the training tasks only.
var tuneGrid = func() []TrainConfig {
	var g []TrainConfig
	for _, lin := range []bool{false, true} {
		for _, depth := range []int{6, 12} {
			for _, leaf := range []int{2, 5, 10} {
				g = append(g, TrainConfig{Trees: 20, MaxDepth: depth, MinLeaf: leaf, Linear: lin})
			}
		}
	}
	return g
}()

// tune picks the grid point with the lowest cross-validated peak MAE; it
// also returns the best CV MAE in log and in linear target space.
func tune(t *testing.T, train []Example, set string) (TrainConfig, float64, [2]float64) {
	t.Helper()
	cv := folds(train, 5, 3)
	best, bestMAE := TrainConfig{}, -1.0
	space := [2]float64{-1, -1}
	for _, cfg := range tuneGrid {
		cfg.FeatureSet = set
		var sum float64
		var n int
		for _, f := range cv {
			m, err := Train(f[0], cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := Evaluate(m, f[1], 0)
			sum += r.MAEMiB * float64(r.N)
			n += r.N
		}
		mae := sum / float64(n)
		if bestMAE < 0 || mae < bestMAE {
			best, bestMAE = cfg, mae
		}
		k := 0
		if cfg.Linear {
			k = 1
		}
		if space[k] < 0 || mae < space[k] {
			space[k] = mae
		}
	}
	return best, bestMAE, space
}

// TestTable2OnTraces evaluates the three predictors on the real traces:
// tasks are split 80/20 (seed 1); Static and Current are tuned by 5-fold
// cross-validation on the training tasks; the held-out tasks are used once.
// Run with -v to see the table.
func TestTable2OnTraces(t *testing.T) {
	if _, err := os.Stat(tracesDir); err != nil {
		t.Skipf("AgentCgroup traces not available at %s: %v", tracesDir, err)
	}
	if testing.Short() || raceEnabled {
		t.Skip("-short or -race: skipping the trace evaluation (pure computation, run it without -race)")
	}
	wfs, rep, err := agentcgroup.Import(tracesDir)
	if err != nil {
		t.Fatal(err)
	}
	all := ExamplesFromWorkflows(wfs)
	train, val := SplitByTask(all, 0.2, 1)
	if len(val) == 0 || len(train) == 0 {
		t.Fatalf("split of %d examples: %d train, %d validation", len(all), len(train), len(val))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs, %d imported, %d actions; train %d tasks/%d actions, validation %d tasks/%d actions\n",
		rep.Runs, rep.Imported, len(all), len(ids(train)), len(train), len(ids(val)), len(val))
	var preds []Predictor
	for _, set := range []string{FeatureSetStatic, FeatureSetCurrent} {
		cfg, cvMAE, space := tune(t, train, set)
		fmt.Fprintf(&b, "%s: chosen by CV (MAE %.1f MiB; best log1p %.1f, best linear %.1f): depth %d, min leaf %d, linear %v\n",
			set, cvMAE, space[0], space[1], cfg.MaxDepth, cfg.MinLeaf, cfg.Linear)
		cfg.Trees = 0 // the default number of trees for the final model
		m, err := Train(train, cfg)
		if err != nil {
			t.Fatal(err)
		}
		preds = append(preds, m)
	}
	preds = []Predictor{preds[0], NewHistoryOnly(train, 0), preds[1]}
	heavy := func(ex []Example, thr int64) int {
		n := 0
		for _, e := range ex {
			if e.PeakBytes > thr {
				n++
			}
		}
		return n
	}
	for _, thr := range []int64{1024 * mib, 256 * mib} {
		fmt.Fprintf(&b, "\nheavy > %d MiB (%d heavy of %d validation actions)\n", thr/mib, heavy(val, thr), len(val))
		fmt.Fprintf(&b, "%-20s %9s %9s %10s %8s %5s\n", "predictor", "MAE MiB", "P90 APE%", "precision%", "recall%", "n")
		for _, p := range preds {
			m := Evaluate(p, val, thr)
			if m.N != len(val) {
				t.Errorf("%s: evaluated %d of %d", m.Name, m.N, len(val))
			}
			fmt.Fprintf(&b, "%-20s %9.1f %9.1f %10.1f %8.1f %5d\n", m.Name, m.MAEMiB, m.P90APE, m.HeavyPrecision, m.HeavyRecall, m.N)
		}
		if thr == 1024*mib {
			for _, m := range paperTable2 {
				fmt.Fprintf(&b, "%-20s %9.1f %9.1f %10.1f %8.1f %5s\n", m.Name, m.MAEMiB, m.P90APE, m.HeavyPrecision, m.HeavyRecall, "-")
			}
		}
	}
	// Out-of-fold over all tasks (default config, 5 folds by task): every
	// action is predicted by a model that never saw its task, so all heavy
	// actions count.
	oof := foldPredictors{}
	hist := foldPredictors{}
	static := foldPredictors{}
	for _, f := range folds(all, 5, 2) {
		cur, err := Train(f[0], TrainConfig{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		st, err := Train(f[0], TrainConfig{Seed: 1, FeatureSet: FeatureSetStatic})
		if err != nil {
			t.Fatal(err)
		}
		h := NewHistoryOnly(f[0], 0)
		for id := range ids(f[1]) {
			oof[id], static[id], hist[id] = cur, st, h
		}
	}
	for _, thr := range []int64{1024 * mib, 256 * mib} {
		fmt.Fprintf(&b, "\nout-of-fold, all %d actions, heavy > %d MiB (%d heavy)\n", len(all), thr/mib, heavy(all, thr))
		for _, p := range []foldPredictors{static, hist, oof} {
			m := Evaluate(p, all, thr)
			fmt.Fprintf(&b, "%-20s %9.1f %9.1f %10.1f %8.1f %5d\n", m.Name, m.MAEMiB, m.P90APE, m.HeavyPrecision, m.HeavyRecall, m.N)
		}
	}
	t.Log("\n" + b.String())
}

// foldPredictors routes each workflow to the predictor of the fold that held
// it out.
type foldPredictors map[string]Predictor

func (f foldPredictors) Name() string {
	for _, p := range f {
		return p.Name()
	}
	return ""
}

func (f foldPredictors) Predict(ctx ActionContext) Descriptor { return f[ctx.WorkflowID].Predict(ctx) }

// TestP90CoverageOnTraces checks on tasks the model never saw that the
// calibrated upper quantile holds on both real trace sets and across them:
// for five 70/30 task splits of each set, and trained on all of one set and
// tested on the other (seeds 1-3), the share of test peaks at or below
// PredP90 is near 90 % and well above the share at or below the point
// prediction. The per-class residual quantile this replaced covered 77 % of
// batch18's peaks when trained on haiku; the scale forest is what holds it
// there (measured 85.6-95.0 % at the commit that added it, with the
// traces' sandbox levels as a feature; without them, as now, 79.2-95 %,
// the low end batch18 -> haiku: the band's floor is 78).
func TestP90CoverageOnTraces(t *testing.T) {
	haiku, batch := loadBothTraceSets(t)
	type split struct {
		name        string
		train, test []Example
		seed        uint64
	}
	var splits []split
	for seed := uint64(1); seed <= 5; seed++ {
		for _, set := range []struct {
			name string
			ex   []Example
		}{{"haiku", haiku}, {"batch18", batch}} {
			train, test := SplitByTask(set.ex, 0.3, seed)
			splits = append(splits, split{fmt.Sprintf("%s split %d", set.name, seed), train, test, seed})
		}
	}
	for seed := uint64(1); seed <= 3; seed++ {
		splits = append(splits, split{fmt.Sprintf("haiku -> batch18 seed %d", seed), haiku, batch, seed},
			split{fmt.Sprintf("batch18 -> haiku seed %d", seed), batch, haiku, seed})
	}
	for _, sp := range splits {
		m, err := Train(sp.train, TrainConfig{Seed: sp.seed})
		if err != nil {
			t.Fatal(err)
		}
		s := Score([]Predictor{m}, sp.test, ScoreConfig{})
		var point int
		for _, e := range sp.test {
			if e.PeakBytes <= m.Predict(e.Ctx).PredPeak {
				point++
			}
		}
		cov, pcov := s.P90Coverage[0], percent(point, len(sp.test))
		t.Logf("%s: %d test actions, %.1f %% at or below PredP90, %.1f %% at or below PredPeak", sp.name, len(sp.test), cov, pcov)
		if cov < 78 || cov > 97 || cov < pcov+15 {
			t.Errorf("%s: PredP90 covers %.1f %% of the test peaks (point %.1f %%), want 78-97 and 15 points above the point prediction", sp.name, cov, pcov)
		}
	}
}
