// Package clock is tenon's one clock abstraction: live code reads the time
// and waits through a Clock so that tests can run it on a fake one
// (clocktest.Manual, which the test steps) or on Real inside a
// testing/synctest bubble, where time is virtual. Decision code
// (internal/policy, internal/gate's Controller, internal/admission) reads no
// clock at all: it is handed the time with every event.
package clock

import (
	"context"
	"time"
)

// Clock reads the time and waits.
type Clock interface {
	Now() time.Time
	// After delivers the time once d has passed.
	After(d time.Duration) <-chan time.Time
	// NewTicker delivers a tick every d until the returned stop is called.
	NewTicker(d time.Duration) (<-chan time.Time, func())
}

// Real is the system clock.
type Real struct{}

var _ Clock = Real{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// After is time.After.
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// NewTicker is a time.Ticker's channel and Stop.
func (Real) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Sleep waits d on c, or until ctx is done (returning its error). d <= 0
// returns at once.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.After(d):
		return nil
	}
}
