package memsample

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/clock/clocktest"
)

func TestSeries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type sample struct {
		ms int
		v  int64
	}
	tests := []struct {
		name    string
		samples []sample
		endMs   int
		wantMax int64
		wantAvg int64
	}{
		{"none", nil, 100, 0, 0},
		{"one sample", []sample{{0, 50}}, 0, 50, 50},
		{"constant", []sample{{0, 10}, {20, 10}, {40, 10}}, 60, 10, 10},
		// 100 for 10 ms then 0 for 30 ms: 25 on average.
		{"spike", []sample{{0, 100}, {10, 0}}, 40, 100, 25},
		// Uneven spacing is weighted by time: 10 for 90 ms, 1000 for 10 ms.
		{"weighted", []sample{{0, 10}, {90, 1000}}, 100, 1000, 109},
		{"step", []sample{{0, 10}, {1000, 30}}, 2000, 30, 20},
		{"spike over seconds", []sample{{0, 10}, {1000, 100}, {2000, 10}, {3000, 10}}, 4000, 100, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Series
			for _, x := range tt.samples {
				s.Add(at(x.ms), x.v)
			}
			if s.Max() != tt.wantMax {
				t.Errorf("max = %d, want %d", s.Max(), tt.wantMax)
			}
			if got := s.Avg(at(tt.endMs)); got != tt.wantAvg {
				t.Errorf("avg = %d, want %d", got, tt.wantAvg)
			}
		})
	}
}

func TestSamplerFinish(t *testing.T) {
	var n int64
	read := func() (int64, error) { n++; return n * 10, nil }
	clk := clocktest.NewManual(time.Unix(0, 0))
	s := Start(read, clk, time.Hour) // only the first and the final sample
	clk.Advance(time.Millisecond)
	peak, avg := s.Finish()
	if peak != 20 {
		t.Fatalf("peak = %d, want 20 (the final sample)", peak)
	}
	if avg != 10 {
		t.Fatalf("avg = %d, want 10 (first value held until the last sample)", avg)
	}
	if p, a := s.Finish(); p != peak || a != avg {
		t.Fatalf("second Finish = %d, %d; want the same values", p, a)
	}
}

// TestSamplerTicks runs the sampler on the real clock in a synctest bubble:
// samples at 0, 10, 20 and 30 ms and the final one at 35 ms.
func TestSamplerTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n int64
		read := func() (int64, error) { n++; return n * 10, nil }
		s := Start(read, clock.Real{}, 10*time.Millisecond)
		time.Sleep(35 * time.Millisecond)
		peak, avg := s.Finish()
		// 10, 20, 30 for 10 ms each and 40 for 5 ms: 800/35.
		if peak != 50 || avg != 22 {
			t.Fatalf("peak %d avg %d, want 50 and 22", peak, avg)
		}
	})
}
