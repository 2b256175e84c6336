package docker

import (
	"sync"
	"time"
)

// memSeries accumulates memory samples into a maximum and a time-weighted
// average: each sample's value holds until the next one.
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

// avg is the time-weighted average up to end; the last value seen when no
// time has passed.
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

// sampler reads a value every interval on its own goroutine.
type sampler struct {
	mu     sync.Mutex
	series memSeries
	read   func() (int64, error)
	now    func() time.Time
	stop   chan struct{}
	done   chan struct{}
}

func startSampler(read func() (int64, error), now func() time.Time, interval time.Duration) *sampler {
	s := &sampler{read: read, now: now, stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	if v, err := s.read(); err == nil {
		s.mu.Lock()
		s.series.add(s.now(), v)
		s.mu.Unlock()
	}
}

// finish takes a last sample, stops the goroutine and returns peak and average.
func (s *sampler) finish() (peak, avg int64) {
	close(s.stop)
	<-s.done
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.series.max, s.series.avg(s.now())
}
