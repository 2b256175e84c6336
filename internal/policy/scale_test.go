package policy

import (
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

func TestScaledGate(t *testing.T) {
	def := gate.DefaultConfig()
	tests := []struct {
		name  string
		cfg   gate.Config
		scale float64
		want  gate.Config
	}{
		{name: "real time unchanged", cfg: gate.Config{YellowFraction: 0.1}, scale: 1, want: gate.Config{YellowFraction: 0.1}},
		{name: "unset scale unchanged", scale: 0, want: gate.Config{}},
		{name: "five times faster", scale: 0.2, want: gate.Config{
			Period: 20 * time.Millisecond, Horizon: 200 * time.Millisecond, DMin: 200 * time.Millisecond,
			DMax: 600 * time.Millisecond, StableInterval: time.Second, ResidentBand: def.ResidentBand * 5}},
		{name: "period floor and set values scale", cfg: gate.Config{Period: 50 * time.Millisecond, DMax: 4 * time.Second, YellowFraction: 0.2}, scale: 0.1, want: gate.Config{
			Period: 20 * time.Millisecond, Horizon: 100 * time.Millisecond, DMin: 100 * time.Millisecond,
			DMax: 400 * time.Millisecond, StableInterval: 500 * time.Millisecond, ResidentBand: def.ResidentBand * 10, YellowFraction: 0.2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scaledGate(tt.cfg, tt.scale)
			// Compare durations to the microsecond (float rounding).
			near := func(a, b time.Duration) bool { d := a - b; return d < time.Microsecond && d > -time.Microsecond }
			if !near(got.Period, tt.want.Period) || !near(got.Horizon, tt.want.Horizon) || !near(got.DMin, tt.want.DMin) ||
				!near(got.DMax, tt.want.DMax) || !near(got.StableInterval, tt.want.StableInterval) ||
				got.ResidentBand-tt.want.ResidentBand > 1 || tt.want.ResidentBand-got.ResidentBand > 1 ||
				got.YellowFraction != tt.want.YellowFraction || got.SafetyMargin != 0 {
				t.Errorf("scaledGate = %+v, want %+v", got, tt.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("scaled config invalid: %v", err)
			}
		})
	}
}
