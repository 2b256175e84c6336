package app

import (
	"math"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

func TestGenerateWorkloadOversub(t *testing.T) {
	tests := []struct {
		name    string
		oversub float64
	}{
		{"light", 1.5},
		{"like the live runs", 4.75},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wfs, err := GenerateWorkload("swe", 40, 1, 0, tc.oversub, 8<<30)
			if err != nil {
				t.Fatal(err)
			}
			if got := trajectory.Oversubscription(wfs, 8<<30); math.Abs(got-tc.oversub) > 0.05*tc.oversub {
				t.Fatalf("oversubscription %.2f, want %.2f", got, tc.oversub)
			}
		})
	}
}

func TestSimulate(t *testing.T) {
	tests := []struct {
		name     string
		policies []string
		train    string
		wantErr  string
	}{
		{"eager and tenon", []string{"eager", "tenon"}, "auto", ""},
		{"unknown policy", []string{"eager", "tenno"}, "auto", "tenno"},
		{"unknown training mode", []string{"tenon"}, "psychic", "--train"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Simulate(t.Context(), SimConfig{Kind: "swe", N: 6, Seed: 1, Oversub: 3, Policies: tt.policies,
				Budget: 1 << 30, Retries: 5, Train: tt.train})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Comparison.Results) != len(tt.policies) || len(res.Holds) != len(tt.policies) {
				t.Fatalf("%d results, %d hold records; want %d each", len(res.Comparison.Results), len(res.Holds), len(tt.policies))
			}
			for i, m := range res.Comparison.Results {
				if m.Policy != res.Holds[i].Policy || m.Workflows != 6 {
					t.Errorf("result %d: %s with %d workflows, hold record of %s", i, m.Policy, m.Workflows, res.Holds[i].Policy)
				}
			}
		})
	}
}

// TestSimulateTimeScale: given workflows at a time scale, Simulate runs
// them compressed as a live replay does: the simulated makespan shrinks
// with the scale and the comparison records it.
func TestSimulateTimeScale(t *testing.T) {
	wfs := testWorkflows(t, 4)
	makespan := func(scale float64) float64 {
		t.Helper()
		res, err := Simulate(t.Context(), SimConfig{Workflows: wfs, TimeScale: scale, Policies: []string{"eager"}, Budget: 8 << 30, Retries: 5, Train: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		want := scale
		if scale == 0 {
			want = 1
		}
		if got := res.Comparison.TimeScale; got != want {
			t.Errorf("scale %g: comparison time scale %g, want %g", scale, got, want)
		}
		return float64(res.Comparison.Results[0].MakespanS)
	}
	full, half := makespan(0), makespan(0.5)
	if !(half > 0 && half < 0.6*full) {
		t.Errorf("makespan %g s at scale 0.5, %g s unscaled; want about half", half, full)
	}
}
