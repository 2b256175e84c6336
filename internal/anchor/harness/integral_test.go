package harness

import (
	"math"
	"testing"
	"time"
)

func TestIntegrate(t *testing.T) {
	s := func(ms int, ram, comp int64) Sample {
		return Sample{At: time.Duration(ms) * time.Millisecond, RAM: ram * mib, Compressed: comp * mib}
	}
	tests := []struct {
		name             string
		samples          []Sample
		floor            int64
		wantRAM, wantAll float64
	}{
		{"empty", nil, 0, 0, 0},
		{"one sample", []Sample{s(0, 100, 0)}, 0, 0, 0},
		{"constant", []Sample{s(0, 100, 0), s(1000, 100, 0), s(2000, 100, 0)}, 0, 200, 200},
		{"floor removed", []Sample{s(0, 110, 0), s(1000, 110, 0)}, 10 * mib, 100, 100},
		{"below floor is zero", []Sample{s(0, 5, 0), s(1000, 5, 0)}, 10 * mib, 0, 0},
		{"ramp", []Sample{s(0, 0, 0), s(1000, 100, 0)}, 0, 50, 50},
		{"compressed adds to backing", []Sample{s(0, 100, 20), s(500, 100, 20)}, 0, 50, 60},
		{"non-increasing time skipped", []Sample{s(0, 100, 0), s(0, 100, 0), s(1000, 100, 0)}, 0, 100, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ram, all := Integrate(tt.samples, tt.floor)
			if math.Abs(ram-tt.wantRAM) > 1e-9 || math.Abs(all-tt.wantAll) > 1e-9 {
				t.Fatalf("Integrate = %v, %v; want %v, %v", ram, all, tt.wantRAM, tt.wantAll)
			}
		})
	}
}
