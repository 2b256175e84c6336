package sim

import (
	"errors"
	"testing"
	"time"
)

func TestApplyParams(t *testing.T) {
	tests := []struct {
		name    string
		params  map[string]string
		check   func(c Config) bool
		wantErr bool
	}{
		{"margin", map[string]string{"margin": "1GiB"}, func(c Config) bool { return c.Margin == 1<<30 }, false},
		{"gate regions", map[string]string{"yellow": "0.2", "red": "0.05"},
			func(c Config) bool { return c.Gate.YellowFraction == 0.2 && c.Gate.RedFraction == 0.05 }, false},
		{"admission window and beta", map[string]string{"window": "4GiB", "beta": "1MiB"},
			func(c Config) bool { return c.Admission.MWindow == 4<<30 && c.Admission.Beta == 1<<20 }, false},
		{"bmax", map[string]string{"bmax": "64"}, func(c Config) bool { return c.Gate.BMax == 64 }, false},
		{"fraction out of range", map[string]string{"yellow": "0.7"}, nil, true},
		{"bad size", map[string]string{"margin": "lots"}, nil, true},
		{"unknown", map[string]string{"speed": "11"}, nil, true},
		{"OOM hold timeout", map[string]string{"hold": "3s"}, func(c Config) bool { return c.Hold == 3*time.Second }, false},
		{"OOM hold off", map[string]string{"hold": "off"}, func(c Config) bool { return c.Hold < 0 }, false},
		{"bad OOM hold", map[string]string{"hold": "soon"}, nil, true},
		{"OOM hold bound", map[string]string{"hold-max": "90s"}, func(c Config) bool { return c.HoldMaxWait == 90*time.Second }, false},
		{"held budget", map[string]string{"held-budget": "on"}, func(c Config) bool { return !c.NoHeldBudget }, false},
		{"held budget off", map[string]string{"held-budget": "off"}, func(c Config) bool { return c.NoHeldBudget }, false},
		{"bad held budget", map[string]string{"held-budget": "maybe"}, nil, true},
		{"cpu pacing is live only", map[string]string{"cpu-pacing": "off"}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			err := c.ApplyParams(tc.params)
			if tc.wantErr {
				if !errors.Is(err, ErrBadConfig) {
					t.Fatalf("err %v, want ErrBadConfig", err)
				}
				return
			}
			if err != nil || !tc.check(c) {
				t.Fatalf("err %v, config %+v", err, c)
			}
		})
	}
}
