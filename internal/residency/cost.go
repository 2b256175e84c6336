package residency

import (
	"sync"
	"time"
)

// ewma is an exponentially weighted moving average of durations, starting
// from a prior.
type ewma struct {
	mu    sync.Mutex
	alpha float64
	value float64
	n     int
}

func newEWMA(alpha float64, prior time.Duration) *ewma {
	return &ewma{alpha: alpha, value: float64(prior)}
}

func (e *ewma) observe(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == 0 {
		e.value = float64(d)
	} else {
		e.value = e.alpha*float64(d) + (1-e.alpha)*e.value
	}
	e.n++
}

func (e *ewma) get() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Duration(e.value)
}
