package sim

import (
	"cmp"
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
)

// sample is one gate period: observe every live sandbox, step the
// decision core (the OOM hold, then the gate), freeze and thaw as decided
// and act on the hold; then the residency policy's idle reclaim and
// held-back rematerializations.
func (s *sim) sample() {
	s.kick = true
	s.h.advanceAll(s.now)
	obs := policy.Observation{Available: max(s.cfg.Budget-s.h.used, 0), UnderOOM: s.underOOM(),
		AboveHoldLine: s.cfg.V2 && s.h.used > s.cfg.HoldLine}
	// Only the gate and the OOM hold look at the sandboxes, and at their
	// threads only where the hold wants them (as the live adapter samples
	// them).
	if s.cfg.Policy.Gate || s.m.HoldArmed() {
		threads := s.m.WantsThreads(obs.UnderOOM, obs.AboveHoldLine)
		obs.Sandboxes = make([]gate.Sample, 0, len(s.h.all))
		for _, sb := range s.h.sorted {
			if sb.state == sbLive {
				blocked := -1
				if threads {
					blocked = s.blockedTasks(sb)
				} else if sb.frozen {
					blocked = 0
				}
				obs.Sandboxes = append(obs.Sandboxes, gate.Sample{ID: sb.id, Footprint: sb.mem, CPU: sb.cpu,
					MemStall: s.memStall(sb, s.cfg.Gate.Period), Blocked: blocked, Frozen: sb.frozen})
			}
		}
	}
	t0 := time.Now()
	st := s.m.Sample(s.clock(), obs)
	if s.cfg.Policy.Gate {
		s.res.GateStepWall += time.Since(t0)
		s.res.GateSteps++
		d := st.Gate
		s.traceGate(d, len(obs.Sandboxes), obs.Available)
		for _, sd := range d.Sandboxes {
			sb := s.h.byID[sd.ID]
			switch {
			case sb == nil:
			case !sd.Allowed && !sb.frozen:
				s.debugf("freeze %s %v mem=%dMiB demand=%dMiB", sb.id, d.Pressure, sb.mem>>20, sd.Demand>>20)
				s.freeze(sb)
			case !sd.Allowed:
				sb.faultWait = false // frozen by the gate again, not waiting for memory
			case sd.Allowed && sb.frozen:
				s.debugf("thaw %s %v mem=%dMiB demand=%dMiB", sb.id, d.Pressure, sb.mem>>20, sd.Demand>>20)
				s.thaw(sb)
			}
		}
	}
	s.applyHold(st.Hold, st.Preempt)
	if st.Rollback.Agent != "" {
		s.rollback(st.Rollback)
	}
	if s.cfg.Policy.Residency {
		s.reclaimIdle()
		s.retryPagingIn()
		s.retryBlocked()
	}
}

func (s *sim) freeze(sb *sandbox) {
	s.res.Freezes++
	s.h.setActive(sb, s.now, false)
	sb.frozen, sb.frozenAt, sb.faultWait = true, s.now, false
	sb.gen++ // cancels the pending phase event; thaw reschedules it
}

// thaw lets sb run again; one paged out while frozen faults its memory
// back first (evThawed).
func (s *sim) thaw(sb *sandbox) {
	if sb.paged && !s.fits(sb) && !s.swapColdFor(sb) {
		sb.faultWait = true
		return // stays frozen until its memory fits back
	}
	sb.frozen, sb.faultWait = false, false
	if sb.paged {
		sb.gen++
		s.at(s.faultBack(sb), evThawed, nil, sb)
		return
	}
	s.unfreeze(sb)
}

// swapColdFor models the kernel's reclaim when a thawed, paged-out sb
// faults its memory back at the limit: the domain's coldest pages, those of
// the other sandboxes that run nothing (idle or frozen), go to swap, the
// largest first, until sb fits. It reports whether sb fits. Without it a
// thaw that did not fit waited for memory nobody would free: on batch18 at
// 768 MiB on pure v2 the gate spent its slot on one such sandbox for 1600 s
// while seven frozen growers and thirteen admitted actions waited.
func (s *sim) swapColdFor(sb *sandbox) bool {
	if s.cfg.Swap.Off {
		return false
	}
	var cold []*sandbox
	for _, o := range s.h.sorted {
		if o != sb && o.state == sbLive && !o.paged && !o.oomWait && (o.act == nil || o.frozen) {
			cold = append(cold, o)
		}
	}
	slices.SortStableFunc(cold, func(a, b *sandbox) int { return cmp.Compare(b.mem, a.mem) })
	for _, o := range cold {
		if s.fits(sb) {
			break
		}
		s.debugf("kernel_reclaim %s for %s", o.id, sb.id)
		s.pageOut(o)
	}
	return s.fits(sb)
}

// unfreeze restarts the action of a sandbox that is neither frozen nor
// paged out. An action admitted while its sandbox was paged out and frozen
// (phPagingIn) starts now: the thaw faulted its memory back, so
// retryPagingIn, which waits for a paged sandbox, would never start it.
func (s *sim) unfreeze(sb *sandbox) {
	switch {
	case sb.act != nil && !sb.oomWait: // a waiter stays waiting; resume goes on with it
		s.h.setActive(sb, s.now, true)
		s.schedulePhase(sb)
	case sb.act == nil && sb.ag.sb == sb && sb.ag.phase == phPagingIn && !sb.ag.faulting:
		// Not when its own page-in is under way: that starts it when done.
		s.start(sb.ag)
	}
}

// reclaimIdle runs residency's decision over the live sandboxes that run
// nothing (their agent in a model wait or an admission wait, or frozen by
// the gate) and carries it out.
func (s *sim) reclaimIdle() {
	var idle []policy.IdleSandbox
	for _, sb := range s.h.all {
		if sb.state != sbLive || sb.ag.sb != sb || sb.oomWait {
			continue
		}
		if ph := sb.ag.phase; sb.act == nil && (ph == phWaiting || ph == phAdmission) || sb.act != nil && sb.frozen {
			idle = append(idle, s.idle(sb))
		}
	}
	if len(idle) > 0 {
		s.reclaim(s.cfg.Residency.Decide(s.clock(), s.pressureNow(), s.m.Waiting(), s.freeShare(), s.reclaimNeed(), idle))
	}
}

// reclaimNeed is what the pressure asks reclaim to free
// (policy.Machine.ReclaimNeed) less what residency's teardowns under way
// free when they end (a page-out frees at once); -1 when unknown.
func (s *sim) reclaimNeed() int64 {
	need := s.m.ReclaimNeed()
	if need < 0 {
		return -1
	}
	for _, sb := range s.h.all {
		if sb.state == sbTearing && sb.ag.phase != phFinishing {
			need -= sb.mem
		}
	}
	return max(need, 0)
}

// traceGate sends a summary of the gate's state to Config.Debug every 5 s
// of simulated time.
func (s *sim) traceGate(d gate.Decision, live int, avail int64) {
	if s.cfg.Debug == nil || s.now%(5*time.Second) != 0 {
		return
	}
	frozen := 0
	for _, sb := range s.h.all {
		if sb.frozen {
			frozen++
		}
	}
	s.debugf("gate %v avail=%dMiB live=%d frozen=%d running=%d admitted=%d waiting=%d active=%d queued=%d permitted=%d",
		d.Pressure, avail>>20, live, frozen, s.running, s.m.Running(), s.m.Waiting(), s.m.Active(), s.m.Queued(), len(d.Permitted))
}

// freeShare is the domain's free memory as a share of its budget, what
// the live host reads as available at its last sample.
func (s *sim) freeShare() float64 {
	if s.cfg.Budget <= 0 {
		return -1
	}
	return float64(max(s.cfg.Budget-s.h.used, 0)) / float64(s.cfg.Budget)
}
