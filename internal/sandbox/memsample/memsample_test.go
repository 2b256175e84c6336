package memsample

import (
	"testing"
	"time"
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
	now := time.Unix(0, 0)
	clock := func() time.Time { now = now.Add(time.Millisecond); return now }
	s := Start(read, clock, time.Hour) // only the first and the final sample
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
