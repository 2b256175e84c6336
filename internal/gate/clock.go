package gate

import "github.com/tenon-dev/tenon/internal/clock"

// Clock is the one clock abstraction (internal/clock); the Loop ticks on it.
type Clock = clock.Clock

// SystemClock is the system clock.
type SystemClock = clock.Real
