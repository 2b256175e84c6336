package predict

import (
	"slices"
	"testing"
)

// risky predicts a fixed peak and heavy risk per workflow id.
type risky map[string]Descriptor

func (r risky) Name() string                         { return "risky" }
func (r risky) Predict(ctx ActionContext) Descriptor { return r[ctx.WorkflowID] }

func TestScoreAdmissionAndClasses(t *testing.T) {
	const M = 1 << 20
	ex := func(id, class string, peak int64) Example {
		return Example{Ctx: ActionContext{WorkflowID: id, Class: class}, PeakBytes: peak}
	}
	test := []Example{
		ex("a", "test", 200*M), // heavy at 128 MiB; predicted 128 MiB: at the line counts
		ex("b", "test", 128*M), // at the line is heavy for admission, not for Table 2
		ex("c", "Read", 1*M),   // light; risk 0.5 queues it as heavy
		ex("d", "grep", 2*M),   // light, predicted light
		ex("e", "grep", 300*M), // heavy, predicted light: missed
	}
	p := risky{
		"a": {PredPeak: 128 * M}, "b": {PredPeak: 10 * M, HeavyRisk: 0.9},
		"c": {PredPeak: 1 * M, HeavyRisk: AdmissionHeavyRisk}, "d": {PredPeak: 2 * M}, "e": {PredPeak: 2 * M},
	}
	s := Score([]Predictor{p}, test, ScoreConfig{Thresholds: []int64{128 * M}, Budgets: []int64{1024 * M}})
	if s.Examples != 5 || s.Tasks != 5 {
		t.Errorf("examples %d tasks %d, want 5 and 5", s.Examples, s.Tasks)
	}
	// Table 2 at 128 MiB: heavy a, e (b is at the line); predicted heavy none.
	if th := s.Thresholds[0]; th.Heavy != 2 || th.Predictors[0].Recall != 0 || th.Predictors[0].Precision != 0 {
		t.Errorf("threshold score %+v, want 2 heavy, nothing predicted", th)
	}
	// Admission at a 1 GiB budget (line 128 MiB): heavy a, b, e; queued
	// heavy a, b, c.
	ad := s.Admission[0]
	if ad.Threshold != 128*M || ad.Heavy != 3 {
		t.Fatalf("admission line %d heavy %d, want 128 MiB and 3", ad.Threshold/M, ad.Heavy)
	}
	if got := ad.Predictors[0]; got.Recall != 100*2.0/3 || got.Precision != 100*2.0/3 || got.Flagged != 3 || got.Hits != 2 {
		t.Errorf("admission recall %.1f precision %.1f flagged %d hits %d, want 66.7, 66.7, 3 and 2",
			got.Recall, got.Precision, got.Flagged, got.Hits)
	}
	var classes []string
	for _, c := range s.Classes {
		classes = append(classes, c.Class)
	}
	if want := []string{"search", "test", "read"}; !slices.Equal(classes, want) {
		t.Errorf("classes %v, want %v (largest first, normalized)", classes, want)
	}
	if c := s.Classes[0]; c.N != 2 || c.MaxPeak != 300*M || c.Predictors[0].MAEMiB != 149 {
		t.Errorf("search class %+v, want n 2, max 300 MiB, MAE 149", c)
	}
}

func TestTasksAndOfTasks(t *testing.T) {
	ex := ExamplesFromWorkflows(synthWorkflows(6, 1))
	m, err := Train(ex[:len(ex)/2], TrainConfig{Trees: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	in, out := OfTasks(ex, m.TrainTasks)
	if len(in) < len(ex)/2 || len(in)+len(out) != len(ex) {
		t.Fatalf("OfTasks: %d in, %d out of %d", len(in), len(out), len(ex))
	}
	for _, id := range Tasks(out) {
		if slices.Contains(m.TrainTasks, id) {
			t.Errorf("task %s is both trained on and left out", id)
		}
	}
	if !slices.IsSorted(m.TrainTasks) || len(m.TrainTasks) != len(Tasks(in)) {
		t.Errorf("train tasks %v, want the sorted ids of %d tasks", m.TrainTasks, len(Tasks(in)))
	}
}
