package memtool

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

func TestTarget(t *testing.T) {
	p := trajectory.MemProfile{PeakMiB: 100, RampS: 2, HoldS: 1, RetainMiB: 10, RetainS: 3}
	forever := trajectory.MemProfile{PeakMiB: 64, HoldS: math.Inf(1)}
	noRamp := trajectory.MemProfile{PeakMiB: 8, HoldS: 0.5, RetainMiB: 1}
	tests := []struct {
		name string
		p    trajectory.MemProfile
		at   time.Duration
		want int64
	}{
		{"before start", p, -time.Second, 0},
		{"start", p, 0, 0},
		{"quarter ramp", p, 500 * time.Millisecond, 25 * units.MiB},
		{"half ramp", p, time.Second, 50 * units.MiB},
		{"ramp end", p, 2 * time.Second, 100 * units.MiB},
		{"hold", p, 2500 * time.Millisecond, 100 * units.MiB},
		{"drop", p, 3 * time.Second, 10 * units.MiB},
		{"retain", p, 5 * time.Second, 10 * units.MiB},
		{"after end", p, time.Hour, 10 * units.MiB},
		{"no ramp start", noRamp, 0, 8 * units.MiB},
		{"no ramp drop", noRamp, 500 * time.Millisecond, units.MiB},
		{"forever hold", forever, 1000 * time.Hour, 64 * units.MiB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Target(tt.p, tt.at); got != tt.want {
				t.Fatalf("Target(%v) = %d, want %d", tt.at, got, tt.want)
			}
		})
	}
}

func TestEndAndNextChange(t *testing.T) {
	p := trajectory.MemProfile{PeakMiB: 100, RampS: 0.025, HoldS: 1, RetainMiB: 10, RetainS: 3}
	if got, want := End(p), 4025*time.Millisecond; got != want {
		t.Fatalf("End = %v, want %v", got, want)
	}
	if got := End(trajectory.MemProfile{PeakMiB: 1, RetainS: math.Inf(1)}); got != Forever {
		t.Fatalf("End with infinite retain = %v, want Forever", got)
	}
	step := 10 * time.Millisecond
	tests := []struct {
		name     string
		at, want time.Duration
	}{
		{"ramp step", 0, 10 * time.Millisecond},
		{"last ramp step is clipped", 20 * time.Millisecond, 25 * time.Millisecond},
		{"hold to drop", 25 * time.Millisecond, 1025 * time.Millisecond},
		{"retain to end", 2 * time.Second, 4025 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextChange(p, tt.at, step); got != tt.want {
				t.Fatalf("nextChange(%v) = %v, want %v", tt.at, got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		p    trajectory.MemProfile
		ok   bool
	}{
		{"plain", trajectory.MemProfile{PeakMiB: 10, RampS: 1, HoldS: 1, RetainMiB: 10}, true},
		{"zero", trajectory.MemProfile{}, true},
		{"forever hold", trajectory.MemProfile{PeakMiB: 1, HoldS: math.Inf(1)}, true},
		{"negative peak", trajectory.MemProfile{PeakMiB: -1}, false},
		{"negative ramp", trajectory.MemProfile{PeakMiB: 1, RampS: -1}, false},
		{"negative files", trajectory.MemProfile{PeakMiB: 1, FilesMiB: -1}, false},
		{"nan hold", trajectory.MemProfile{PeakMiB: 1, HoldS: math.NaN()}, false},
		{"infinite peak", trajectory.MemProfile{PeakMiB: math.Inf(1)}, false},
		{"infinite ramp", trajectory.MemProfile{PeakMiB: 1, RampS: math.Inf(1)}, false},
		{"retain above peak", trajectory.MemProfile{PeakMiB: 10, RetainMiB: 11}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.p)
			if tt.ok != (err == nil) {
				t.Fatalf("Validate(%+v) = %v, want ok=%v", tt.p, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidProfile) {
				t.Fatalf("error %v does not wrap ErrInvalidProfile", err)
			}
		})
	}
}
