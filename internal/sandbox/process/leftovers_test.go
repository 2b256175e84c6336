//go:build linux

package process

import (
	"slices"
	"testing"
)

func TestActionProcs(t *testing.T) {
	// init 10; a background server 20 (running before the action) with a
	// worker 21 and its child 22; the action 30 with a child 31; an orphan
	// 40 adopted by init; 50 whose parent left the sandbox (0).
	parents := map[int]int{10: 1, 20: 10, 21: 20, 22: 21, 30: 10, 31: 30, 40: 10, 50: 0}
	parent := func(p int) int { return parents[p] }
	tests := []struct {
		name    string
		current []int
		before  []int
		want    []int
	}{
		{"nothing before", []int{10, 20, 21, 22, 30, 31, 40, 50}, nil, []int{20, 21, 22, 30, 31, 40, 50}},
		{"a background server and its children are spared", []int{10, 20, 21, 22, 30, 31, 40, 50}, []int{10, 20}, []int{30, 31, 40, 50}},
		{"init alone", []int{10}, []int{10}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := make(map[int]bool)
			for _, p := range tc.before {
				before[p] = true
			}
			got := actionProcs(tc.current, 10, before, parent)
			if !slices.Equal(got, tc.want) {
				t.Errorf("actionProcs = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseStatPpid(t *testing.T) {
	for stat, want := range map[string]int{
		"42 (sleep) S 7 42 1 0 -1": 7,
		"42 (a (b) c) R 9 42 1":    9, // comm with spaces and parentheses
		"42 (x) S":                 0, // truncated
		"nonsense":                 0,
	} {
		if got := parseStatPpid([]byte(stat)); got != want {
			t.Errorf("parseStatPpid(%q) = %d, want %d", stat, got, want)
		}
	}
}
