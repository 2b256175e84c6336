package swarm

import (
	"fmt"
	"time"
)

// SeedSchedule is seed 002's census schedule: 15 s, 1, 5 and 10 minutes
// after the swarm started.
var SeedSchedule = []time.Duration{15 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute}

// Schedule scales SeedSchedule by scale (> 0): 0.1 gives 1.5 s, 6 s, 30 s
// and 60 s. Points are rounded to the millisecond.
func Schedule(scale float64) ([]time.Duration, error) {
	if !(scale > 0) {
		return nil, fmt.Errorf("swarm: time scale must be > 0, got %v", scale)
	}
	out := make([]time.Duration, len(SeedSchedule))
	for i, d := range SeedSchedule {
		out[i] = time.Duration(float64(d) * scale).Round(time.Millisecond)
	}
	return out, nil
}
