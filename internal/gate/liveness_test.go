package gate

import (
	"slices"
	"testing"
	"time"
)

// TestLivenessEscape: in red with H = 0 every growing sandbox is denied;
// once the oldest is overdue it runs alone, unless the escape is off.
func TestLivenessEscape(t *testing.T) {
	tests := []struct {
		name        string
		cfg         Config
		wantRunning []string
		wantNext    []string // a period later
		stall       bool     // the probe burns no CPU once it runs
	}{
		{name: "escape lets the oldest overdue sandbox run alone, and keeps it", cfg: Config{}, wantRunning: []string{"a"}, wantNext: []string{"a"}},
		{name: "without stickiness the probe rotates every period", cfg: Config{NoSticky: true}, wantRunning: []string{"a"}, wantNext: []string{"b"}},
		{name: "a probe that burns no CPU (waiting for memory) gives the slot up", cfg: Config{}, stall: true, wantRunning: []string{"a"}, wantNext: []string{"b"}},
		{name: "algorithm 1 to the letter keeps all denied", cfg: Config{NoLivenessEscape: true}, wantRunning: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, table5(tt.cfg))
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
			h.sb["a"].idle = tt.stall
			if d = h.step(tick); !slices.Equal(d.Permitted, tt.wantNext) {
				t.Errorf("a period later: permitted %v, want %v", d.Permitted, tt.wantNext)
			}
		})
	}
}

// TestDemandCap: a sandbox frozen with a stale, large growth estimate is
// permitted once its demand is capped below the headroom; without a cap it
// stays denied.
func TestDemandCap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cap     int64
		hasCap  bool
		allowed bool
	}{
		{name: "no cap: 500 MiB demand exceeds H", allowed: false},
		{name: "cap 32 MiB fits H", cap: 32 * MiB, hasCap: true, allowed: true},
		{name: "cap above H changes nothing", cap: 400 * MiB, hasCap: true, allowed: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Config{NoLivenessEscape: true})
			now := time.Unix(1_700_000_000, 0)
			obs := func(avail, foot int64, cpu time.Duration) Observation {
				return Observation{Budget: testBudget, Available: avail,
					Sandboxes: []Sample{{ID: "a", Footprint: foot, CPU: cpu, DemandCap: tc.cap, HasCap: tc.hasCap}}}
			}
			// Green: growing at 500 MiB/s with CPU, so the estimate is valid.
			foot, cpu := int64(100*MiB), time.Duration(0)
			for range 6 {
				c.Step(now, obs(testBudget, foot, cpu))
				now, foot, cpu = now.Add(tick), foot+50*MiB, cpu+50*time.Millisecond
			}
			// Yellow (H = 344 MiB) and the sandbox stands still as if frozen.
			// Frozen, the sandbox's estimate stays at 500 MiB/s; count
			// whether the cap ever lets it through.
			var d Decision
			got := false
			for range 40 {
				d = c.Step(now, obs(600*MiB, foot, cpu))
				got = got || slices.Contains(d.Permitted, "a")
				now = now.Add(tick)
			}
			if d.Pressure != Yellow {
				t.Fatalf("pressure %v, want yellow", d.Pressure)
			}
			if got != tc.allowed {
				t.Errorf("ever permitted = %v (H %d MiB), want %v", got, d.Headroom/MiB, tc.allowed)
			}
		})
	}
}
