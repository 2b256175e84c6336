package predict

import (
	"math"
	"testing"
)

// fixed predicts a peak per workflow id.
type fixed map[string]int64

func (f fixed) Name() string { return "fixed" }
func (f fixed) Predict(ctx ActionContext) Descriptor {
	return Descriptor{PredPeak: f[ctx.WorkflowID]}
}

func TestEvaluate(t *testing.T) {
	const M = 1 << 20
	ex := func(id string, peak int64) Example {
		return Example{Ctx: ActionContext{WorkflowID: id}, PeakBytes: peak}
	}
	val := []Example{
		ex("a", 2000*M), // predicted 1500: true positive, APE 25
		ex("b", 100*M),  // predicted 2000: false positive, APE 1900
		ex("c", 1500*M), // predicted 500: false negative, APE 66.7
		ex("d", 0),      // predicted 1: APE vs the 1 MiB floor = 100
		ex("e", 50*M),   // predicted 50: APE 0
	}
	p := fixed{"a": 1500 * M, "b": 2000 * M, "c": 500 * M, "d": 1 * M, "e": 50 * M}
	m := Evaluate(p, val, 1024*M)
	want := Metrics{Name: "fixed", MAEMiB: (500 + 1900 + 1000 + 1 + 0) / 5.0, P90APE: 1900,
		HeavyPrecision: 50, HeavyRecall: 50, N: 5}
	if math.Abs(m.MAEMiB-want.MAEMiB) > 1e-9 || m.P90APE != want.P90APE || m.HeavyPrecision != want.HeavyPrecision ||
		m.HeavyRecall != want.HeavyRecall || m.N != want.N || m.Name != want.Name {
		t.Errorf("Evaluate = %+v, want %+v", m, want)
	}
	m = Evaluate(p, val, 256*M)
	// At 256 MiB: a, c heavy; predicted heavy a, b, c.
	if m.HeavyPrecision != 100*2.0/3 || m.HeavyRecall != 100 {
		t.Errorf("at 256 MiB precision %v recall %v, want 66.7 and 100", m.HeavyPrecision, m.HeavyRecall)
	}
}

func TestHistoryOnly(t *testing.T) {
	const M = 1 << 20
	train := []Example{
		{Ctx: ActionContext{Class: "test"}, PeakBytes: 100 * M, AvgBytes: 50 * M},
		{Ctx: ActionContext{Class: "test"}, PeakBytes: 300 * M, AvgBytes: 60 * M},
		{Ctx: ActionContext{Class: "test"}, PeakBytes: 200 * M, AvgBytes: 70 * M},
		{Ctx: ActionContext{Class: "read"}, PeakBytes: 1 * M, AvgBytes: 1 * M},
		{Ctx: ActionContext{Class: "read"}, PeakBytes: 3 * M, AvgBytes: 1 * M},
	}
	h := NewHistoryOnly(train, 0)
	tests := []struct {
		name      string
		ctx       ActionContext
		peak, avg int64
		heavy     float64
	}{
		{"class median", ActionContext{Class: "test"}, 200 * M, 60 * M, 0},
		{"global median for unseen class", ActionContext{Class: "build"}, 100 * M, 50 * M, 0},
		{"previous action", ActionContext{Class: "read", History: []Completed{{PeakBytes: 9 * M, AvgBytes: 4 * M}, {PeakBytes: 2000 * M, AvgBytes: 7 * M}}},
			2000 * M, 7 * M, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := h.Predict(tc.ctx)
			if d.PredPeak != tc.peak || d.PredAvg != tc.avg || d.HeavyRisk != tc.heavy {
				t.Errorf("got peak %d avg %d heavy %v, want %d %d %v", d.PredPeak, d.PredAvg, d.HeavyRisk, tc.peak, tc.avg, tc.heavy)
			}
		})
	}
}

func TestStaticModelIgnoresHistory(t *testing.T) {
	ex := ExamplesFromWorkflows(synthWorkflows(30, 8))
	m, err := Train(ex, TrainConfig{FeatureSet: FeatureSetStatic, Trees: 10, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ex[:50] {
		ctx := e.Ctx
		ctx.History, ctx.ElapsedS = nil, 0
		if a, b := m.Predict(e.Ctx), m.Predict(ctx); a != b {
			t.Fatalf("static prediction depends on history: %+v vs %+v", a, b)
		}
	}
	if _, err := Train(ex, TrainConfig{FeatureSet: "psychic"}); err == nil {
		t.Error("unknown feature set accepted")
	}
	if _, err := Train(nil, TrainConfig{}); err != ErrNoExamples {
		t.Errorf("no examples: %v", err)
	}
}

// TestCurrentCombinesBothSignals uses synthetic workflows whose peaks are a
// per-command base times a per-workflow scale: the command alone (Static) or
// the previous action alone (History-only) explains part of it, both together
// (Current) should explain most of it.
func TestCurrentCombinesBothSignals(t *testing.T) {
	train, val := SplitByTask(ExamplesFromWorkflows(synthWorkflows(150, 31)), 0.3, 4)
	cur, err := Train(train, TrainConfig{Seed: 1, Trees: 30})
	if err != nil {
		t.Fatal(err)
	}
	st, err := Train(train, TrainConfig{Seed: 1, Trees: 30, FeatureSet: FeatureSetStatic})
	if err != nil {
		t.Fatal(err)
	}
	mc := Evaluate(cur, val, 256*mib)
	ms := Evaluate(st, val, 256*mib)
	mh := Evaluate(NewHistoryOnly(train, 0), val, 256*mib)
	t.Logf("current %+v\nstatic %+v\nhistory-only %+v", mc, ms, mh)
	if mc.MAEMiB >= 0.8*ms.MAEMiB || mc.MAEMiB >= 0.8*mh.MAEMiB {
		t.Errorf("current MAE %.1f MiB is not clearly below static %.1f and history-only %.1f",
			mc.MAEMiB, ms.MAEMiB, mh.MAEMiB)
	}
	if mc.HeavyRecall < 50 || mc.HeavyPrecision < 50 {
		t.Errorf("current heavy precision %.0f%% recall %.0f%% at 256 MiB, want both >= 50%%", mc.HeavyPrecision, mc.HeavyRecall)
	}
}
