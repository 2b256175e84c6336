package predict

import (
	"fmt"
	"slices"
	"testing"
)

type constPredictor Descriptor

func (c constPredictor) Name() string                     { return "const" }
func (c constPredictor) Predict(ActionContext) Descriptor { return Descriptor(c) }

func TestClassFloor(t *testing.T) {
	const mib = 1 << 20
	base := constPredictor{Class: "test", PredAvg: 50 * mib, PredPeak: 100 * mib, PredP90: 200 * mib, HeavyRisk: 0.1}
	for _, tc := range []struct {
		name      string
		class     string
		history   []Completed
		wantPeak  int64
		wantHeavy float64
	}{
		{name: "no history keeps the prediction", class: "test", wantPeak: 100 * mib, wantHeavy: 0.1},
		{name: "a smaller same-class peak keeps it", class: "test",
			history: []Completed{{Class: "test", PeakBytes: 80 * mib}}, wantPeak: 100 * mib, wantHeavy: 0.1},
		{name: "a larger same-class peak raises it and marks heavy", class: "test",
			history: []Completed{{Class: "test", PeakBytes: 600 * mib}, {Class: "test", PeakBytes: 300 * mib}}, wantPeak: 600 * mib, wantHeavy: 1},
		{name: "a larger peak of another class does not", class: "test",
			history: []Completed{{Class: "build", PeakBytes: 900 * mib}}, wantPeak: 100 * mib, wantHeavy: 0.1},
		{name: "a raise below the heavy threshold keeps the risk", class: "test",
			history: []Completed{{Class: "test", PeakBytes: 150 * mib}}, wantPeak: 150 * mib, wantHeavy: 0.1},
		{name: "a raise above the p90 raises the p90", class: "test",
			history: []Completed{{Class: "test", PeakBytes: 250 * mib}}, wantPeak: 250 * mib, wantHeavy: 0.1},
		{name: "the first of its class gets the class prior", class: "build",
			history: []Completed{{Class: "test", PeakBytes: 900 * mib}}, wantPeak: 500 * mib, wantHeavy: 1},
		{name: "a same-class peak before the latest three does not raise it", class: "test",
			history: []Completed{{Class: "test", PeakBytes: 600 * mib}, {Class: "test", PeakBytes: 80 * mib},
				{Class: "build", PeakBytes: 20 * mib}, {Class: "test", PeakBytes: 90 * mib}, {Class: "test", PeakBytes: 50 * mib}},
			wantPeak: 100 * mib, wantHeavy: 0.1},
		{name: "the largest of the latest three same-class peaks raises it", class: "test",
			history: []Completed{{Class: "test", PeakBytes: 80 * mib}, {Class: "test", PeakBytes: 300 * mib},
				{Class: "build", PeakBytes: 900 * mib}, {Class: "test", PeakBytes: 50 * mib}, {Class: "test", PeakBytes: 60 * mib}},
			wantPeak: 300 * mib, wantHeavy: 1},
		{name: "a class seen in the workflow uses its history, not the prior", class: "build",
			history: []Completed{{Class: "build", PeakBytes: 40 * mib}}, wantPeak: 100 * mib, wantHeavy: 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ClassFloor{P: base, HeavyThreshold: 256 * mib, Prior: map[string]int64{"build": 500 * mib}}
			d := p.Predict(ActionContext{Class: tc.class, History: tc.history})
			if d.PredPeak != tc.wantPeak || d.HeavyRisk != tc.wantHeavy {
				t.Errorf("peak %d MiB risk %g, want %d MiB risk %g", d.PredPeak/mib, d.HeavyRisk, tc.wantPeak/mib, tc.wantHeavy)
			}
			if want := max(base.PredP90, tc.wantPeak); d.PredP90 != want {
				t.Errorf("p90 %d MiB, want %d MiB (raised to the floor, never lowered)", d.PredP90/mib, want/mib)
			}
			if d.PredAvg != base.PredAvg {
				t.Errorf("avg changed: %d", d.PredAvg)
			}
		})
	}
}

func TestClassPriors(t *testing.T) {
	ex := func(class string, peak int64) Example {
		return Example{Ctx: ActionContext{Class: class}, PeakBytes: peak}
	}
	var exs []Example
	for i := int64(1); i <= 10; i++ {
		exs = append(exs, ex("test", i*100))
	}
	exs = append(exs, ex("build", 7))
	got := ClassPriors(exs, 0.9)
	if got["test"] != 900 || got["build"] != 7 || len(got) != 2 {
		t.Errorf("priors = %v, want test 900 (p90 of 100..1000), build 7", got)
	}
}

// TestFirstOfClassPriors: the prior comes from the actions it is applied to.
// A task's first test is light and its later tests heavy, so the p90 of
// every test is heavy while the p90 of first tests is light.
func TestFirstOfClassPriors(t *testing.T) {
	var exs []Example
	for w := range 10 {
		var hist []Completed
		for i, peak := range []int64{10 + int64(w), 500, 600} {
			exs = append(exs, Example{Ctx: ActionContext{WorkflowID: fmt.Sprint("w", w), Class: "test", History: slices.Clone(hist)}, PeakBytes: peak})
			hist = append(hist, Completed{Class: "test", PeakBytes: peak})
			if i == 0 {
				exs = append(exs, Example{Ctx: ActionContext{WorkflowID: fmt.Sprint("w", w), Class: "read", History: slices.Clone(hist)}, PeakBytes: 3})
				hist = append(hist, Completed{Class: "read", PeakBytes: 3})
			}
		}
	}
	first := FirstOfClass(exs)
	if len(first) != 20 {
		t.Fatalf("FirstOfClass kept %d examples, want 20 (one test and one read per workflow)", len(first))
	}
	if got := ClassPriors(first, 0.9); got["test"] != 18 || got["read"] != 3 {
		t.Errorf("priors of first actions = %v, want the p90 of the first tests (18) and read 3", got)
	}
	if got := ClassPriors(exs, 0.9); got["test"] != 600 {
		t.Errorf("priors of every action = %v, want test 600: the test would not tell the two apart", got)
	}
}
