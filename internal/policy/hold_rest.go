package policy

import (
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// The OOM hold's progress signal. The hold is released once tasks have
// waited its timeout with nothing progressing. A sandbox that uses CPU
// progresses; so does one resting at its peak: it runs an action, is not
// frozen (by the gate or the freezing hold), its footprint has been flat
// since before the wait began, and it is not stalled on memory. Such a
// sandbox is a tool sleeping at its peak (a test run waiting for I/O or a
// timer, memtool's hold phase): it uses no CPU, yet its action will end and
// free its memory, which is what the waiters wait for. Counting CPU alone
// made the hold release (and the OOM killer kill a sandbox at its peak)
// 2-3 s into a wait that would have ended when the sleeper exited.
//
// A sandbox stuck at the limit looks the same by CPU and footprint, so the
// signal tells them apart by what happened before: the one stuck grew into
// the limit, in the periods just before the wait began (restLead) or during
// it (by HoldGrowth over one period, or in total since the wait began: a
// throttled v2 allocator creeps), and on cgroup v2 it stalls on memory (its
// own memory.pressure "some" total advances, gate.Sample.MemStall: direct
// reclaim and memory.high throttling both count). v1 has no per-cgroup
// pressure: a sandbox that rested at its peak and then, during the wait,
// asks for one page more waits in the OOM wait with no growth at all and
// still counts as resting; the hold then waits until HoldMaxWait or until
// another sandbox ends.

// restLead is how many periods before a wait began a sandbox's growth marks
// it as one that ran into the limit rather than one resting at its peak.
const restLead = 2

// restSeen is what the signal remembers of one sandbox.
type restSeen struct {
	mem     int64         // footprint at the previous sample
	base    int64         // footprint when the current wait began (or when first seen in it)
	grew    time.Time     // last sample at which it grew by HoldGrowth since the previous one
	stall   time.Duration // its memory stall total at the previous sample
	stalled bool          // the stall total advanced since the previous sample
}

// holdRest tracks the sandboxes for the signal.
type holdRest struct {
	seen map[string]restSeen
}

// observe records one sample at now; waiting is whether the hold was
// already waiting before this sample (bases are kept through a wait).
func (r *holdRest) observe(now time.Time, smp []gate.Sample, waiting bool) {
	prev := r.seen
	r.seen = make(map[string]restSeen, len(smp))
	for _, s := range smp {
		p, ok := prev[s.ID]
		cur := restSeen{mem: s.Footprint, base: s.Footprint, stall: s.MemStall}
		if ok {
			cur.grew = p.grew
			if s.Footprint-p.mem >= HoldGrowth {
				cur.grew = now
			}
			cur.stalled = s.MemStall > p.stall
			if waiting {
				cur.base = p.base
			}
		}
		r.seen[s.ID] = cur
	}
}

// resting reports whether sandbox id rests at its peak during the wait that
// began at since (period: the gate's control period): it must also run an
// action and not be frozen, which the caller knows.
func (r *holdRest) resting(id string, since time.Time, period time.Duration) bool {
	s, ok := r.seen[id]
	if !ok || s.stalled || s.mem-s.base >= HoldGrowth {
		return false
	}
	return s.grew.IsZero() || s.grew.Before(since.Add(-restLead*period))
}

// anyResting reports whether a sandbox that runs an action (admitted, with
// admission) and was not frozen at the last gate step rests at its peak in
// the wait that began at since.
func (m *Machine) anyResting(since time.Time) bool {
	for _, a := range m.started {
		if a.act == nil || a.sandbox == "" || m.adm != nil && a.admIdx < 0 {
			continue // no action running: waiting for its model or for admission
		}
		if slices.Contains(m.frozen, a.sandbox) {
			continue
		}
		if m.rest.resting(a.sandbox, since, m.cfg.GateConfig.Period) {
			return true
		}
	}
	return false
}
