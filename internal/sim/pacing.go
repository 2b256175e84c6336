package sim

import (
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/predict"
)

// This file holds the live admitter's extensions beyond seed 000
// (internal/policy admitctl.go), reproduced on the simulated host: the
// physical check by predicted peaks, agent pacing, admission liveness and a
// retry reserving what its earlier attempt needed. The live code runs them
// in goroutines polling a clock, so the simulator cannot call it; each
// function names the live one it mirrors.

// livenessWait is how long the oldest queued action waits while no
// admitted action runs before it is admitted on the logical check alone
// (policy.livenessWait).
const livenessWait = 2 * time.Second

// actionKey names one action of one workflow, across attempts.
type actionKey struct {
	workflow string
	index    int
}

// physicalHeadroom is admission's physical headroom
// (admitter.physicalHeadroom): available memory, less the margin, less the
// growth admitted actions are still predicted to make (predicted peak, or
// the charge if larger, minus what they have grown so far).
func (s *sim) physicalHeadroom() int64 {
	var pending int64
	for _, ag := range s.admitted {
		s.h.advance(ag.sb, s.now)
		grown := max(ag.sb.mem-ag.before, 0)
		pending += max(max(ag.peak, ag.charge)-grown, 0)
	}
	return s.cfg.Budget - s.h.projected(s.now) - s.cfg.Margin - pending
}

// livenessHeadroom raises phys so that the oldest queued action fits when
// no admitted action runs and it has waited livenessWait
// (admitter.schedule): memory held by idle sandboxes cannot be freed by
// waiting, so the physical check alone would deadlock the run.
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
	if s.now-oldest.enq >= livenessWait && oldest.peak > phys {
		s.res.LivenessAdmits++
		return oldest.peak
	}
	return phys
}

// paceOK reports whether a new attempt may start (admitter.agentReady):
// at once when no attempt runs; otherwise when no action waits for
// admission, the gate (if on) reports green, and the first action's
// predicted peak plus the agent reserve fits the physical headroom.
// headroom is computed once per pass by the caller (it does not change
// when an attempt starts: the attempt begins with a model wait).
func (s *sim) paceOK(ag *agent, headroom int64) bool {
	if s.active == 0 {
		return true
	}
	if ag.firstPeak < 0 {
		ag.firstPeak = 0
		if len(ag.wf.Actions) > 0 {
			ag.firstPeak = ag.pred.Predict(predict.ContextFor(ag.wf.ID, ag.wf.Actions[0], nil, 0)).PredPeak
		}
	}
	return headroom >= ag.firstPeak+s.cfg.AgentReserve
}

// paceGlobalOK is the part of paceOK shared by every queued attempt.
func (s *sim) paceGlobalOK() bool {
	return s.active == 0 || s.waiting == 0 && (s.gate == nil || s.pressure == gate.Green)
}

// tryPace starts every queued attempt that passes pacing, in arrival order.
func (s *sim) tryPace() {
	if len(s.slotQueue) == 0 || !s.paceGlobalOK() {
		return
	}
	headroom := int64(0)
	if s.active > 0 {
		headroom = s.physicalHeadroom()
	}
	kept := s.slotQueue[:0]
	var start []*agent
	for _, ag := range s.slotQueue {
		if s.paceOK(ag, headroom) {
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

// agentDone ends a paced attempt (admitter.agentDone).
func (s *sim) agentDone(ag *agent) {
	if ag.paced {
		ag.paced = false
		s.active--
		s.kick = true
	}
}

// learn records what an action of this attempt grew (admitter.done): a
// retry of the same action reserves at least that. After an OOM kill it is
// at least 1.5 times what was predicted.
func (s *sim) learn(ag *agent, grown int64, oom bool) {
	if oom {
		grown = max(grown, ag.peak*3/2)
	}
	k := actionKey{ag.wf.ID, ag.next}
	s.learned[k] = max(s.learned[k], grown)
}

// applyLearned raises a descriptor to what an earlier attempt of the same
// action needed (admitter.ready).
func (s *sim) applyLearned(ag *agent, d predict.Descriptor) predict.Descriptor {
	if l, ok := s.learned[actionKey{ag.wf.ID, ag.next}]; ok && l > d.PredPeak {
		d.PredPeak, d.PredAvg, d.HeavyRisk = l, max(d.PredAvg, l*4/5), max(d.HeavyRisk, 1)
	}
	return d
}

// demandCap sets the gate's demand cap of sb's sample (gateRunner.start's
// observer): a sandbox running no admitted action may not grow (cap 0); one
// whose admitted action is below its predicted peak may grow by the rest
// (at least the bootstrap demand); one that outgrew its prediction gets no
// cap.
func (s *sim) demandCap(sb *sandbox, smp *gate.Sample) {
	smp.HasCap = true
	ag := sb.ag
	if ag.sb != sb || ag.admIdx < 0 || sb.act == nil {
		return
	}
	left := max(ag.peak, ag.charge) - (sb.mem - ag.before)
	smp.DemandCap, smp.HasCap = max(left, s.cfg.Gate.BootstrapDemand), left > 0
}
