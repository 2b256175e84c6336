package schedext

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnavailable means sched_ext cannot be used here: the kernel lacks it,
// another scheduler holds it, the platform is not supported, or the
// program did not load. The wrapped error says which.
var ErrUnavailable = errors.New("schedext: sched_ext unavailable")

// Options tunes the scheduler; zero fields take the defaults.
type Options struct {
	// DeniedSlice is the longest a paced task runs at a time (4 ms).
	DeniedSlice time.Duration
	// SharedSlice is the slice of every other task (20 ms).
	SharedSlice time.Duration
	// MaxWait bounds how far ahead a paced task is queued to run (1 s),
	// and so how long it waits, whatever its rate. At most half the
	// watchdog's timeout (5 s).
	MaxWait time.Duration
	// KickPeriod is how often idle CPUs are woken for paced tasks that
	// became eligible (2 ms).
	KickPeriod time.Duration
}

// Watchdog is the scheduler's watchdog timeout (ops.timeout_ms).
const Watchdog = 10 * time.Second

func (o Options) withDefaults() (Options, error) {
	if o.DeniedSlice == 0 {
		o.DeniedSlice = 4 * time.Millisecond
	}
	if o.SharedSlice == 0 {
		o.SharedSlice = 20 * time.Millisecond
	}
	if o.MaxWait == 0 {
		o.MaxWait = time.Second
	}
	if o.KickPeriod == 0 {
		o.KickPeriod = 2 * time.Millisecond
	}
	switch {
	case o.DeniedSlice < 0 || o.SharedSlice < 0 || o.KickPeriod < 0:
		return o, fmt.Errorf("schedext: negative slice or kick period")
	case o.MaxWait < 0 || o.MaxWait > Watchdog/2:
		return o, fmt.Errorf("schedext: MaxWait %v: want at most %v (half the watchdog's timeout)", o.MaxWait, Watchdog/2)
	}
	return o, nil
}

// CgroupStats is what the scheduler counted for a denied cgroup since it
// was denied.
type CgroupStats struct {
	Rate float64       // of one CPU
	Ran  time.Duration // CPU time its tasks got
	Runs uint64        // runs of its tasks
}

// Counters are the scheduler's global counts since it loaded.
type Counters struct {
	SharedDispatched uint64 // tasks taken from the shared queue
	DeniedDispatched uint64 // paced tasks run
	Released         uint64 // paced tasks run because their cgroup was allowed
	Capped           uint64 // paced tasks queued at MaxWait (their cgroup's debt was longer)
	Kicks            uint64 // idle CPUs woken for paced tasks
}

// ExitInfo says why the kernel unloaded the scheduler (ops.exit): empty
// while it runs.
type ExitInfo struct {
	Kind   int32
	Code   int64
	Reason string
	Msg    string
}

func (e ExitInfo) String() string {
	if e.Kind == 0 && e.Reason == "" {
		return "running"
	}
	s := fmt.Sprintf("kind %d: %s", e.Kind, e.Reason)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

const ppm = 1_000_000

// ratePPM converts a rate in CPUs to millionths, at least 1.
func ratePPM(rate float64) (uint64, error) {
	if !(rate > 0) || rate > 1024 {
		return 0, fmt.Errorf("schedext: rate %v: want a fraction of one CPU above 0", rate)
	}
	return max(1, uint64(rate*ppm+0.5)), nil
}
