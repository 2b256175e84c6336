package sim

import (
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/admission"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/predict"
)

// enqueueAttempt queues a new attempt for an agent slot and starts what fits.
func (s *sim) enqueueAttempt(ag *agent) {
	ag.phase = phQueued
	s.slotQueue = append(s.slotQueue, ag)
	s.tryStartAgents()
}

// tryStartAgents starts queued attempts, FIFO, as the policy's agent-level
// limit allows (static-N slots, agent-reservation budget, or none).
func (s *sim) tryStartAgents() {
	sp := s.cfg.Policy
	if s.adm != nil {
		s.tryPace()
		return
	}
	for len(s.slotQueue) > 0 {
		ag := s.slotQueue[0]
		switch {
		case sp.StaticN > 0 && s.slotsUsed >= sp.StaticN:
			return
		case sp.Reservation && s.reserved > 0 && s.reserved+ag.reserve > s.cfg.Budget:
			return
		}
		s.slotQueue = s.slotQueue[1:]
		if sp.StaticN > 0 || sp.Reservation {
			ag.slot = true
			s.slotsUsed++
			s.reserved += ag.reserve
		}
		s.startAttempt(ag)
	}
}

func (s *sim) releaseSlot(ag *agent) {
	if ag.slot {
		ag.slot = false
		s.slotsUsed--
		s.reserved -= ag.reserve
		s.tryStartAgents()
	}
}

func (s *sim) startAttempt(ag *agent) {
	s.debugf("agent_start %s %d", ag.wf.ID, ag.attempt+1)
	ag.attempt++
	if ag.attempt == 1 {
		ag.res.Started = s.now
	}
	ag.res.Attempts = ag.attempt
	s.res.Attempts++
	ag.attemptStart, ag.next, ag.hist = s.now, 0, nil
	ag.waitSum, ag.waitN, ag.nSandbox = 0, 0, 0
	s.beginWait(ag)
}

// beginWait starts the model wait before action ag.next, or finishes the
// attempt after its last action.
func (s *sim) beginWait(ag *agent) {
	if ag.next >= len(ag.prof) {
		s.finish(ag)
		return
	}
	ag.phase = phWaiting
	w := secs(ag.wf.Actions[ag.next].Wait)
	ag.waitSum += w
	ag.waitN++
	s.at(w, evWaitEnd, ag, nil)
}

// waitEnd makes sure the agent has a live sandbox, then readies the action.
func (s *sim) waitEnd(ag *agent) {
	sb := ag.sb
	switch {
	case sb == nil:
		s.ensure(ag)
	case sb.state == sbTearing:
		ag.phase, ag.wantRemat = phEnsuring, true
	case sb.state == sbLive:
		s.ready(ag)
	default: // creating: sandboxUp readies it
		ag.phase = phEnsuring
	}
}

// ensure creates the attempt's first sandbox or rematerializes a torn-down
// one, as the residency policy allows.
func (s *sim) ensure(ag *agent) {
	remat := ag.nSandbox > 0
	cost := s.cfg.Create
	if remat {
		if !s.cfg.Residency.MayRematerialize(s.pressureNow()) || s.lifeUsed >= s.cfg.LifecycleSlots {
			ag.phase = phBlocked
			s.blocked = append(s.blocked, ag)
			return
		}
		cost = s.cfg.Rematerialize
		s.lifeUsed++
		s.res.Rematerializations++
	}
	ag.nSandbox++
	sb := &sandbox{id: fmt.Sprintf("%s.a%d.s%d", ag.wf.ID, ag.attempt, ag.nSandbox), ag: ag,
		state: sbCreating, remat: remat, activeIdx: -1, allIdx: -1, floor: s.cfg.SandboxBase}
	if remat {
		sb.floor += ag.sb0files()
	}
	ag.sb, ag.phase = sb, phEnsuring
	s.res.LifecycleTime += cost
	s.at(cost, evSandboxUp, nil, sb)
}

// sb0files is what a rematerialized sandbox restores: the files the
// attempt's completed actions wrote.
func (ag *agent) sb0files() int64 {
	var f int64
	for i := range ag.next {
		if m := ag.wf.Actions[i].Mem; m != nil {
			f += mib(m.FilesMiB)
		}
	}
	return f
}

func (s *sim) sandboxUp(sb *sandbox) {
	ag := sb.ag
	if s.mustWait(sb.floor) {
		s.wait(sb, sb.floor) // under the OOM hold: the creation waits for its memory
		return
	}
	if sb.remat {
		s.lifeUsed--
		defer s.retryBlocked()
	}
	sb.state, sb.tmat = sbLive, s.now
	s.h.add(sb)
	s.h.setMem(sb, sb.floor)
	if ag.phase == phEnsuring {
		s.ready(ag)
	}
}

// ready is action-ready with a live sandbox: admission, or start at once.
func (s *sim) ready(ag *agent) {
	if s.adm == nil {
		s.start(ag)
		return
	}
	a := ag.wf.Actions[ag.next]
	d := ag.pred.Predict(predict.ContextFor(ag.wf.ID, a, ag.hist, (s.now - ag.attemptStart).Seconds()))
	d = s.learned.Apply(policy.ActionKey{Workflow: ag.wf.ID, Index: ag.next}, d)
	t := s.adm.Enqueue(admission.Request{ID: fmt.Sprintf("%s/%d", ag.sb.id, ag.next), Descriptor: d,
		Enqueued: epoch.Add(s.now)})
	s.seq++
	ag.ticket, ag.phase = t, phAdmission
	ag.enq, ag.seq, ag.peak = s.now, s.seq, d.PredPeak
	s.tickets[t] = ag
	s.waiting++
	s.kick = true
}

// schedule runs admission with the physical headroom the live policy uses
// (see physicalHeadroom and livenessHeadroom).
func (s *sim) schedule() {
	phys := s.livenessHeadroom(s.physicalHeadroom())
	for _, t := range s.adm.Schedule(phys) {
		ag := s.tickets[t]
		delete(s.tickets, t)
		s.waiting--
		ag.admIdx, ag.charge = len(s.admitted), t.Charge()
		s.admitted = append(s.admitted, ag)
		s.start(ag)
	}
}

func (s *sim) dropAdmitted(ag *agent) {
	if i := ag.admIdx; i >= 0 {
		last := s.admitted[len(s.admitted)-1]
		s.admitted[i], last.admIdx = last, i
		s.admitted = s.admitted[:len(s.admitted)-1]
		ag.admIdx = -1
	}
}

// start runs action ag.next in its sandbox.
func (s *sim) start(ag *agent) {
	sb := ag.sb
	s.h.advance(sb, s.now)
	ag.before, ag.started = sb.mem, s.now
	ag.phase = phRunning
	if s.cfg.ActionTimeout > 0 {
		s.at(s.cfg.ActionTimeout, evTimeout, ag, nil)
	}
	s.running++
	s.res.Actions++
	sb.act, sb.progress = &ag.prof[ag.next], 0
	if !sb.frozen {
		s.h.setActive(sb, s.now, true)
		s.schedulePhase(sb)
	} else {
		s.h.advance(sb, s.now)
	}
}

func (s *sim) schedulePhase(sb *sandbox) {
	sb.gen++
	s.at(sb.act.nextBoundary(sb.progress)-sb.progress, evPhase, nil, sb)
}

// phase handles a phase boundary of the action running in sb.
func (s *sim) phase(sb *sandbox) {
	s.h.advance(sb, s.now)
	if sb.progress >= sb.act.end {
		if more := sb.act.leaves - sb.act.memAt(sb.progress); s.mustWait(more) {
			s.wait(sb, more) // under the OOM hold: the exit waits to write its files
			return
		}
		s.actionDone(sb.ag)
		return
	}
	s.h.refreshRate(sb, s.now)
	s.schedulePhase(sb)
}

// actionDone is the action-done boundary.
func (s *sim) actionDone(ag *agent) {
	sb, p := ag.sb, &ag.prof[ag.next]
	s.h.setActive(sb, s.now, false)
	sb.act = nil
	sb.floor += p.leaves
	sb.pinned = sb.pinned || p.pins
	s.h.advance(sb, s.now)
	s.running--
	if ag.ticket != nil {
		s.learn(ag, p.peak, false)
		s.releaseTicket(ag)
	}
	a := ag.wf.Actions[ag.next]
	ag.hist = append(ag.hist, predict.Completed{Class: a.Class, Command: a.Command, PeakBytes: p.peak,
		AvgBytes: p.avg, DurationS: p.end.Seconds(), EndOffsetS: (s.now - ag.attemptStart).Seconds()})
	ag.next++
	if ag.next < len(ag.prof) && s.cfg.Policy.Residency && s.lifeUsed < s.cfg.LifecycleSlots {
		b := Boundary{Pressure: s.pressureNow(), Restartable: !sb.pinned,
			PredWait: ag.waitSum / time.Duration(max(ag.waitN, 1)),
			Cost:     s.cfg.Teardown + s.cfg.Rematerialize, Resident: sb.mem}
		if s.cfg.Residency.AtBoundary(b) {
			s.teardown(sb, true)
		}
	}
	s.beginWait(ag)
}

func (s *sim) releaseTicket(ag *agent) {
	if err := s.adm.Release(ag.ticket); err != nil {
		panic(fmt.Sprintf("sim: %v", err)) // a bookkeeping bug, not a run condition
	}
	s.dropAdmitted(ag)
	ag.ticket = nil
	s.kick = true
}

// teardown starts destroying sb; residency teardowns take a lifecycle slot.
func (s *sim) teardown(sb *sandbox, residency bool) {
	sb.state = sbTearing
	s.res.LifecycleTime += s.cfg.Teardown
	if residency {
		s.lifeUsed++
		s.res.Teardowns++
	}
	s.at(s.cfg.Teardown, evTornDown, nil, sb)
}

func (s *sim) tornDown(sb *sandbox) {
	ag := sb.ag
	s.h.remove(sb, s.now)
	if ag.phase != phFinishing {
		s.lifeUsed--
		defer s.retryBlocked()
	}
	if ag.sb == sb {
		ag.sb = nil
	}
	switch {
	case ag.phase == phFinishing:
		s.complete(ag)
	case ag.wantRemat:
		ag.wantRemat = false
		s.ensure(ag)
	}
}

// retryBlocked retries rematerializations the policy held back.
func (s *sim) retryBlocked() {
	if len(s.blocked) == 0 {
		return
	}
	b := s.blocked
	s.blocked = nil
	for i, ag := range b {
		if !s.cfg.Residency.MayRematerialize(s.pressureNow()) || s.lifeUsed >= s.cfg.LifecycleSlots {
			s.blocked = append(s.blocked, b[i:]...)
			return
		}
		s.ensure(ag)
	}
}

// finish destroys the attempt's sandbox; the workflow completes when it is gone.
func (s *sim) finish(ag *agent) {
	ag.phase = phFinishing
	switch {
	case ag.sb == nil:
		s.complete(ag)
	case ag.sb.state == sbLive:
		s.teardown(ag.sb, false)
	} // tearing: tornDown completes it
}

func (s *sim) complete(ag *agent) {
	s.debugf("workflow_done %s %d", ag.wf.ID, ag.attempt)
	ag.phase = phDone
	ag.gen++
	ag.res.Completed = true
	ag.res.End = s.now
	ag.res.Latency = s.now - ag.res.Submit
	s.res.Completed++
	s.left--
	s.agentDone(ag)
	s.releaseSlot(ag)
}

// oomKill kills sb as the kernel OOM killer would; its attempt fails.
func (s *sim) oomKill(sb *sandbox) {
	ag := sb.ag
	s.res.OOMEvents++
	ag.res.OOMs++
	s.debugf("oom %s %d action %d running=%v mem=%dMiB", ag.wf.ID, ag.attempt, ag.next, sb.act != nil, sb.mem>>20)
	if s.cfg.Debug != nil {
		s.debugHost()
	}
	if sb.act != nil && ag.sb == sb && ag.admIdx >= 0 {
		s.h.advance(sb, s.now)
		s.learn(ag, max(sb.mem-ag.before, 0), true)
	}
	if sb.act != nil {
		s.running--
		sb.act = nil
	}
	if sb.state == sbTearing && ag.phase != phFinishing {
		s.lifeUsed--
	}
	s.h.remove(sb, s.now)
	if ag.sb == sb {
		ag.sb = nil
	}
	if ag.phase == phFinishing { // its work was done; only the destroy is cut short
		s.complete(ag)
		return
	}
	s.failAttempt(ag)
}

// timeout kills the agent's sandbox after its action ran too long.
func (s *sim) timeout(ag *agent) {
	s.res.Timeouts++
	sb := ag.sb
	s.running--
	sb.act = nil
	s.h.remove(sb, s.now)
	ag.sb = nil
	s.failAttempt(ag)
}

// failAttempt ends the current attempt and retries it or fails the workflow.
func (s *sim) failAttempt(ag *agent) {
	s.res.FailedAttempts++
	ag.gen++
	if ag.ticket != nil {
		if ag.admIdx >= 0 {
			s.releaseTicket(ag)
		} else {
			s.adm.Cancel(ag.ticket)
			delete(s.tickets, ag.ticket)
			s.waiting--
			ag.ticket = nil
		}
	}
	for i, b := range s.blocked {
		if b == ag {
			s.blocked = append(s.blocked[:i], s.blocked[i+1:]...)
			break
		}
	}
	if ag.sb != nil { // an attempt's sandbox that is still being created
		if ag.sb.state == sbCreating && ag.sb.remat {
			s.lifeUsed--
		}
		ag.sb.gen++
		ag.sb.oomWait = false
		ag.sb = nil
	}
	ag.wantRemat = false
	s.agentDone(ag)
	s.releaseSlot(ag)
	if ag.attempt > s.cfg.Retries {
		ag.phase = phDone
		ag.res.End = s.now
		ag.res.Latency = s.now - ag.res.Submit
		s.res.Failed++
		s.left--
		return
	}
	s.enqueueAttempt(ag)
}
