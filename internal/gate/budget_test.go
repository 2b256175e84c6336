package gate

import (
	"testing"
	"time"
)

func TestBudgetAIMD(t *testing.T) {
	type obs struct {
		at    time.Duration // since t0
		p     Pressure
		wantB int
	}
	G, Y, R := Green, Yellow, Red
	s := time.Second
	tests := []struct {
		name  string
		steps []obs
	}{
		{"starts at b0 on first green", []obs{{0, G, 1}}},
		{"no increase before 5 s of green", []obs{{0, G, 1}, {4900 * time.Millisecond, G, 1}}},
		{"additive increase after 5 s of green", []obs{{0, G, 1}, {5 * s, G, 2}, {9 * s, G, 2}, {10 * s, G, 3}}},
		{"capped at bmax", []obs{{0, G, 1}, {5 * s, G, 2}, {10 * s, G, 3}, {15 * s, G, 4}, {20 * s, G, 4}, {40 * s, G, 4}}},
		{"late iteration adds one per interval and keeps the remainder",
			[]obs{{0, G, 1}, {12 * s, G, 3}, {14 * s, G, 3}, {15 * s, G, 4}}},
		{"decrease once per severity increase, not per iteration",
			[]obs{{0, G, 1}, {15 * s, G, 4}, {15100 * time.Millisecond, Y, 2}, {15200 * time.Millisecond, Y, 2}, {16 * s, Y, 2}}},
		{"green to red jump is one transition", []obs{{0, G, 1}, {15 * s, G, 4}, {16 * s, R, 2}, {17 * s, R, 2}}},
		{"yellow then red halves twice", []obs{{0, G, 1}, {15 * s, G, 4}, {16 * s, Y, 2}, {17 * s, R, 1}}},
		{"floor at 1", []obs{{0, G, 1}, {1 * s, Y, 1}, {2 * s, R, 1}}},
		{"decrease in pressure leaves b", []obs{{0, G, 1}, {15 * s, G, 4}, {16 * s, R, 2}, {17 * s, Y, 2}, {18 * s, G, 2}}},
		{"each new increase halves again", []obs{{0, G, 1}, {15 * s, G, 4}, {16 * s, Y, 2}, {17 * s, G, 2}, {18 * s, Y, 1}}},
		{"leaving green resets the stability timer",
			[]obs{{0, G, 1}, {4 * s, G, 1}, {4500 * time.Millisecond, Y, 1}, {5 * s, G, 1}, {9900 * time.Millisecond, G, 1}, {10 * s, G, 2}}},
	}
	t0 := time.Unix(1000, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newBudget(1)
			for i, o := range tt.steps {
				if got := u.update(t0.Add(o.at), o.p, 4, 5*time.Second); got != o.wantB {
					t.Fatalf("step %d (t=%v, %v): b = %d, want %d", i, o.at, o.p, got, o.wantB)
				}
			}
		})
	}
}
