package sim

import (
	"time"

	"github.com/tenon-dev/tenon/internal/policy"
)

// The domain's OOM hold (cgroup v1 memory.oom_control, policy.OOMHold). While
// it is armed, an allocation that would take the domain past its budget
// makes the allocating sandbox wait instead of OOM-killing: a growing action
// stops at the budget (its curve does not advance and it uses no CPU), a
// sandbox being created waits for its base memory, an action whose exit
// would leave more files than it held waits at its end. The domain is
// under_oom while anything waits. Memory freed by anyone lets waiters go on.
// Once per gate period the gate runner steps the live policy.OOMHold with
// the simulated clock and the under_oom flag; on policy.HoldRelease the hold
// is lifted and the OOM killer kills the largest sandbox (host.largest, the
// same victim as without the hold); on policy.HoldRearm it is armed again.

const (
	// holdSlack is how far below the budget growing sandboxes stop: the
	// check is scheduled when the linear projection reaches budget −
	// holdSlack, so that whole-byte rounding never takes usage past the
	// budget.
	holdSlack = 64 << 10
	// holdWake is the free memory that wakes stopped growers: a smaller
	// amount would let them run for microseconds and stop again.
	holdWake = 1 << 20
)

// waiter is one sandbox waiting under the hold.
type waiter struct {
	sb *sandbox
	// need is the jump it waits to allocate in one piece (a creation's
	// base memory, an exit's extra files); 0 for a growing action, which
	// goes on as soon as holdWake is free.
	need int64
}

// holdTimeout is the hold's timeout for cfg: off (0) without the gate,
// else the live rule (policy.HoldTimeout).
func holdTimeout(cfg Config) time.Duration {
	if !cfg.Policy.Gate {
		return 0
	}
	return policy.HoldTimeout(cfg.Hold, cfg.Gate)
}

// limit is the usage at which the next OOM check is due: the budget, or
// holdSlack below the hold's cap while the hold is armed.
func (s *sim) limit() int64 {
	if s.armed {
		return s.holdCap() - holdSlack
	}
	return s.cfg.Budget
}

// holdCap is the usage at which allocations wait under the hold: on v1 the
// budget (memory.oom_control); on v2 just above the hold's line
// (memory.high), where the kernel throttles allocators until the policy
// freezes them (v2.go).
func (s *sim) holdCap() int64 {
	if s.cfg.V2 {
		return s.cfg.HoldLine + v2Over
	}
	return s.cfg.Budget
}

// mustWait reports whether an allocation of n bytes at once would wait
// under the hold.
func (s *sim) mustWait(n int64) bool {
	return s.armed && n > 0 && s.h.projected(s.now)+n > s.holdCap()
}

// wait makes sb wait under the hold for need bytes (0: a growing action).
func (s *sim) wait(sb *sandbox, need int64) {
	if sb.allIdx >= 0 && sb.activeIdx >= 0 {
		s.h.setActive(sb, s.now, false)
		sb.gen++ // cancels its phase event; resume reschedules it
	}
	sb.oomWait = true
	s.waiters = append(s.waiters, waiter{sb: sb, need: need})
	s.res.HoldWaits++
}

// stopGrowers makes every growing sandbox wait once usage is at the budget.
func (s *sim) stopGrowers() {
	if !s.armed || s.h.r <= 0 || s.h.projected(s.now) < s.holdCap()-2*holdSlack {
		return
	}
	s.h.advanceAll(s.now)
	var grow []*sandbox
	for _, sb := range s.h.active {
		if sb.rate > 0 {
			grow = append(grow, sb)
		}
	}
	for _, sb := range grow {
		s.wait(sb, 0)
	}
}

// wakeWaiters lets waiters go on, in the order they began waiting, while
// the free memory covers them (all of them when the hold is not armed).
func (s *sim) wakeWaiters() {
	if len(s.waiters) == 0 {
		return
	}
	avail := s.holdCap() - s.h.projected(s.now)
	keep := s.waiters[:0]
	for _, w := range s.waiters {
		want := w.need
		if want == 0 {
			want = s.growerWake()
		}
		switch {
		case !w.sb.oomWait: // killed, timed out, or its attempt failed
		case !s.armed || avail >= want:
			avail -= w.need
			s.resume(w.sb)
		default:
			keep = append(keep, w)
		}
	}
	clear(s.waiters[len(keep):])
	s.waiters = keep
}

// growerWake is the free memory below the hold's cap that wakes a stopped
// grower: holdWake, and on v2 the cap's height above the line (v2Over), since
// below memory.high the kernel does not throttle. A grower stopped
// just above the line and left less than holdWake below the cap when
// someone freed a little slept under the line, where the domain is not
// under OOM, so the hold neither took it nor released it: simulating
// batch18 x2 at 4 GiB on v2 (with page-outs from 1 MiB) a 3.5 GiB test
// stood still that way for 1550 s, until the action timeout failed its
// attempt; batch18 x3 at 512 MiB had two OOM kills.
func (s *sim) growerWake() int64 {
	if s.cfg.V2 {
		return v2Over
	}
	return holdWake
}

// resume ends sb's wait: a creation is retried now; an action goes on
// unless the gate froze it meanwhile (thaw resumes it then).
func (s *sim) resume(sb *sandbox) {
	sb.oomWait = false
	switch {
	case sb.state == sbCreating:
		s.at(0, evSandboxUp, nil, sb)
	case sb.act != nil && !sb.frozen:
		s.h.setActive(sb, s.now, true)
		s.schedulePhase(sb)
	}
}

// stuck reports whether sb waits under the hold and is not frozen: its
// allocating task sleeps in the kernel (state D: v1's OOM wait, v2's
// throttling), which gate.Sample.Blocked reports, as the live backend
// does.
func (s *sim) stuck(sb *sandbox) bool { return sb.oomWait && !sb.frozen }

// blockedTasks is sb's gate.Sample.Blocked: a task sleeps in the kernel
// when sb waits under the hold (stuck) or waits to fault its paged-out
// memory back in: after a thaw (faultWait), or with its action admitted
// while it was paged out (waitsPageIn; live, the page-in before the action
// waits at the budget, or leaves it frozen, residency.ErrThawDeferred).
// Reported as not blocked, a sandbox the gate let run but whose memory
// did not fit back looked like one resting at its peak, so the hold
// counted it as progress and never released: on haiku x2 at 2 GiB with
// the static predictor the whole domain stood still from 2000 s to 4270 s
// with a 1.7 GiB test waiting; with an admitted action waiting for its
// sandbox's page-in, on v2, from 191 s to 3708 s (haiku x2 in another
// order at 2 GiB), until an action timed out.
func (s *sim) blockedTasks(sb *sandbox) int {
	if s.stuck(sb) || sb.faultWait || waitsPageIn(sb) {
		return 1
	}
	return 0
}

// waitsPageIn reports whether sb's agent's admitted action waits for room to
// fault sb's paged-out memory back (start, retryPagingIn).
func waitsPageIn(sb *sandbox) bool {
	ag := sb.ag
	return sb.paged && ag.sb == sb && ag.phase == phPagingIn && !ag.faulting
}

// underOOM is the domain's under-OOM flag: on v1 (under_oom) something
// waits under the hold; on v2 usage is above the line and a waiter is
// stalled on memory (one the policy froze does not stall).
func (s *sim) underOOM() bool {
	if s.cfg.V2 && s.h.used <= s.cfg.HoldLine {
		return false
	}
	for _, w := range s.waiters {
		if w.sb.oomWait && (!s.cfg.V2 || s.stuck(w.sb)) {
			return true
		}
	}
	return false
}

// applyHold acts on the hold's step in the decision core, as the live
// adapter does: a release lets the OOM killer kill the largest sandbox
// and the waiters go on, a re-arm makes allocations at the budget wait
// again.
func (s *sim) applyHold(a policy.HoldAction, p policy.Preemption) {
	switch a {
	case policy.HoldBegan:
		s.debugf("hold began")
	case policy.HoldResolved:
		s.debugf("hold resolved")
	case policy.HoldRelease:
		s.debugf("hold released")
		s.armed = false
		// v1: the waiters are at the budget, the OOM killer acts now; v2:
		// memory.high goes to max, they grow on and meet memory.max
		// (after() kills there).
		if v := s.h.largest(); v != nil && !s.cfg.V2 {
			s.oomKill(v)
		}
		s.wakeWaiters()
	case policy.HoldRearm:
		s.armed = true
	case policy.HoldPreempt:
		s.debugf("hold preempted %s", p.Agent)
		s.preempt(p)
		s.wakeWaiters()
	}
}

func (s *sim) holdResult() {
	if !s.m.HoldArmed() {
		return
	}
	st := s.m.HoldStats()
	s.res.Holds, s.res.HoldsResolved, s.res.HoldsReleased = int(st.Holds), int(st.Resolved), int(st.Released)
	s.res.HoldTime, s.res.HoldFroze = st.Held, int(st.Froze)
}
