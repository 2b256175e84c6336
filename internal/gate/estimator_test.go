package gate

import (
	"testing"
	"time"
)

func TestEstimatorLabel(t *testing.T) {
	const band = 4 * MiB
	tests := []struct {
		name  string
		valid bool
		rate  float64
		want  State
	}{
		{"no estimate is growing", false, 0, Growing},
		{"above band is growing", true, 5 * MiB, Growing},
		{"at upper band edge is resident", true, 4 * MiB, Resident},
		{"zero is resident", true, 0, Resident},
		{"at lower band edge is resident", true, -4 * MiB, Resident},
		{"below band is cooling", true, -5 * MiB, Cooling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := estimator{valid: tt.valid, rate: tt.rate}
			if got := e.label(band); got != tt.want {
				t.Errorf("label(%v MiB/s) = %v, want %v", tt.rate/MiB, got, tt.want)
			}
		})
	}
}

func TestEstimatorDemand(t *testing.T) {
	const boot = 16 * MiB
	tests := []struct {
		name  string
		valid bool
		rate  float64
		want  int64
	}{
		{"bootstrap until valid", false, 100 * MiB, boot},
		{"rate times horizon", true, 10 * MiB, 10 * MiB},
		{"resident band still positive demand", true, 2 * MiB, 2 * MiB},
		{"tiny positive rate rounds up", true, 0.25, 1},
		{"negative rate is zero", true, -10 * MiB, 0},
		{"zero rate is zero", true, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := estimator{valid: tt.valid, rate: tt.rate}
			if got := e.demand(time.Second, boot); got != tt.want {
				t.Errorf("demand = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestEstimatorValidity(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type sample struct {
		at        time.Time
		foot      int64
		cpu       time.Duration
		flipAfter bool // a permission change is published after this sample
		wantValid bool
	}
	tests := []struct {
		name      string
		samples   []sample
		wantRate  float64
		wantValid bool
	}{
		{"first sample only sets the baseline", []sample{{ms(0), 100 * MiB, 1, false, false}}, 0, false},
		{"first valid sample initializes the ewma",
			[]sample{{ms(0), 100 * MiB, 1, false, false}, {ms(100), 110 * MiB, 2, false, true}}, 100 * MiB, true},
		{"ewma with alpha 0.35",
			[]sample{{ms(0), 100 * MiB, 1, false, false}, {ms(100), 110 * MiB, 2, false, true}, {ms(200), 130 * MiB, 3, false, true}},
			0.35*200*MiB + 0.65*100*MiB, true},
		{"no cpu increase is invalid",
			[]sample{{ms(0), 100 * MiB, 1, false, false}, {ms(100), 100 * MiB, 1, false, false}}, 0, false},
		{"permission change interval is invalid",
			[]sample{{ms(0), 100 * MiB, 1, true, false}, {ms(100), 150 * MiB, 2, false, false}}, 0, false},
		{"baseline refreshed across invalid intervals",
			[]sample{{ms(0), 100 * MiB, 1, false, false}, {ms(100), 400 * MiB, 1, false, false}, {ms(200), 410 * MiB, 2, false, true}},
			100 * MiB, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e estimator
			for i, s := range tt.samples {
				if got := e.observe(s.at, s.foot, s.cpu, 0.35, false, false); got != s.wantValid {
					t.Fatalf("sample %d valid = %v, want %v", i, got, s.wantValid)
				}
				e.permFlip = s.flipAfter
			}
			if e.valid != tt.wantValid || !approx(e.rate, tt.wantRate) {
				t.Errorf("estimate = (%v, %v MiB/s), want (%v, %v MiB/s)", e.valid, e.rate/MiB, tt.wantValid, tt.wantRate/MiB)
			}
		})
	}
}

// TestEstimatorRest: an allowed sandbox's interval without CPU is valid when
// its footprint did not grow (it rests), not when it grew (something else
// charged it: the interval says nothing about its rate) or when it was not
// allowed.
func TestEstimatorRest(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name      string
		rest      bool
		foot      int64 // the second sample's footprint; the first is 200 MiB
		wantValid bool
		wantRate  float64
	}{
		{name: "resting: the estimate decays", rest: true, foot: 200 * MiB, wantValid: true, wantRate: 0.65 * 100 * MiB},
		{name: "shrinking while resting counts", rest: true, foot: 190 * MiB, wantValid: true, wantRate: 0.35*-100*MiB + 0.65*100*MiB},
		{name: "growth without CPU is invalid", rest: true, foot: 210 * MiB},
		{name: "denied: invalid", foot: 200 * MiB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := estimator{valid: true, rate: 100 * MiB, hasBase: true, baseTime: t0, baseFoot: 200 * MiB, baseCPU: time.Second}
			if got := e.observe(t0.Add(100*time.Millisecond), tc.foot, time.Second, 0.35, true, tc.rest); got != tc.wantValid {
				t.Fatalf("valid = %v, want %v", got, tc.wantValid)
			}
			want := 100.0 * MiB
			if tc.wantValid {
				want = tc.wantRate
			}
			if !approx(e.rate, want) {
				t.Errorf("rate = %.1f MiB/s, want %.1f", e.rate/MiB, want/MiB)
			}
		})
	}
}

func approx(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-6*max(1, abs(a), abs(b))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestEstimatorFastAttack: with fast attack a burst sets the estimate at
// once instead of reaching it over several EWMA steps; the decay is the
// EWMA's either way.
func TestEstimatorFastAttack(t *testing.T) {
	tests := []struct {
		name      string
		fast      bool
		wantBurst float64 // estimate after one 100 ms interval at 1000 MiB/s
		wantDecay float64 // then after one idle-but-valid interval
	}{
		{name: "ewma (Table 5)", fast: false, wantBurst: 0.35 * 1000 * MiB, wantDecay: 0.65 * 0.35 * 1000 * MiB},
		{name: "fast attack", fast: true, wantBurst: 1000 * MiB, wantDecay: 0.65 * 1000 * MiB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t0 := time.Unix(1_700_000_000, 0)
			var e estimator
			e.observe(t0, 100*MiB, 1*time.Second, 0.35, tt.fast, false)
			e.observe(t0.Add(100*time.Millisecond), 100*MiB, 2*time.Second, 0.35, tt.fast, false) // resident: rate 0
			e.observe(t0.Add(200*time.Millisecond), 200*MiB, 3*time.Second, 0.35, tt.fast, false) // +100 MiB in 100 ms
			if diff := e.rate - tt.wantBurst; diff > 1 || diff < -1 {
				t.Errorf("after the burst rate = %.1f MiB/s, want %.1f", e.rate/MiB, tt.wantBurst/MiB)
			}
			e.observe(t0.Add(300*time.Millisecond), 200*MiB, 4*time.Second, 0.35, tt.fast, false)
			if diff := e.rate - tt.wantDecay; diff > 1 || diff < -1 {
				t.Errorf("after the pause rate = %.1f MiB/s, want %.1f", e.rate/MiB, tt.wantDecay/MiB)
			}
		})
	}
}
