package sim

import (
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
)

// This file feeds the live admitter's decision steps beyond seed 000 (the
// pure functions of internal/policy admitstep.go: the physical check by
// predicted peaks, agent pacing, admission liveness, a retry reserving what
// its earlier attempt needed, the gate's demand cap) with the simulated
// host's state. The functions are called, not copied; only the bookkeeping
// (which agents are admitted, queued or paced) is the simulator's.

// admittedSeq yields the agents holding an admitted ticket as
// policy.Admitted, their sandboxes brought up to now.
func (s *sim) admittedSeq(yield func(policy.Admitted) bool) {
	for _, ag := range s.admitted {
		s.h.advance(ag.sb, s.now)
		if !yield(ag.admittedNow()) {
			return
		}
	}
}

// admittedNow is ag's admitted action with its sandbox's current memory
// (as of the sandbox's last advance).
func (ag *agent) admittedNow() policy.Admitted {
	return policy.Admitted{Before: ag.before, Memory: ag.sb.mem, Peak: ag.peak, Charge: ag.charge}
}

// physicalHeadroom is admission's physical headroom (policy.PhysicalHeadroom)
// on the simulated domain.
func (s *sim) physicalHeadroom() int64 {
	return policy.PhysicalHeadroom(s.cfg.Budget-s.h.projected(s.now), s.cfg.Margin, s.admittedSeq)
}

// livenessHeadroom is policy.LivenessHeadroom with the oldest queued
// ticket (ties broken by enqueue order); it counts the admissions it lets
// through.
func (s *sim) livenessHeadroom(phys int64) int64 {
	if len(s.admitted) > 0 || len(s.tickets) == 0 {
		return phys
	}
	var oldest *agent
	for _, ag := range s.tickets {
		if oldest == nil || ag.enq < oldest.enq || ag.enq == oldest.enq && ag.seq < oldest.seq {
			oldest = ag
		}
	}
	got := policy.LivenessHeadroom(phys, len(s.admitted), &policy.Queued{Enqueued: epoch.Add(oldest.enq), Peak: oldest.peak}, epoch.Add(s.now))
	if got > phys {
		s.res.LivenessAdmits++
	}
	return got
}

// gatePressure is the pressure agent pacing reads: the gate's, or green
// when the gate is off.
func (s *sim) gatePressure() gate.Pressure {
	if s.gate == nil {
		return gate.Green
	}
	return s.pressure
}

// tryPace starts every queued attempt that agent pacing
// (policy.AgentMayStart) lets start, in arrival order. The headroom is
// read once per pass: it does not change when an attempt starts (the
// attempt begins with a model wait), as concurrent live agentReady calls
// all read the same headroom.
func (s *sim) tryPace() {
	p := s.gatePressure()
	if len(s.slotQueue) == 0 || !policy.PacingOpen(s.active, s.waiting, p) {
		return
	}
	headroom, read := int64(0), false
	headroomOnce := func() int64 {
		if !read {
			headroom, read = s.physicalHeadroom(), true
		}
		return headroom
	}
	kept := s.slotQueue[:0]
	var start []*agent
	for _, ag := range s.slotQueue {
		if ag.firstPeak < 0 {
			ag.firstPeak = 0
			if len(ag.wf.Actions) > 0 {
				ag.firstPeak = policy.FirstPeak(ag.pred, ag.wf.ID, &ag.wf.Actions[0])
			}
		}
		if policy.AgentMayStart(s.active, s.waiting, p, headroomOnce, ag.firstPeak, s.cfg.AgentReserve) {
			ag.paced = true
			s.active++
			start = append(start, ag)
		} else {
			kept = append(kept, ag)
		}
	}
	clear(s.slotQueue[len(kept):])
	s.slotQueue = kept
	for _, ag := range start {
		s.startAttempt(ag)
	}
}

// agentDone ends a paced attempt (the live admitter's agentDone).
func (s *sim) agentDone(ag *agent) {
	if ag.paced {
		ag.paced = false
		s.active--
		s.kick = true
	}
}

// learn records what the current action of ag grew (policy.RetryReserve).
func (s *sim) learn(ag *agent, grown int64, oom bool) {
	s.learned.Learn(policy.ActionKey{Workflow: ag.wf.ID, Index: ag.next}, grown, ag.peak, oom)
}

// demandCap sets the gate's demand cap of sb's sample (policy.DemandCap).
func (s *sim) demandCap(sb *sandbox, smp *gate.Sample) {
	ag := sb.ag
	var adm *policy.Admitted
	if ag.sb == sb && ag.admIdx >= 0 && sb.act != nil {
		a := ag.admittedNow()
		adm = &a
	}
	smp.DemandCap, smp.HasCap = policy.DemandCap(adm, s.cfg.Gate.BootstrapDemand)
}
