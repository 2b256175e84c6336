package gate

import (
	"slices"
	"testing"
)

// TestLivenessEscape: in red with H = 0 every growing sandbox is denied;
// once the oldest is overdue it runs alone, unless the escape is off.
func TestLivenessEscape(t *testing.T) {
	tests := []struct {
		name        string
		cfg         Config
		wantRunning []string
	}{
		{name: "escape lets the oldest overdue sandbox run alone", cfg: Config{}, wantRunning: []string{"a"}},
		{name: "algorithm 1 to the letter keeps all denied", cfg: Config{NoLivenessEscape: true}, wantRunning: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.cfg)
			h.add("a", 50*MiB)
			h.add("b", 60*MiB)
			h.warm(3)
			h.avail = 100 * MiB // red, and H = max(100 MiB - 256 MiB, 0) = 0
			d := h.step(tick)
			if d.Pressure != Red || len(d.Permitted) != 0 {
				t.Fatalf("first red step: %v permitted %v, want red and none", d.Pressure, d.Permitted)
			}
			// Both denied at the same instant: "a" wins the tie on id.
			for range 29 { // 2.9 s: not yet overdue
				d = h.step(tick)
			}
			if len(d.Permitted) != 0 {
				t.Fatalf("before DMax: permitted %v, want none", d.Permitted)
			}
			d = h.step(tick) // 3.0 s denied: overdue
			if !slices.Equal(d.Permitted, tt.wantRunning) {
				t.Errorf("at DMax: permitted %v, want %v", d.Permitted, tt.wantRunning)
			}
		})
	}
}
