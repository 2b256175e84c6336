package schedext

import (
	"errors"
	"testing"
	"time"
)

func TestRatePPM(t *testing.T) {
	tests := []struct {
		name string
		rate float64
		want uint64
		err  bool
	}{
		{"a twentieth", 0.05, 50_000, false},
		{"one CPU", 1, 1_000_000, false},
		{"tiny rounds up to 1", 1e-9, 1, false},
		{"zero", 0, 0, true},
		{"negative", -0.5, 0, true},
		{"NaN", nanRate(), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ratePPM(tt.rate)
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("ratePPM(%v) = %d, %v; want %d, error %v", tt.rate, got, err, tt.want, tt.err)
			}
		})
	}
}

func nanRate() float64 {
	zero := 0.0
	return zero / zero
}

func TestOptionsDefaults(t *testing.T) {
	o, err := Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.DeniedSlice != 4*time.Millisecond || o.SharedSlice != 20*time.Millisecond || o.MaxWait != time.Second || o.KickPeriod != 2*time.Millisecond {
		t.Errorf("defaults %+v", o)
	}
	if _, err := (Options{MaxWait: Watchdog}).withDefaults(); err == nil {
		t.Error("a MaxWait as long as the watchdog's timeout was accepted")
	}
	if _, err := (Options{DeniedSlice: -time.Millisecond}).withDefaults(); err == nil {
		t.Error("a negative slice was accepted")
	}
}

func TestExitInfoString(t *testing.T) {
	if s := (ExitInfo{}).String(); s != "running" {
		t.Errorf("zero ExitInfo: %q", s)
	}
	e := ExitInfo{Kind: 1026, Reason: "runnable task stall", Msg: "watchdog failed to check in for 10000ms"}
	if s := e.String(); s != "kind 1026: runnable task stall: watchdog failed to check in for 10000ms" {
		t.Errorf("String() = %q", s)
	}
}

func TestUnavailableIsSentinel(t *testing.T) {
	// Whatever the host, Supported either passes or says why with ErrUnavailable.
	if err := Supported(); err != nil && !errors.Is(err, ErrUnavailable) {
		t.Errorf("Supported() = %v, not an ErrUnavailable", err)
	}
}
