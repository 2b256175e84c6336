package gate

import (
	"fmt"
	"time"
)

// MiB is one mebibyte in bytes.
const MiB = 1 << 20

// Config holds the runtime execution-control parameters. The defaults are
// seed 000's Table 5; a zero field means "use the default".
type Config struct {
	Period          time.Duration // sampling and control period Δ (100 ms)
	Horizon         time.Duration // projection horizon T (1000 ms)
	Alpha           float64       // EWMA factor α (0.35)
	ResidentBand    float64       // ε in bytes per second (4 MiB/s)
	BootstrapDemand int64         // d_boot in bytes over T until a valid estimate (16 MiB)
	SafetyMargin    int64         // S in bytes (256 MiB); H = max(M − S, 0)
	B0              int           // initial yellow budget b0 (1)
	BMax            int           // cap on b (4)
	StableInterval  time.Duration // T_stable of continuous green per +1 on b (5000 ms)
	DMin            time.Duration // minimum denial wait before re-eligibility (1000 ms)
	DMax            time.Duration // overdue threshold (3000 ms)
	YellowFraction  float64       // yellow region as a fraction of the budget (0.125)
	RedFraction     float64       // red region as a fraction of the budget (0.125)
	// NoLivenessEscape turns off the liveness escape (see selectPermitted):
	// with it set the gate follows Algorithm 1 to the letter, which can hold
	// every sandbox denied forever when their memory keeps H at zero.
	NoLivenessEscape bool
	// HeldBudget says the domain holds an allocation at its budget instead
	// of OOM-killing it (the OOM hold, which the gate's owner runs next to
	// it): yellow then permits as many growers as fit the headroom H, not
	// b (see "Held budget" in doc.go). Red keeps its single grower.
	HeldBudget bool
	// NoGreenCheck turns off the green check (see Step): with it set,
	// pressure is classified from the previously permitted set's demand
	// alone, as in Algorithm 1, and a gate that has just denied every
	// grower reads green on the next iteration and releases them all.
	NoGreenCheck bool
	// NoSticky turns off stickiness (see candidateOrder): with it set, a
	// denied sandbox with a smaller projected demand displaces a permitted
	// grower of the same rank, as Table 5's order says, and partial growth
	// spreads over many sandboxes.
	NoSticky bool
	// NoFastAttack turns off fast attack: with it set the growth estimate is
	// Table 5's EWMA alone, which reaches a burst's rate only over several
	// periods (35% after one, 58% after two), while a 1 GiB/s ramp adds
	// 100 MiB per period. By default a valid interval faster than the
	// estimate sets the estimate to it; decay stays the EWMA's.
	NoFastAttack bool
	// NoSeniority turns off seniority (see candidateOrder): with it set,
	// growers of one rank are ordered by smaller projected demand, as
	// Table 5 says, so the grower that has just begun displaces the one
	// that has grown furthest, and both end half-grown in a full budget.
	NoSeniority bool
	// NoResidentZero turns off the resident zero: with it set, a Resident
	// sandbox (|ĝ| ≤ ε) whose estimate is still slightly positive has
	// demand ĝ·T > 0 and takes one of the b growth slots, as Algorithm 1's
	// x_c = 1[d_c > 0] reads to the letter. A decayed or idle sandbox's
	// estimate stays slightly positive for as long as it idles denied (its
	// intervals use no CPU and are invalid), and in yellow with b = 1 it
	// takes the only slot ahead of the growers. By default a Resident
	// sandbox's demand is 0, as seed 000 §3.5 describes resident sandboxes
	// ("no predicted positive growth does not consume a growth slot").
	NoResidentZero bool
	// NoRestDecay turns off rest decay: with it set, only an interval in
	// which the sandbox's CPU time increased updates its estimate, as
	// Table 5 says, so a sandbox that ramped up and then sleeps at its
	// peak inside its action (a server started, a tool waiting on I/O or
	// a subprocess) keeps its ramp's rate for as long as it sleeps. Its
	// projection then holds the pressure red and, as a senior, freezes
	// every other grower until its action ends (live on the imported real
	// traces a 408 MiB action resting 11 s froze eleven small ones). By
	// default an interval in which a sandbox the gate allowed used no CPU
	// and did not grow is valid too: its growth, at most 0, decays the
	// estimate. A denied sandbox's intervals without CPU stay invalid (it
	// does not run because the gate stopped it), and so do every
	// sandbox's while memory alone is red (M below the red region's
	// top): near the budget a sandbox without CPU may be blocked waiting
	// for memory, and a senior waiting there keeps the probe.
	NoRestDecay bool
	// NoJuniorDrain turns off the junior drain (see juniorDrain): with it
	// set, a senior run by the liveness escape that stopped using CPU
	// keeps every junior denied until its action ends or memory frees,
	// even where the memory it waits for is not the memory that is free.
	NoJuniorDrain bool
}

// DefaultConfig returns Table 5 of seed 000.
//
// The red region stays the seed's eighth of the budget on the real traces
// too, whose bursts are small: halving it (red=0.0625) in the simulator
// over the 288 real-trace runs of policy's hold_preempt.go grid put
// tenon's summed makespan +0.4 % (v1, no swap), +4.7 % (v2) and +2.3 %
// (traces-robust's loads) and its P50 +3 to +13 %, with 11 OOM kills
// against none; swe-real +1 to +3 %.
func DefaultConfig() Config {
	return Config{
		Period:          100 * time.Millisecond,
		Horizon:         1000 * time.Millisecond,
		Alpha:           0.35,
		ResidentBand:    4 * MiB,
		BootstrapDemand: 16 * MiB,
		SafetyMargin:    256 * MiB,
		B0:              1,
		BMax:            4,
		StableInterval:  5000 * time.Millisecond,
		DMin:            1000 * time.Millisecond,
		DMax:            3000 * time.Millisecond,
		YellowFraction:  0.125,
		RedFraction:     0.125,
	}
}

// WithDefaults returns c with every zero field replaced by its default.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.Period == 0 {
		c.Period = d.Period
	}
	if c.Horizon == 0 {
		c.Horizon = d.Horizon
	}
	if c.Alpha == 0 {
		c.Alpha = d.Alpha
	}
	if c.ResidentBand == 0 {
		c.ResidentBand = d.ResidentBand
	}
	if c.BootstrapDemand == 0 {
		c.BootstrapDemand = d.BootstrapDemand
	}
	if c.SafetyMargin == 0 {
		c.SafetyMargin = d.SafetyMargin
	}
	if c.B0 == 0 {
		c.B0 = d.B0
	}
	if c.BMax == 0 {
		c.BMax = d.BMax
	}
	if c.StableInterval == 0 {
		c.StableInterval = d.StableInterval
	}
	if c.DMin == 0 {
		c.DMin = d.DMin
	}
	if c.DMax == 0 {
		c.DMax = d.DMax
	}
	if c.YellowFraction == 0 {
		c.YellowFraction = d.YellowFraction
	}
	if c.RedFraction == 0 {
		c.RedFraction = d.RedFraction
	}
	return c
}

// Validate reports the first out-of-range field of c after defaults are applied.
func (c Config) Validate() error {
	c = c.WithDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
	}
	switch {
	case c.Period < 0:
		return bad("period %v must be > 0", c.Period)
	case c.Horizon < 0:
		return bad("horizon %v must be > 0", c.Horizon)
	case c.Alpha < 0 || c.Alpha > 1:
		return bad("alpha %v must be in (0, 1]", c.Alpha)
	case c.ResidentBand < 0:
		return bad("resident band %v must be >= 0", c.ResidentBand)
	case c.BootstrapDemand < 0:
		return bad("bootstrap demand %d must be >= 0", c.BootstrapDemand)
	case c.SafetyMargin < 0:
		return bad("safety margin %d must be >= 0", c.SafetyMargin)
	case c.B0 < 1:
		return bad("b0 %d must be >= 1", c.B0)
	case c.BMax < c.B0:
		return bad("bmax %d must be >= b0 %d", c.BMax, c.B0)
	case c.StableInterval < 0:
		return bad("stable interval %v must be > 0", c.StableInterval)
	case c.DMin < 0:
		return bad("dmin %v must be >= 0", c.DMin)
	case c.DMax < c.DMin:
		return bad("dmax %v must be >= dmin %v", c.DMax, c.DMin)
	case c.YellowFraction < 0 || c.RedFraction < 0 || c.YellowFraction+c.RedFraction > 1:
		return bad("yellow %v and red %v fractions must be >= 0 and sum to <= 1", c.YellowFraction, c.RedFraction)
	}
	return nil
}
