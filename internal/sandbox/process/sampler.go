package process

import (
	"sync"
	"time"
)

// sampleInterval is how often the memory of a sandbox is read during an action.
const sampleInterval = 20 * time.Millisecond

// memSeries accumulates memory samples into a maximum and a time-weighted
// average: each sample's value holds until the next sample.
type memSeries struct {
	first, last time.Time
	lastValue   int64
	area        float64 // byte·seconds
	max         int64
	n           int
}

func (s *memSeries) add(t time.Time, v int64) {
	if s.n == 0 {
		s.first = t
	} else {
		s.area += float64(s.lastValue) * t.Sub(s.last).Seconds()
	}
	s.last, s.lastValue = t, v
	s.max = max(s.max, v)
	s.n++
}

// avg is the time-weighted average up to end; with one sample (or none
// spanning time) it is the mean value seen.
func (s *memSeries) avg(end time.Time) int64 {
	if s.n == 0 {
		return 0
	}
	area := s.area
	if end.After(s.last) {
		area += float64(s.lastValue) * end.Sub(s.last).Seconds()
	}
	span := end.Sub(s.first).Seconds()
	if span <= 0 {
		return s.lastValue
	}
	return int64(area / span)
}

// sampler reads a memory value every interval on its own goroutine.
type sampler struct {
	mu     sync.Mutex
	series memSeries
	stop   chan struct{}
	done   chan struct{}
}

func startSampler(read func() (int64, error), now func() time.Time, interval time.Duration) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	sample := func() {
		if v, err := read(); err == nil {
			s.mu.Lock()
			s.series.add(now(), v)
			s.mu.Unlock()
		}
	}
	sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return s
}

// finish stops sampling, takes a last sample and returns max and average.
func (s *sampler) finish(read func() (int64, error), now func() time.Time) (peak, avg int64) {
	close(s.stop)
	<-s.done
	end := now()
	if v, err := read(); err == nil {
		s.series.add(end, v)
	}
	return s.series.max, s.series.avg(end)
}
