package policy

import (
	"math"
	"testing"

	"github.com/tenon-dev/tenon/internal/predict"
)

func TestRisk(t *testing.T) {
	bash := func(peaks ...int64) []predict.Completed {
		var h []predict.Completed
		for _, p := range peaks {
			h = append(h, predict.Completed{Class: "bash", PeakBytes: p * mib})
		}
		return h
	}
	tests := []struct {
		name        string
		peak, point int64
		hist        []predict.Completed
		typical     int64
		spared      float64
	}{
		{"no history: certain to reach the peak", 50 * mib, 2 * mib, nil, 50 * mib, 0},
		{"another class's history does not count", 50 * mib, 2 * mib,
			[]predict.Completed{{Class: "read", PeakBytes: mib}}, 50 * mib, 0},
		// median 1, middle of 1 and 50 is 25.5: one of five above it.
		{"mostly light history", 50 * mib, 0, bash(1, 1, 50, 1, 2), mib, 1 - 2.0/7},
		{"the point prediction raises typical", 50 * mib, 10 * mib, bash(1, 1, 1), 10 * mib, 1 - 1.0/5},
		{"typical never above the peak", 5 * mib, 8 * mib, bash(9, 9), 5 * mib, 1 - 3.0/4},
		{"always heavy", 50 * mib, 0, bash(50, 50, 50), 50 * mib, 1 - 1.0/5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			typ, sp := Risk("bash", tc.peak, tc.point, tc.hist)
			if typ != tc.typical || math.Abs(sp-tc.spared) > 1e-9 {
				t.Fatalf("Risk = %d MiB, %.4f; want %d MiB, %.4f", typ/mib, sp, tc.typical/mib, tc.spared)
			}
		})
	}
}

func TestHeavyCount(t *testing.T) {
	tests := []struct {
		name string
		p    []float64
		tail float64
		want int
	}{
		{"none", nil, 0.01, 0},
		{"certain events all count", []float64{1, 1, 1}, 0.01, 3},
		{"impossible events count none", []float64{0, 0}, 0.01, 0},
		// one event at 0.5: P(more than 0) = 0.5 > 0.01, P(more than 1) = 0.
		{"one coin", []float64{0.5}, 0.01, 1},
		// ten at 0.1: P(N > 3) = 0.0128, P(N > 4) = 0.0016.
		{"ten at a tenth", []float64{.1, .1, .1, .1, .1, .1, .1, .1, .1, .1}, 0.01, 4},
		{"ten at a tenth, loose tail", []float64{.1, .1, .1, .1, .1, .1, .1, .1, .1, .1}, 0.05, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := heavyCount(tc.p, tc.tail); got != tc.want {
				t.Fatalf("heavyCount = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPooledGrowth(t *testing.T) {
	light := func(peak int64) Admitted { return Admitted{Peak: peak * mib, Typical: mib, Spared: 0.9} }
	ten := []Admitted{light(50), light(50), light(50), light(50), light(50), light(50), light(50), light(50), light(50), light(40)}
	tests := []struct {
		name string
		as   []Admitted
		want int64
	}{
		{"unknown risks count whole peaks", []Admitted{{Peak: 50 * mib}, {Peak: 30 * mib, Charge: 40 * mib}}, 90 * mib},
		// ten typical MiB, and room for four of the largest excesses (49 MiB each).
		{"ten mostly light actions pool", ten, 10*mib + 4*49*mib},
		{"growth so far counts against typical first", []Admitted{{Before: 0, Memory: 3 * mib, Peak: 50 * mib, Typical: 2 * mib, Spared: 0.999}}, 0},
		{"a certain action beside pooled ones", append([]Admitted{{Peak: 100 * mib}}, light(50)), 100*mib + 50*mib},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PooledGrowth(tc.as, PoolTail); got != tc.want {
				t.Fatalf("PooledGrowth = %.1f MiB, want %.1f MiB", float64(got)/float64(mib), float64(tc.want)/float64(mib))
			}
		})
	}
}
