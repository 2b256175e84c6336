package sim

import (
	"math"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// profile is an action's memory curve in the model's units.
type profile struct {
	peak      int64         // bytes above the sandbox's level before the action
	retain    int64         // bytes held during the retain phase
	ramp      time.Duration // progress at which peak is reached
	holdEnd   time.Duration // progress at which memory drops to retain
	end       time.Duration // progress at which the action exits
	leaves    int64         // bytes left in the sandbox after exit (RetainedMiB)
	pins      bool          // a background process stays alive after exit
	avg       int64         // time-average memory above the level before, bytes
	rateBytes float64       // growth during the ramp, bytes per second
}

func mib(v float64) int64 { return int64(math.Round(v * float64(units.MiB))) }

func secs(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// profileOf builds the curve of a; see the package comment.
func profileOf(a trajectory.Action) profile {
	var p profile
	switch {
	case a.Mem != nil:
		m := a.Mem
		p.peak, p.retain = mib(m.PeakMiB), mib(m.RetainMiB)
		p.ramp = secs(m.RampS)
		p.holdEnd = p.ramp + secs(m.HoldS)
		p.end = p.holdEnd + secs(m.RetainS)
		p.leaves = mib(a.RetainedMiB())
		p.pins = (m.Background || a.Hints.Background) && m.RetainMiB > 0
	case a.Recorded != nil:
		r := a.Recorded
		p.peak = mib(r.PeakMiB)
		d := secs(r.DurationS)
		p.ramp, p.holdEnd, p.end = d/2, d, d
		p.pins = a.Hints.Background
	}
	p.derive()
	return p
}

// derive sets the ramp's growth rate and the time-average memory from the
// curve's phases (the average is the peak for an action that takes no time).
func (p *profile) derive() {
	p.rateBytes = 0
	if p.ramp > 0 {
		p.rateBytes = float64(p.peak) / p.ramp.Seconds()
	}
	p.avg = p.peak
	if p.end > 0 {
		area := float64(p.peak)*p.ramp.Seconds()/2 + float64(p.peak)*(p.holdEnd-p.ramp).Seconds() +
			float64(p.retain)*(p.end-p.holdEnd).Seconds()
		p.avg = int64(area / p.end.Seconds())
	}
}

// memAt is the action's memory at progress x (before exit).
func (p *profile) memAt(x time.Duration) int64 {
	switch {
	case x < p.ramp:
		return int64(float64(p.peak) * float64(x) / float64(p.ramp))
	case x < p.holdEnd:
		return p.peak
	case x < p.end:
		return p.retain
	}
	return p.retain
}

// rateAt is the growth rate at progress x, bytes per second.
func (p *profile) rateAt(x time.Duration) float64 {
	if x < p.ramp {
		return p.rateBytes
	}
	return 0
}

// nextBoundary is the first phase boundary after progress x.
func (p *profile) nextBoundary(x time.Duration) time.Duration {
	switch {
	case x < p.ramp:
		return p.ramp
	case x < p.holdEnd:
		return p.holdEnd
	}
	return p.end
}

// highThrottle is the share of its speed an action keeps while its sandbox
// is held at a memory.high limit it needs more than: the live v1
// emulation's CPU quota (internal/live, 2 ms per 100 ms), and close to
// the reclaim-and-sleep stall memory.high causes on v2.
const highThrottle = 0.02

// underLimit is the curve of p run under a memory.high limit that leaves it
// at most room bytes (AgentCgroup's Low actions): it ramps as before until
// it reaches room, then stays there (memory.high reclaims instead of
// killing) and makes progress at highThrottle of its speed for the rest of
// its ramp and its hold, and for a retain phase that does not fit either.
// ok is false when the action fits the limit (p is unchanged).
func (p *profile) underLimit(room int64) (q profile, ok bool) {
	if p.peak <= room {
		return *p, false
	}
	room = max(room, 0)
	q = *p
	slow := func(d time.Duration) time.Duration { return time.Duration(float64(d) / highThrottle) }
	var reach time.Duration // progress at which the curve reaches room
	if p.ramp > 0 {
		reach = time.Duration(float64(p.ramp) * float64(room) / float64(p.peak))
	}
	q.peak, q.ramp = room, reach
	q.holdEnd = reach + slow(p.holdEnd-reach)
	retain := p.end - p.holdEnd
	if p.retain > room {
		q.retain, retain = room, slow(retain)
	}
	q.end = q.holdEnd + retain
	q.derive()
	return q, true
}
