// Package memsample measures a sandbox's memory during an action: a
// goroutine reads a value every interval, and the series yields the peak
// and the time-weighted average. Both sandbox backends use it.
package memsample

import (
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
)

// DefaultInterval is how often memory is read during an action.
const DefaultInterval = 20 * time.Millisecond

// Series accumulates samples into a maximum and a time-weighted average:
// each sample's value holds until the next sample.
type Series struct {
	first, last time.Time
	lastValue   int64
	area        float64 // byte·seconds
	max         int64
	n           int
}

// Add records value v at time t (times must not decrease).
func (s *Series) Add(t time.Time, v int64) {
	if s.n == 0 {
		s.first = t
	} else {
		s.area += float64(s.lastValue) * t.Sub(s.last).Seconds()
	}
	s.last, s.lastValue = t, v
	s.max = max(s.max, v)
	s.n++
}

// Max is the largest value seen (0 with no sample).
func (s *Series) Max() int64 { return s.max }

// Avg is the time-weighted average up to end; with one sample (or none
// spanning time) it is the last value seen.
func (s *Series) Avg(end time.Time) int64 {
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

// Sampler reads a value every interval on its own goroutine.
type Sampler struct {
	read  func() (int64, error)
	clock clock.Clock

	mu     sync.Mutex
	series Series
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	peak   int64
	avg    int64
}

// Start takes a first sample and keeps sampling every interval of c until
// Finish. Failed reads are skipped.
func Start(read func() (int64, error), c clock.Clock, interval time.Duration) *Sampler {
	if interval <= 0 {
		interval = DefaultInterval
	}
	s := &Sampler{read: read, clock: c, stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		tick, stopTicker := c.NewTicker(interval)
		defer stopTicker()
		for {
			select {
			case <-s.stop:
				return
			case <-tick:
				s.sample()
			}
		}
	}()
	return s
}

func (s *Sampler) sample() {
	if v, err := s.read(); err == nil {
		s.mu.Lock()
		s.series.Add(s.clock.Now(), v)
		s.mu.Unlock()
	}
}

// Finish stops sampling, takes a last sample and returns the peak and the
// time-weighted average. Later calls return the same values.
func (s *Sampler) Finish() (peak, avg int64) {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		end := s.clock.Now()
		if v, err := s.read(); err == nil {
			s.series.Add(end, v)
		}
		s.peak, s.avg = s.series.Max(), s.series.Avg(end)
	})
	return s.peak, s.avg
}
