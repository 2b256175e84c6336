package gate

import "time"

// budget is the yellow concurrency budget b with its AIMD bookkeeping
// (seed 000 Table 5 and Appendix B "Controller initialization").
type budget struct {
	b          int
	prev       Pressure  // p_prev, initialized to Green
	greenSince time.Time // start of the current stability interval
	greenSet   bool      // the Green stability timer is running
}

func newBudget(b0 int) budget { return budget{b: b0, prev: Green} }

// update is step 5: one multiplicative decrease per observed increase in
// severity (green→red is one transition, one halving), the Green stability
// timer, and one additive increase per completed T_stable of continuous
// green, keeping the fractional remainder. A decrease in pressure does not
// change b. It returns the new b.
func (u *budget) update(now time.Time, p Pressure, bMax int, stable time.Duration) int {
	if p > u.prev {
		u.b = max(1, u.b/2)
	}
	if p != Green {
		u.greenSet = false
	} else if !u.greenSet {
		u.greenSet, u.greenSince = true, now
	} else if stable > 0 {
		if n := now.Sub(u.greenSince) / stable; n > 0 {
			u.greenSince = u.greenSince.Add(n * stable)
			if inc := int64(bMax - u.b); inc > 0 {
				u.b += int(min(int64(n), inc))
			}
		}
	}
	u.prev = p
	return u.b
}
