package predict

import (
	"slices"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TestFeaturesAreCausal changes the Recorded values of one action (and of
// every later one) and checks that its features and those of all earlier
// actions stay the same, while later actions do see its new outcome.
func TestFeaturesAreCausal(t *testing.T) {
	wfs := synthWorkflows(3, 9)
	idf := learnIDF([]string{"git diff", "pip install -e .", "python -m pytest"})
	before := ExamplesFromWorkflows(wfs)
	const target = 4
	for i := target; i < len(wfs[0].Actions); i++ {
		r := *wfs[0].Actions[i].Recorded
		r.PeakMiB, r.AvgMiB, r.DurationS = r.PeakMiB*10+7, r.AvgMiB*3+1, r.DurationS+100
		wfs[0].Actions[i].Recorded = &r
	}
	after := ExamplesFromWorkflows(wfs)
	if len(before) != len(after) {
		t.Fatalf("example count changed: %d vs %d", len(before), len(after))
	}
	for i := range before {
		b, a := before[i], after[i]
		fb, fa := Features(b.Ctx, idf, nil), Features(a.Ctx, idf, nil)
		same := slices.Equal(fb, fa)
		switch {
		case a.Ctx.WorkflowID != "wf-000" || a.Index <= target:
			if !same {
				t.Errorf("%s action %d: features changed when action %d's outcome changed", a.Ctx.WorkflowID, a.Index, target)
			}
		case a.Index > target && same:
			t.Errorf("wf-000 action %d: features ignore the completed history", a.Index)
		}
		if a.Ctx.WorkflowID == "wf-000" && a.Index == target && a.PeakBytes == b.PeakBytes {
			t.Errorf("the label of action %d did not change: the test is not testing anything", target)
		}
	}
}

func TestHistoryFeatures(t *testing.T) {
	const M = 1 << 20
	hist := []Completed{
		{Class: "read", PeakBytes: 10 * M, AvgBytes: 5 * M, DurationS: 1, EndOffsetS: 3},
		{Class: "test", PeakBytes: 400 * M, AvgBytes: 200 * M, DurationS: 20, EndOffsetS: 30, ResidentBytes: 150 * M},
		{Class: "read", Command: "a.py", PeakBytes: 4 * M, AvgBytes: 2 * M, DurationS: 2, EndOffsetS: 40, ResidentBytes: 170 * M},
		{Class: "edit", PeakBytes: 1 * M, AvgBytes: 1 * M, DurationS: 1, EndOffsetS: 45, ResidentBytes: 160 * M},
	}
	// The history columns after the eleven of the first layout: resident
	// now and its growth since the first measured level (-1: not
	// measured), peak trend, peaks at or above 64 and 256 MiB, and actions
	// since the latest one at or above 64 MiB.
	tests := []struct {
		name string
		ctx  ActionContext
		want []float64
	}{
		{"first action", ActionContext{Class: "test", ElapsedS: 5},
			[]float64{0, 0, 0, 0, 0, 0, 5, 5, -1, -1, -1, -1, -1, 0, 0, 0, -1}},
		{"first action, resident measured", ActionContext{Class: "test", ElapsedS: 5, ResidentBytes: 180 * M},
			[]float64{0, 0, 0, 0, 0, 0, 5, 5, -1, -1, -1, 180, 0, 0, 0, 0, -1}},
		// Trend: the latest two peaks (4, 1) against the two before (10, 400).
		{"same class and command seen", ActionContext{Class: "Read", Command: "a.py", History: hist, ElapsedS: 50, ResidentBytes: 200 * M},
			[]float64{4, 1, 400, (400 + 4 + 1) / 3.0, 1, 1, 50, 5, 4, 10, 4, 200, 50, 2.5 - 205, 1, 1, 3}},
		{"class unseen, resident not measured", ActionContext{Class: "build", Command: "a.py", History: hist[:2], ElapsedS: 31},
			[]float64{2, 400, 400, 205, 200, 20, 31, 1, -1, -1, -1, -1, -1, 390, 1, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := Features(tc.ctx, nil, nil)
			if got := x[offHistory:]; !slices.Equal(got, tc.want) {
				t.Errorf("history features %v, want %v", got, tc.want)
			}
			if x[offClass+classIndex(tc.ctx.Class)] != 1 {
				t.Errorf("class one-hot not set")
			}
		})
	}
}

func TestNormalizeClass(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Bash", "bash"}, {"test", "test"}, {"TodoWrite", "todo"}, {"Grep", "search"},
		{"websearch", "web"}, {"killshell", "other"}, {"", "other"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := NormalizeClass(tc.in); got != tc.want {
				t.Errorf("NormalizeClass(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCommandFeaturesNormalized(t *testing.T) {
	x := Features(ContextFor("w", trajectory.Action{Class: "bash", Command: "python -m pytest tests/a.py -x"}, nil, 0), nil, nil)
	var norm float64
	for _, v := range x[offTokens:offHistory] {
		norm += v * v
	}
	if norm < 0.999 || norm > 1.001 {
		t.Errorf("TF-IDF vector squared norm %v, want 1", norm)
	}
	empty := Features(ContextFor("w", trajectory.Action{Class: "bash"}, nil, 0), nil, nil)
	for _, v := range empty[offTokens:offHistory] {
		if v != 0 {
			t.Fatalf("empty command has token features %v", empty[offTokens:offHistory])
		}
	}
}

// TestUnknownResidentIsTheTrainingMedian checks that a model trained on
// recorded sandbox levels predicts an action whose level is unknown (a
// host that does not measure it) as if the sandbox held the training
// median, not a level it never saw.
func TestUnknownResidentIsTheTrainingMedian(t *testing.T) {
	ex := ExamplesFromWorkflows(synthWorkflows(30, 3))
	m, err := Train(ex, TrainConfig{Trees: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var levels []int64
	for _, e := range ex {
		levels = append(levels, e.Ctx.ResidentBytes)
	}
	if m.Resident != median(levels) || m.Resident <= 0 {
		t.Fatalf("model median level %d, want the examples' %d", m.Resident, median(levels))
	}
	differs := false
	for _, e := range ex {
		known := e.Ctx
		known.ResidentBytes = m.Resident
		unknown := e.Ctx
		unknown.ResidentBytes = 0
		if a, b := m.Predict(unknown), m.Predict(known); a != b {
			t.Fatalf("%s/%d: unknown level predicted %+v, at the median level %+v", e.Ctx.WorkflowID, e.Index, a, b)
		}
		differs = differs || m.Predict(e.Ctx) != m.Predict(unknown)
	}
	if !differs {
		t.Error("no prediction depends on the level: the test is not testing anything")
	}
}
