package gate

import (
	"math"
	"time"
)

// State is a sandbox's growth label. It only orders candidates and explains
// decisions; headroom accounting uses the projected demand alone.
type State int

// Growth states (seed 000 §3.5, Table 5).
const (
	// Growing: ĝ > ε, or no valid estimate yet (every new sandbox starts here).
	Growing State = iota
	// PausedGrowing: a Growing sandbox that the last published decision denied.
	PausedGrowing
	// Resident: |ĝ| <= ε.
	Resident
	// Cooling: ĝ < −ε (the footprint is shrinking faster than the band).
	Cooling
)

func (s State) String() string {
	switch s {
	case Growing:
		return "growing"
	case PausedGrowing:
		return "paused-growing"
	case Resident:
		return "resident"
	case Cooling:
		return "cooling"
	}
	return "unknown"
}

// rank is the Table 5 state preference for non-overdue candidates.
func (s State) rank() int {
	switch s {
	case Resident:
		return 0
	case Cooling:
		return 1
	}
	return 2 // Growing and PausedGrowing tie
}

// estimator is one sandbox's growth estimate and its sample baseline.
type estimator struct {
	valid bool    // a valid raw sample has initialized rate
	rate  float64 // ĝ in bytes per second

	hasBase  bool // a previous observation exists
	baseTime time.Time
	baseFoot int64
	baseCPU  time.Duration
	permFlip bool // the permission published after the baseline changed
}

// observe is step 3 for one sandbox: it updates the EWMA only when the
// interval since the baseline is valid, and always refreshes the baseline
// (also while denied). It reports whether the interval was valid. With
// fastAttack a valid interval faster than the estimate sets the estimate
// to it (the EWMA only smooths the decay; see Config.NoFastAttack). With
// rest (the sandbox was allowed to run over the interval) an interval in
// which it used no CPU and did not grow is valid too: it rests, and its
// growth, at most 0, decays the estimate (see Config.NoRestDecay).
func (e *estimator) observe(now time.Time, foot int64, cpu time.Duration, alpha float64, fastAttack, rest bool) bool {
	valid := e.hasBase && !e.permFlip && now.After(e.baseTime) &&
		(cpu > e.baseCPU || rest && foot <= e.baseFoot)
	if valid {
		dt := now.Sub(e.baseTime).Seconds()
		g := float64(foot-e.baseFoot) / dt
		if e.valid {
			e.rate = alpha*g + (1-alpha)*e.rate
			if fastAttack && g > e.rate {
				e.rate = g
			}
		} else {
			e.rate = g
			e.valid = true
		}
	}
	e.hasBase, e.baseTime, e.baseFoot, e.baseCPU, e.permFlip = true, now, foot, cpu, false
	return valid
}

// label is the growth state implied by the estimate.
func (e *estimator) label(band float64) State {
	switch {
	case !e.valid || e.rate > band:
		return Growing
	case e.rate < -band:
		return Cooling
	}
	return Resident
}

// demand is d = max(ĝ·T, 0) in bytes, or the bootstrap demand without a
// valid estimate.
func (e *estimator) demand(horizon time.Duration, bootstrap int64) int64 {
	if !e.valid {
		return bootstrap
	}
	d := e.rate * horizon.Seconds()
	if d <= 0 {
		return 0
	}
	if d >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(math.Ceil(d))
}
