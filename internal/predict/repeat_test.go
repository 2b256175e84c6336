package predict

import "testing"

func TestRepeatPeak(t *testing.T) {
	hist := []Completed{
		{Class: "test", Command: "python -m pytest tests/a.py", PeakBytes: 600 * mib},
		{Class: "read", Command: "python -m pytest tests/a.py", PeakBytes: 2 * mib},
		{Class: "bash", Command: "ls -la /testbed", PeakBytes: 1 * mib},
		{Class: "test", Command: "python -m pytest tests/b.py -k x", PeakBytes: 300 * mib},
		{Class: "bash", Command: "bash", PeakBytes: 900 * mib},
	}
	tests := []struct {
		name   string
		ctx    ActionContext
		want   int64
		wantOK bool
	}{
		{"two runs of the same skeleton and class: the lower", ActionContext{Class: "test", Command: "python -m pytest tests/c.py", History: hist}, 300 * mib, true},
		{"one run", ActionContext{Class: "test", Command: "python -m pytest tests/c.py", History: hist[:3]}, 600 * mib, true},
		{"median of the latest three runs", ActionContext{Class: "test", Command: "python -m pytest", History: append(hist[:5:5],
			Completed{Class: "test", Command: "python -m pytest -x", PeakBytes: 700 * mib},
			Completed{Class: "test", Command: "python -m pytest -k y", PeakBytes: 800 * mib})}, 700 * mib, true},
		{"same skeleton, other class", ActionContext{Class: "run", Command: "python -m pytest tests/c.py", History: hist}, 0, false},
		{"skeleton not run before", ActionContext{Class: "bash", Command: "cat setup.py", History: hist}, 0, false},
		{"bare tool name never repeats", ActionContext{Class: "bash", Command: "bash", History: hist}, 0, false},
		{"no history", ActionContext{Class: "test", Command: "python -m pytest"}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := repeatPeak(tc.ctx)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("repeatPeak = %d MiB, %v; want %d MiB, %v", got/mib, ok, tc.want/mib, tc.wantOK)
			}
		})
	}
}

// TestModelRepeatFloor checks that a current model raises its peak, upper
// quantile and heavy risk to the last run of the same skeleton, and that a
// static model (no history) does not.
func TestModelRepeatFloor(t *testing.T) {
	train := ExamplesFromWorkflows(synthWorkflows(20, 1))
	hist := []Completed{{Class: "test", Command: "python -m pytest tests/a.py", PeakBytes: 3000 * mib}}
	ctx := ActionContext{WorkflowID: "new", Class: "test", Command: "python -m pytest tests/b.py", History: hist, ElapsedS: 10}
	for _, tc := range []struct {
		set   string
		floor bool
	}{{FeatureSetCurrent, true}, {FeatureSetStatic, false}} {
		m, err := Train(train, TrainConfig{FeatureSet: tc.set, Trees: 10, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		d := m.Predict(ctx)
		if got := d.PredPeak == 3000*mib && d.PredP90 >= d.PredPeak && d.HeavyRisk == 1; got != tc.floor {
			t.Errorf("%s model: peak %d MiB, P90 %d MiB, risk %.2f; floored at the repeat's 3000 MiB: %v, want %v",
				tc.set, d.PredPeak/mib, d.PredP90/mib, d.HeavyRisk, got, tc.floor)
		}
	}
}
