package gate

import "time"

// Clock is the time source of a Loop. Tests use SystemClock inside a
// testing/synctest bubble, or their own fake.
type Clock interface {
	Now() time.Time
	// NewTicker returns a channel that delivers a tick every d and a stop func.
	NewTicker(d time.Duration) (<-chan time.Time, func())
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// NewTicker implements Clock.
func (SystemClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
