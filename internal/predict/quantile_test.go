package predict

import (
	"testing"
)

// TestP90CoversNewTasks trains on some synthetic workflows and checks on
// others that PredP90 is never below PredPeak and that the peak stays at or
// below it for about nine actions in ten, where the point prediction alone
// covers far fewer.
func TestP90CoversNewTasks(t *testing.T) {
	train := ExamplesFromWorkflows(synthWorkflows(40, 5))
	test := ExamplesFromWorkflows(synthWorkflows(30, 6))
	m, err := Train(train, TrainConfig{Trees: 30, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.P90 == nil || m.P90.Residual <= 0 {
		t.Fatalf("p90 calibration %+v, want a positive residual quantile", m.P90)
	}
	var above, covered, point int
	for _, e := range test {
		d := m.Predict(e.Ctx)
		if d.PredP90 < d.PredPeak {
			t.Fatalf("p90 %d below peak %d", d.PredP90, d.PredPeak)
		}
		if d.PredP90 > d.PredPeak {
			above++
		}
		if e.PeakBytes <= d.PredP90 {
			covered++
		}
		if e.PeakBytes <= d.PredPeak {
			point++
		}
	}
	cov, pcov := percent(covered, len(test)), percent(point, len(test))
	if cov < 80 || cov > 99 || cov < pcov+20 || above == 0 {
		t.Errorf("p90 covers %.1f %% of %d new actions (point prediction %.1f %%, %d raised): want about 90 and well above the point", cov, len(test), pcov, above)
	}
	s := Score([]Predictor{m, UpperQuantile{m}}, test, ScoreConfig{})
	if s.Predictors[1].Name != "current-p90" || s.P90Coverage[1] != cov || s.Predictors[1].MAEMiB == s.Predictors[0].MAEMiB {
		t.Errorf("UpperQuantile scored %+v coverage %v, want the p90 as the peak", s.Predictors[1], s.P90Coverage)
	}
}

func TestP90NeedsTwoTasks(t *testing.T) {
	ex := ExamplesFromWorkflows(synthWorkflows(1, 5))
	m, err := Train(ex, TrainConfig{Trees: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.P90 != nil {
		t.Fatalf("p90 calibrated on one task: %+v", m.P90)
	}
	if d := m.Predict(ex[0].Ctx); d.PredP90 != d.PredPeak {
		t.Errorf("p90 %d, want the peak %d without a calibration", d.PredP90, d.PredPeak)
	}
}
