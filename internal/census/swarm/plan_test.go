package swarm

import (
	"fmt"
	"slices"
	"testing"
)

func TestRoundPlan(t *testing.T) {
	tests := []struct {
		name  string
		round int
		want  Steps
	}{
		{name: "round 1", round: 1, want: Steps{Grep: true, Edit: true}},
		{name: "round 2 tests", round: 2, want: Steps{Grep: true, Edit: true, Test: true}},
		{name: "round 3 builds", round: 3, want: Steps{Grep: true, Edit: true, Build: true}},
		{name: "round 4 tests", round: 4, want: Steps{Grep: true, Edit: true, Test: true}},
		{name: "round 5", round: 5, want: Steps{Grep: true, Edit: true}},
		{name: "round 6 both", round: 6, want: Steps{Grep: true, Edit: true, Build: true, Test: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RoundPlan(tt.round); got != tt.want {
				t.Errorf("RoundPlan(%d) = %+v, want %+v", tt.round, got, tt.want)
			}
		})
	}
}

func TestRoundPlanCounts(t *testing.T) {
	var build, test int
	for r := 1; r <= 60; r++ {
		s := RoundPlan(r)
		if s.Build {
			build++
		}
		if s.Test {
			test++
		}
	}
	if build != 20 || test != 30 {
		t.Errorf("over 60 rounds: %d builds, %d tests; want 20 and 30", build, test)
	}
}

func picks(seed int64, index, n int, files []string) []string {
	p := NewPicker(seed, index)
	out := make([]string, n)
	for i := range out {
		out[i] = p.File(files)
	}
	return out
}

func TestPickerDeterminism(t *testing.T) {
	files := make([]string, 50)
	for i := range files {
		files[i] = fmt.Sprintf("pkg/f%02d.go", i)
	}
	tests := []struct {
		name           string
		seedA, seedB   int64
		indexA, indexB int
		wantSame       bool
	}{
		{name: "same seed and index", seedA: 1, seedB: 1, indexA: 3, indexB: 3, wantSame: true},
		{name: "other index", seedA: 1, seedB: 1, indexA: 3, indexB: 4},
		{name: "other seed", seedA: 1, seedB: 2, indexA: 3, indexB: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := picks(tt.seedA, tt.indexA, 20, files)
			b := picks(tt.seedB, tt.indexB, 20, files)
			if same := slices.Equal(a, b); same != tt.wantSame {
				t.Errorf("sequences equal = %v, want %v:\n%v\n%v", same, tt.wantSame, a, b)
			}
			for _, f := range a {
				if !slices.Contains(files, f) {
					t.Fatalf("picked %q, not a candidate", f)
				}
			}
		})
	}
}

func TestPickerEmpty(t *testing.T) {
	if got := NewPicker(1, 0).File(nil); got != "" {
		t.Errorf("File(nil) = %q, want empty", got)
	}
	if got := NewPicker(1, 0).Pattern(); !slices.Contains(grepPatterns, got) {
		t.Errorf("Pattern() = %q, not a known pattern", got)
	}
}
