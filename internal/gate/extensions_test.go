package gate

import (
	"slices"
	"testing"
)

// TestGreenCheck: after every grower was denied, the previously permitted
// set projects nothing, so Algorithm 1 reads green and releases them all
// at once; the green check runs the iteration as yellow unless the whole
// live set's demand fits.
func TestGreenCheck(t *testing.T) {
	tests := []struct {
		name         string
		cfg          Config
		avail        int64
		wantPressure Pressure
		wantAllowed  int
	}{
		{name: "algorithm 1 to the letter releases every grower", cfg: Config{NoGreenCheck: true}, avail: 1100 * MiB, wantPressure: Green, wantAllowed: 2},
		{name: "green check runs the iteration as yellow", avail: 1100 * MiB, wantPressure: Yellow, wantAllowed: 1},
		{name: "green stays green when everything fits", avail: 2000 * MiB, wantPressure: Green, wantAllowed: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, table5(tt.cfg))
			h.add("x", 300*MiB)
			h.add("y", 300*MiB)
			h.warm(3)
			h.avail = 520 * MiB // H = 264 MiB is below each 300 MiB demand
			for range 10 {      // denied for dmin: eligible again, not overdue
				if d := h.step(tick); d.Pressure == Green || len(d.Permitted) != 0 {
					t.Fatalf("setup: %v permitted %v, want pressure and nothing", d.Pressure, d.Permitted)
				}
			}
			h.avail = tt.avail // memory freed elsewhere; R_prev is 0
			d := h.step(tick)
			if d.RPrev != 0 {
				t.Fatalf("R_prev = %d MiB, want 0", d.RPrev/MiB)
			}
			if d.Pressure != tt.wantPressure || len(d.Permitted) != tt.wantAllowed {
				t.Errorf("%v permitted %v, want %v and %d", d.Pressure, d.Permitted, tt.wantPressure, tt.wantAllowed)
			}
		})
	}
}

// TestStickiness: in yellow with one slot, a newly arrived sandbox (whose
// bootstrap demand is smaller) does not displace the grower that holds the
// slot; with stickiness off, Table 5's smaller-demand order freezes the
// grower half-grown.
func TestStickiness(t *testing.T) {
	tests := []struct {
		name        string
		cfg         Config
		wantAllowed string
	}{
		{name: "permitted grower keeps its slot", wantAllowed: "x"},
		{name: "table 5 to the letter lets the newcomer displace it", cfg: Config{NoSticky: true}, wantAllowed: "y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, table5(tt.cfg))
			h.add("x", 300*MiB)
			h.warm(3)
			h.avail = 1200 * MiB // projected 900 MiB: yellow, b = 1, H = 944 MiB
			d := h.step(tick)
			if d.Pressure != Yellow || !slices.Equal(d.Permitted, []string{"x"}) {
				t.Fatalf("setup: %v permitted %v, want yellow [x]", d.Pressure, d.Permitted)
			}
			h.add("y", 100*MiB)
			d = h.step(tick)
			if d.Pressure != Yellow || !slices.Equal(d.Permitted, []string{tt.wantAllowed}) {
				t.Errorf("%v permitted %v, want yellow [%s]", d.Pressure, d.Permitted, tt.wantAllowed)
			}
		})
	}
}

// TestHolding: a grower permitted for less than DMax keeps its slot even
// against an overdue candidate (the starvation bound becomes DMax per
// holder ahead); without stickiness the overdue one preempts it at once.
func TestHolding(t *testing.T) {
	tests := []struct {
		name        string
		cfg         Config
		wantPreempt bool // the second holder loses the slot within 1.5 s
	}{
		{name: "holder keeps its slot against an overdue candidate", wantPreempt: false},
		{name: "table 5 to the letter: the overdue candidate preempts", cfg: Config{NoSticky: true}, wantPreempt: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, table5(tt.cfg))
			h.add("x", 300*MiB)
			h.add("y", 300*MiB)
			h.add("z", 300*MiB)
			h.warm(3)
			h.avail = 1500 * MiB // projected 1200 of one grower, 600 of all: yellow, b = 1
			d := h.step(tick)
			if d.Pressure != Yellow || len(d.Permitted) != 1 {
				t.Fatalf("setup: %v permitted %v, want yellow and one", d.Pressure, d.Permitted)
			}
			first := d.Permitted[0]
			// Run until another sandbox takes the slot from first.
			var second string
			for range 60 {
				d = h.step(tick)
				if len(d.Permitted) == 1 && d.Permitted[0] != first {
					second = d.Permitted[0]
					break
				}
			}
			if second == "" {
				t.Fatalf("%s kept the slot for 6 s; the others starved", first)
			}
			// The third sandbox is overdue by now: does it preempt second
			// before second has held the slot for DMax?
			preempted := false
			for range 15 {
				d = h.step(tick)
				if len(d.Permitted) != 1 || d.Permitted[0] != second {
					preempted = true
					break
				}
			}
			if preempted != tt.wantPreempt {
				t.Errorf("%s took the slot from %s; preempted within 1.5 s: %v, want %v (then permitted %v)",
					second, first, preempted, tt.wantPreempt, d.Permitted)
			}
		})
	}
}

// TestSeniority: among growers, the one that has grown furthest in its
// current growth episode goes first, a junior does not take the headroom a
// senior is waiting for, and the senior runs as the liveness probe without
// waiting DMax. Table 5's order lets the junior with the smaller demand
// grow instead, and both end half-grown.
func TestSeniority(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		xRate  float64 // the senior's rate; the junior y grows 50 MiB/s
		margin int64   // S: sets H = 1100 MiB - S
		want   []string
	}{
		{name: "the grower furthest along goes first", xRate: 100 * MiB, want: []string{"x"}},
		{name: "table 5: the smaller demand goes first", cfg: Config{NoSeniority: true}, xRate: 100 * MiB, want: []string{"y"}},
		{name: "a junior does not grow past a senior that does not fit; the senior probes", xRate: 300 * MiB, margin: 900 * MiB, want: []string{"x"}},
		{name: "table 5: the junior takes the headroom", cfg: Config{NoSeniority: true}, xRate: 300 * MiB, margin: 900 * MiB, want: []string{"y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.SafetyMargin = tt.margin
			h := seniorAndJunior(t, cfg, tt.xRate) // y: a 15 MiB junior with the smaller demand
			h.avail = 1100 * MiB
			d := h.step(tick)
			if d.Pressure != Yellow || d.B != 1 {
				t.Fatalf("setup: %v b=%d, want yellow b=1", d.Pressure, d.B)
			}
			if !slices.Equal(d.Permitted, tt.want) {
				t.Errorf("permitted %v (H %d MiB), want %v", d.Permitted, d.Headroom/MiB, tt.want)
			}
		})
	}
}

// TestResidentZero: a sandbox at its peak whose estimate is still decaying
// inside the resident band has demand 0 and takes no growth slot; Table 5
// to the letter gives it a slot, which in yellow with b = 1 freezes the
// grower behind it (or, were the grower first, the peaked sandbox).
// Seniority is off so that Table 5's state order puts the resident first.
func TestResidentZero(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		wantDemand bool // the peaked sandbox has positive demand
		want       []string
	}{
		{name: "resident sandboxes take no slot", cfg: Config{NoSeniority: true}, want: []string{"g", "peaked"}},
		{name: "table 5: an in-band positive estimate takes the slot", cfg: Config{NoSeniority: true, NoResidentZero: true}, wantDemand: true, want: []string{"peaked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.cfg)
			h.add("peaked", 3*MiB) // inside the 4 MiB/s band
			h.add("g", 100*MiB)
			h.warm(3)
			h.avail = 1100 * MiB // projected 1000 MiB: yellow, b = 1
			d := h.step(tick)
			if d.Pressure != Yellow || d.B != 1 {
				t.Fatalf("setup: %v b=%d, want yellow b=1", d.Pressure, d.B)
			}
			if s := sbOf(t, d, "peaked"); s.State != Resident || (s.Demand > 0) != tt.wantDemand {
				t.Errorf("peaked: %v demand %d, want resident, positive demand %v", s.State, s.Demand, tt.wantDemand)
			}
			if !slices.Equal(d.Permitted, tt.want) {
				t.Errorf("permitted %v, want %v", d.Permitted, tt.want)
			}
		})
	}
}

// TestSeniorStaysProbeWhenStalled: a senior that does not fit runs as the
// probe and stays it while it uses no CPU at the budget (memory alone is
// red: it may be waiting for memory), and the junior keeps waiting behind
// it; without seniority the junior that fits runs instead.
func TestSeniorStaysProbeWhenStalled(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{name: "the stalled senior keeps the slot", cfg: Config{SafetyMargin: 100 * MiB}, want: []string{"x"}},
		{name: "table 5: the junior runs", cfg: Config{SafetyMargin: 100 * MiB, NoSeniority: true}, want: []string{"y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := seniorAndJunior(t, tc.cfg, 300*MiB)
			// Red by memory alone, below half the red region (512 MiB):
			// at the budget. H = 100 MiB: only y's 50 MiB fits.
			h.avail = 200 * MiB
			h.step(tick)
			h.sb["x"].idle = true
			for i := range 50 {
				if d := h.step(tick); !slices.Equal(d.Permitted, tc.want) {
					t.Fatalf("period %d: permitted %v, want %v", i, d.Permitted, tc.want)
				}
			}
		})
	}
}

// TestJuniorDrain: a senior probe that stops using CPU while memory is not
// at the budget (free at least half the red region) keeps its slot, and
// once the junior is overdue it runs beside it; not while the senior
// moves, not at the budget (TestSeniorStaysProbeWhenStalled), not with
// the drain off, and not a junior whose demand exceeds half of what is
// free.
func TestJuniorDrain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		moving bool    // the senior keeps using CPU
		avail  int64   // free memory; red below 512 MiB
		yRate  float64 // the junior's growth: 5 MiB/s stays below the bootstrap demand (a junior) for 3 s
		want   bool    // y runs beside x within 50 periods
	}{
		{name: "the junior drains beside the stalled senior", avail: 400 * MiB, yRate: 5 * MiB, want: true},
		{name: "not while the senior moves", moving: true, avail: 400 * MiB, yRate: 5 * MiB},
		{name: "not with the drain off", cfg: Config{NoJuniorDrain: true}, avail: 400 * MiB, yRate: 5 * MiB},
		{name: "not a junior larger than half the free memory", avail: 400 * MiB, yRate: 250 * MiB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.SafetyMargin = 500 * MiB // H = 0: no junior fits it
			h := newHarness(t, cfg)
			h.add("x", 300*MiB)
			h.warm(20)
			h.add("y", tc.yRate)
			h.warm(3)
			h.avail = tc.avail
			if d := h.step(tick); d.Pressure != Red || !slices.Equal(d.Permitted, []string{"x"}) {
				t.Fatalf("setup: %v permitted %v, want red and the senior x", d.Pressure, d.Permitted)
			}
			h.sb["x"].idle = !tc.moving
			got := -1
			for i := range 50 {
				d := h.step(tick)
				if !slices.Contains(d.Permitted, "x") {
					t.Fatalf("period %d: permitted %v, the senior lost its slot", i, d.Permitted)
				}
				if got < 0 && slices.Contains(d.Permitted, "y") {
					got = i
				}
			}
			if (got >= 0) != tc.want {
				t.Fatalf("junior ran at period %d (-1: never), want it to run: %v", got, tc.want)
			}
			if tc.want && got < 25 {
				t.Errorf("junior ran at period %d, before it was overdue (DMax 3 s)", got)
			}
		})
	}
}

// seniorAndJunior is a harness where x has grown at xRate for 2 s (the
// senior) and y, growing 50 MiB/s, has just started (the junior).
func seniorAndJunior(t *testing.T, cfg Config, xRate float64) *harness {
	t.Helper()
	h := newHarness(t, cfg)
	h.add("x", xRate)
	h.warm(20)
	h.add("y", 50*MiB)
	h.warm(3)
	return h
}

// TestRestDecay: a senior that ramped up and then rests at its peak (it
// uses no CPU and does not grow while allowed, with memory to spare) has
// its estimate decay to resident, and the junior behind it runs; with rest
// decay off the senior keeps its ramp's rate, and the slot, for as long as
// it rests.
func TestRestDecay(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      Config
		wantJunr bool // y is permitted within 30 periods
	}{
		{name: "the resting senior decays to resident", cfg: Config{SafetyMargin: 900 * MiB}, wantJunr: true},
		{name: "without rest decay (nor the junior drain) it keeps the slot", cfg: Config{SafetyMargin: 900 * MiB, NoRestDecay: true, NoJuniorDrain: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := seniorAndJunior(t, tc.cfg, 300*MiB)
			h.avail = 1100 * MiB // yellow, H = 200 MiB: only y's 50 MiB fits
			if d := h.step(tick); !slices.Equal(d.Permitted, []string{"x"}) {
				t.Fatalf("setup: permitted %v, want the senior x", d.Permitted)
			}
			h.sb["x"].idle = true
			got := false
			var d Decision
			for range 30 {
				d = h.step(tick)
				got = got || slices.Contains(d.Permitted, "y")
			}
			if got != tc.wantJunr {
				t.Errorf("junior permitted within 30 periods = %v, want %v (x: %v, demand %d MiB)", got, tc.wantJunr, sbOf(t, d, "x").State, sbOf(t, d, "x").Demand/MiB)
			}
			if rest := sbOf(t, d, "x").State == Resident; rest != tc.wantJunr {
				t.Errorf("x resident = %v, want %v", rest, tc.wantJunr)
			}
		})
	}
}

// TestHeldBudget: on a held budget yellow permits every grower that fits
// the headroom H, not b of them; red still permits one.
func TestHeldBudget(t *testing.T) {
	tests := []struct {
		name         string
		held         bool
		avail        int64
		wantPressure Pressure
		wantAllowed  int
	}{
		{name: "yellow permits b growers", avail: 1500 * MiB, wantPressure: Yellow, wantAllowed: 1},
		{name: "held yellow permits every grower that fits H", held: true, avail: 1500 * MiB, wantPressure: Yellow, wantAllowed: 3},
		{name: "held red still drains with one grower", held: true, avail: 1000 * MiB, wantPressure: Red, wantAllowed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, table5(Config{HeldBudget: tt.held}))
			for _, id := range []string{"x", "y", "z"} {
				h.add(id, 200*MiB) // demand 200 MiB each over T
			}
			h.warm(3)
			h.avail = tt.avail // R_prev 600 MiB: 1500 MiB projects 900 (yellow), 1000 projects 400 (red)
			d := h.step(tick)
			if d.Pressure != tt.wantPressure || d.B != 1 {
				t.Fatalf("setup: %v b=%d, want %v b=1", d.Pressure, d.B, tt.wantPressure)
			}
			if len(d.Permitted) != tt.wantAllowed {
				t.Errorf("permitted %v, want %d", d.Permitted, tt.wantAllowed)
			}
		})
	}
}

func TestGrowthSlots(t *testing.T) {
	// p, b, candidates, held -> K
	for _, c := range []struct {
		p             Pressure
		b, candidates int
		held          bool
		want          int
	}{
		{Red, 3, 5, false, 1}, {Red, 3, 5, true, 1}, // the red drain
		{Yellow, 3, 5, false, 3}, {Yellow, 3, 5, true, 5}, {Yellow, 3, 0, true, 1},
	} {
		if got := growthSlots(c.p, c.b, c.candidates, c.held); got != c.want {
			t.Errorf("growthSlots(%v, b=%d, %d candidates, held %v) = %d, want %d", c.p, c.b, c.candidates, c.held, got, c.want)
		}
	}
}
