// Package clocktest holds tenon's one fake clock.Clock for tests: Manual,
// whose time moves only when the test sets or advances it. Code that
// waits on goroutines and timers may instead run on clock.Real inside a
// testing/synctest bubble; Manual is for tests that step a control loop
// by hand.
package clocktest

import (
	"slices"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
)

// Manual is a clock.Clock that stands still until Set or Advance moves it;
// moving it fires the After channels and ticks the tickers that fell due.
// It is safe for concurrent use. The zero value starts at the zero time.
type Manual struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*waiter
}

// waiter is one pending After (period 0) or one running ticker.
type waiter struct {
	at     time.Time
	period time.Duration
	ch     chan time.Time
}

var _ clock.Clock = (*Manual)(nil)

// NewManual returns a Manual clock that reads start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now is the clock's current time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// After delivers the clock's time once it has moved d past now; d <= 0
// delivers at once.
func (m *Manual) After(d time.Duration) <-chan time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := &waiter{at: m.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		w.ch <- m.now
		return w.ch
	}
	m.waiters = append(m.waiters, w)
	return w.ch
}

// NewTicker ticks every d of the clock's time until stop is called. Like a
// time.Ticker, it holds one tick and drops the others a slow reader
// misses. It panics if d <= 0.
func (m *Manual) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	if d <= 0 {
		panic("clocktest: non-positive interval for NewTicker")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	w := &waiter{at: m.now.Add(d), period: d, ch: make(chan time.Time, 1)}
	m.waiters = append(m.waiters, w)
	return w.ch, func() { m.remove(w) }
}

// Advance moves the clock d forward (see Set).
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set(m.now.Add(d))
}

// Set moves the clock to t and delivers t to every After and ticker due
// by then. Moving it back fires nothing.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set(t)
}

// Waiters is how many After channels are pending and tickers running: a
// test can wait for the code under test to block on the clock before
// moving it.
func (m *Manual) Waiters() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.waiters)
}

func (m *Manual) set(t time.Time) {
	m.now = t
	kept := m.waiters[:0]
	for _, w := range m.waiters {
		if w.at.After(t) {
			kept = append(kept, w)
			continue
		}
		select {
		case w.ch <- t:
		default: // a ticker whose last tick was not read
		}
		if w.period > 0 {
			for !w.at.After(t) {
				w.at = w.at.Add(w.period)
			}
			kept = append(kept, w)
		}
	}
	clear(m.waiters[len(kept):])
	m.waiters = kept
}

func (m *Manual) remove(w *waiter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.waiters = slices.DeleteFunc(m.waiters, func(x *waiter) bool { return x == w })
}
