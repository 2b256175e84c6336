package memtool

import (
	"fmt"
	"math"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// Forever is the Duration of a profile whose hold or retain never ends.
const Forever = time.Duration(math.MaxInt64)

// mib converts MiB to bytes, rounding to the nearest byte.
func mib(v float64) int64 { return int64(math.Round(v * float64(units.MiB))) }

// seconds converts seconds to a duration; +Inf and overflow become Forever.
func seconds(s float64) time.Duration {
	if math.IsInf(s, 1) || s*float64(time.Second) >= float64(math.MaxInt64) {
		return Forever
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}

// addDur adds durations, saturating at Forever.
func addDur(a, b time.Duration) time.Duration {
	if a == Forever || b == Forever || a > Forever-b {
		return Forever
	}
	return a + b
}

// Validate reports whether p can be run. Hold and retain times may be +Inf
// (run until killed); everything else must be finite and non-negative, and
// the retained level must not exceed the peak.
func Validate(p trajectory.MemProfile) error {
	fields := []struct {
		name   string
		v      float64
		infOK  bool
		suffix string
	}{
		{"peak", p.PeakMiB, false, " MiB"},
		{"ramp", p.RampS, false, " s"},
		{"hold", p.HoldS, true, " s"},
		{"retain", p.RetainMiB, false, " MiB"},
		{"retain-for", p.RetainS, true, " s"},
		{"files", p.FilesMiB, false, " MiB"},
	}
	for _, f := range fields {
		switch {
		case math.IsNaN(f.v):
			return fmt.Errorf("%w: %s is not a number", ErrInvalidProfile, f.name)
		case f.v < 0:
			return fmt.Errorf("%w: %s is %g%s, must be >= 0", ErrInvalidProfile, f.name, f.v, f.suffix)
		case math.IsInf(f.v, 1) && !f.infOK:
			return fmt.Errorf("%w: %s must be finite", ErrInvalidProfile, f.name)
		}
	}
	if p.RetainMiB > p.PeakMiB {
		return fmt.Errorf("%w: retain (%g MiB) exceeds peak (%g MiB): lower --retain or raise --peak",
			ErrInvalidProfile, p.RetainMiB, p.PeakMiB)
	}
	return nil
}

// Target is the schedule: the resident bytes p asks for at elapsed time t.
// It rises linearly from 0 to the peak over the ramp, stays at the peak for
// the hold, and is the retained level afterwards.
func Target(p trajectory.MemProfile, t time.Duration) int64 {
	ramp, holdEnd := phaseEnds(p)
	switch {
	case t < 0:
		return 0
	case t < ramp:
		return int64(float64(mib(p.PeakMiB)) * float64(t) / float64(ramp))
	case t < holdEnd:
		return mib(p.PeakMiB)
	default:
		return mib(p.RetainMiB)
	}
}

// End is how long the curve of p lasts: ramp + hold + retain time. It is
// Forever when the hold or the retain time is infinite.
func End(p trajectory.MemProfile) time.Duration {
	_, holdEnd := phaseEnds(p)
	return addDur(holdEnd, seconds(p.RetainS))
}

// phaseEnds returns the ends of the ramp and of the hold.
func phaseEnds(p trajectory.MemProfile) (ramp, holdEnd time.Duration) {
	ramp = seconds(p.RampS)
	return ramp, addDur(ramp, seconds(p.HoldS))
}

// nextChange is the elapsed time at which the target next changes after t:
// the next step during the ramp, otherwise the next phase boundary.
func nextChange(p trajectory.MemProfile, t, step time.Duration) time.Duration {
	ramp, holdEnd := phaseEnds(p)
	switch {
	case t < ramp:
		return min(t+step, ramp)
	case t < holdEnd:
		return holdEnd
	default:
		return End(p)
	}
}
