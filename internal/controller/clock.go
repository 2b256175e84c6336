package controller

import "github.com/tenon-dev/tenon/internal/clock"

// Clock is the one clock abstraction (internal/clock); drivers and live
// policies read the time through it.
type Clock = clock.Clock

// RealClock is the system clock.
type RealClock = clock.Real

// Sleep waits on a clock (clock.Sleep).
var Sleep = clock.Sleep
