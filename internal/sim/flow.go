package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// enqueueAttempt submits a new attempt to the decision core and starts
// what it lets start.
func (s *sim) enqueueAttempt(ag *agent) {
	ag.phase = phQueued
	started, err := s.m.Submit(s.clock(), ag.wf.ID, ag.attempt+1, ag.wf, s)
	switch {
	case errors.Is(err, trajectory.ErrInfeasible):
		// It can never fit the budget: never started, reported apart.
		ag.phase, ag.res.Infeasible = phDone, true
		ag.res.End, ag.res.Latency = s.now, s.now-ag.res.Submit
		s.res.Infeasible++
		s.left--
		s.debugf("infeasible %s: %v", ag.wf.ID, err)
		return
	case err != nil:
		panic(fmt.Sprintf("sim: %v", err)) // a bookkeeping bug, not a run condition
	}
	s.startAll(started)
}

// startAll starts the attempts the decision core let start.
func (s *sim) startAll(ids []string) {
	for _, id := range ids {
		s.startAttempt(s.byID[id])
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
	ag.next = 0
	ag.nSandbox = 0
	s.beginWait(ag)
}

// beginWait starts the model wait before action ag.next, or finishes the
// attempt after its last action.
func (s *sim) beginWait(ag *agent) {
	if ag.next >= len(ag.prof) {
		s.finish(ag)
		return
	}
	ag.phase, ag.idleSince = phWaiting, s.now
	ag.predWait = s.waits.Predict(ag.wf.ID)
	s.at(secs(ag.wf.Actions[ag.next].Wait), evWaitEnd, ag, nil)
}

// waitEnd makes sure the agent has a live sandbox, then readies the action.
func (s *sim) waitEnd(ag *agent) {
	s.waits.Observe(ag.wf.ID, s.now-ag.idleSince)
	sb := ag.sb
	switch {
	case sb == nil:
		s.ensure(ag)
	case sb.state == sbTearing:
		ag.phase, ag.wantRemat = phEnsuring, true
	case sb.state == sbLive && sb.paged:
		s.pageIn(ag)
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

// ready is action-ready with a live sandbox: the decision core admits it
// at once or queues it for admission (schedule).
func (s *sim) ready(ag *agent) {
	g, ok, err := s.m.ActionReady(s.clock(), ag.wf.ID, ag.next, &ag.wf.Actions[ag.next], ag.sb.id)
	if err != nil {
		panic(fmt.Sprintf("sim: %v", err))
	}
	if ok {
		ag.limit = g.Limit
		s.start(ag)
		return
	}
	ag.phase, ag.idleSince = phAdmission, s.now
	s.debugf("queued %s action %d", ag.wf.ID, ag.next)
	s.kick = true
}

// schedule runs admission in the decision core and starts what it admitted.
func (s *sim) schedule() {
	for _, g := range s.m.Schedule(s.clock(), s) {
		ag := s.byID[g.Agent]
		ag.limit = g.Limit
		if ag.phase == phAdmission {
			ag.res.Queued += s.now - ag.idleSince
		}
		s.start(ag)
	}
}

// start runs action ag.next in its sandbox.
func (s *sim) start(ag *agent) {
	sb := ag.sb
	if sb.paged { // paged out while it waited for admission
		ag.phase = phPagingIn
		if !s.fits(sb) {
			s.pagingIn = append(s.pagingIn, ag)
			return
		}
		ag.faulting = true
		s.at(s.faultBack(sb), evPagedIn, ag, nil)
		return
	}
	s.h.advance(sb, s.now)
	ag.before, ag.started = sb.mem, s.now
	ag.phase = phRunning
	s.debugf("action_start %s action %d mem=%dMiB", ag.wf.ID, ag.next, sb.mem>>20)
	if s.cfg.ActionTimeout > 0 {
		s.at(s.cfg.ActionTimeout, evTimeout, ag, nil)
	}
	s.running++
	s.res.Actions++
	sb.act, sb.progress = &ag.prof[ag.next], 0
	if ag.limit > 0 {
		if q, ok := sb.act.underLimit(ag.limit - sb.floor); ok {
			sb.act = &q
			s.res.Throttled++
		}
	}
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
	s.debugf("action_done %s action %d in %.1fs", ag.wf.ID, ag.next, (s.now - ag.started).Seconds())
	s.actionEnded(ag, policy.Done{Index: ag.next, PeakBytes: ag.before + p.peak, AvgBytes: ag.before + p.avg, Duration: p.end,
		AfterBytes: sb.mem})
	ag.next++
	if ag.next < len(ag.prof) && s.cfg.Policy.Residency {
		ag.idleSince = s.now
		s.reclaim(s.cfg.Residency.Decide(s.clock(), s.pressureNow(), s.m.Waiting(), s.freeShare(), s.reclaimNeed(), []policy.IdleSandbox{s.idle(sb)}))
	}
	s.beginWait(ag)
}

// actionEnded tells the decision core that ag's action ended with d.
func (s *sim) actionEnded(ag *agent, d policy.Done) {
	if err := s.m.ActionDone(s.clock(), ag.wf.ID, d); err != nil {
		panic(fmt.Sprintf("sim: %v", err))
	}
	ag.limit = 0
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
		switch sb := ag.sb; {
		case sb != nil && sb.paged:
			s.pageIn(ag) // blocks it again if it cannot
			continue
		case sb != nil && sb.state == sbLive:
			// Its page-in was blocked, and a thaw has faulted the memory
			// back since (thaw, evThawed): the action is ready. Creating
			// a sandbox here left the live one behind, holding its
			// memory for the rest of the run.
			s.ready(ag)
			continue
		}
		if !s.cfg.Residency.MayRematerialize(s.pressureNow()) || s.lifeUsed >= s.cfg.LifecycleSlots {
			s.blocked = append(s.blocked, b[i:]...)
			return
		}
		s.ensure(ag)
	}
}

// idle is sb, whose agent waits, as residency's decision sees it.
func (s *sim) idle(sb *sandbox) policy.IdleSandbox {
	ag := sb.ag
	is := policy.IdleSandbox{ID: sb.id, WorkingSet: sb.mem, Restartable: !sb.pinned,
		IdleSince: epoch.Add(ag.idleSince), PredictedWait: ag.predWait,
		TeardownCost: s.cfg.Teardown, RematCost: s.cfg.Rematerialize, PagedOut: sb.paged}
	switch {
	case sb.act != nil: // frozen mid-action
		is.Stalled = max(s.now-sb.frozenAt, time.Nanosecond)
	case ag.phase == phAdmission:
		is.Stalled = max(s.now-ag.idleSince, time.Nanosecond)
	}
	if !sb.paged && !s.cfg.Swap.Off {
		is.PageFrees = sb.mem - s.cfg.Swap.compressed(sb.mem)
		is.PageInCost = s.cfg.Swap.pageIn(sb.mem)
	}
	return is
}

// reclaim carries residency's decisions out: teardowns while lifecycle
// slots are free, page-outs at once.
func (s *sim) reclaim(ds []policy.ReclaimDecision) {
	for _, d := range ds {
		sb := s.h.byID[d.ID]
		if sb == nil || sb.state != sbLive || sb.act != nil && !sb.frozen {
			continue
		}
		switch {
		case d.Kind == policy.ReclaimPageOut:
			s.pageOut(sb)
		case sb.act == nil && s.lifeUsed < s.cfg.LifecycleSlots: // a teardown, never mid-action
			s.teardown(sb, true)
		}
	}
}

// pageOut pages idle sb's memory out to the simulated zram (Swap).
func (s *sim) pageOut(sb *sandbox) {
	if sb.paged || s.cfg.Swap.Off {
		return
	}
	s.h.advance(sb, s.now)
	before := sb.mem
	sb.paged, sb.compressed = true, s.cfg.Swap.compressed(sb.mem)
	s.h.advance(sb, s.now)
	s.res.PageOuts++
	s.res.PagedOutBytes += before - sb.mem
	s.debugf("page_out %s %dMiB -> %dMiB", sb.id, before>>20, sb.mem>>20)
	s.kick = true
}

// pageIn faults ag's paged-out sandbox back before its action, when
// residency allows a demand-driven rematerialization at this pressure and
// the memory fits; otherwise the agent waits with the blocked
// rematerializations.
func (s *sim) pageIn(ag *agent) {
	sb := ag.sb
	if !s.cfg.Residency.MayRematerialize(s.pressureNow()) || !s.fits(sb) {
		ag.phase = phBlocked
		s.blocked = append(s.blocked, ag)
		return
	}
	ag.phase, ag.faulting = phEnsuring, true
	s.at(s.faultBack(sb), evPagedIn, ag, nil)
}

// fits reports whether paged-out sb's memory fits the budget back.
func (s *sim) fits(sb *sandbox) bool {
	full := sb.floor
	if sb.act != nil {
		full += sb.act.memAt(sb.progress)
	}
	return s.h.projected(s.now)+full-sb.compressed <= s.cfg.Budget
}

// retryPagingIn starts the page-ins of admitted agents that now fit.
func (s *sim) retryPagingIn() {
	keep := s.pagingIn[:0]
	for _, ag := range s.pagingIn {
		switch {
		case ag.phase != phPagingIn || ag.sb == nil || !ag.sb.paged:
		case s.fits(ag.sb):
			ag.faulting = true
			s.at(s.faultBack(ag.sb), evPagedIn, ag, nil)
		default:
			keep = append(keep, ag)
		}
	}
	clear(s.pagingIn[len(keep):])
	s.pagingIn = keep
}

// faultBack brings paged-out sb's memory back and returns how long that
// takes.
func (s *sim) faultBack(sb *sandbox) time.Duration {
	sb.paged, sb.compressed = false, 0
	s.h.advance(sb, s.now)
	d := s.cfg.Swap.pageIn(sb.mem)
	s.res.LifecycleTime += d
	s.debugf("page_in %s %dMiB in %v", sb.id, sb.mem>>20, d)
	return d
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
	ag.faulting = false
	ag.res.Completed = true
	ag.res.End = s.now
	ag.res.Latency = s.now - ag.res.Submit
	s.res.Completed++
	s.left--
	s.endAttempt(ag)
}

// endAttempt tells the decision core that ag's attempt ended and starts
// what that lets start.
func (s *sim) endAttempt(ag *agent) {
	s.kick = true
	s.startAll(s.m.AgentEnd(s.clock(), ag.wf.ID, s))
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
	s.kill(sb, true)
}

// preempt kills the action the OOM hold preempted (policy.HoldPreempt)
// with its sandbox, as the replay does, and restarts its attempt without
// charging a retry (at most policy.MaxPreempts per workflow, as the replay).
//
// An idle preemption (p.Idle: the attempt runs no action) destroys the
// sandbox of an agent waiting for the model, for admission or to page in,
// and restarts its attempt the same way.
func (s *sim) preempt(p policy.Preemption) {
	sb := s.h.byID[p.Sandbox]
	if sb == nil || sb.ag.sb != sb {
		return
	}
	ag := sb.ag
	running := sb.act != nil && ag.phase == phRunning
	idle := sb.act == nil && ag.phase != phRunning && ag.phase != phFinishing && ag.phase != phDone
	if p.Idle && !idle || !p.Idle && !running {
		return
	}
	s.res.Preempted++
	ag.res.Preempted++
	ag.free = ag.res.Preempted <= policy.MaxPreempts
	s.debugf("preempt %s %d action %d mem=%dMiB idle=%v", ag.wf.ID, ag.attempt, ag.next, sb.mem>>20, p.Idle)
	s.kill(sb, false)
}

// rollback kills the action the hold rolls back (policy.Step.Rollback)
// and runs it again in the same sandbox, as the replay does: the action's
// memory goes with its processes (the sandbox is back at its floor), the
// machine is told it ended OOM-killed (so its rerun reserves what it
// reached: RetryReserve), and the agent readies it again at once, with no
// model wait in between (the machine rolls an action back once an
// attempt).
func (s *sim) rollback(p policy.Preemption) {
	sb := s.h.byID[p.Sandbox]
	if sb == nil || sb.act == nil || sb.ag.sb != sb || sb.ag.phase != phRunning {
		return
	}
	ag := sb.ag
	s.h.setActive(sb, s.now, false) // advances it: sb.mem is its memory now
	s.debugf("rollback %s action %d mem=%dMiB", ag.wf.ID, ag.next, sb.mem>>20)
	s.res.Rollbacks++
	s.actionEnded(ag, policy.Done{Index: ag.next, PeakBytes: sb.mem, OOM: true})
	sb.oomWait, sb.frozen, sb.faultWait = false, false, false // wakeWaiters drops it
	sb.act = nil
	sb.gen++ // cancels its phase event
	s.running--
	s.h.advance(sb, s.now)
	ag.phase, ag.idleSince = phWaiting, s.now
	s.at(0, evWaitEnd, ag, nil)
	s.wakeWaiters()
}

// kill ends sb and its agent's attempt: by the OOM killer (oom) or the
// hold's preemption.
func (s *sim) kill(sb *sandbox, oom bool) {
	ag := sb.ag
	if sb.act != nil && ag.sb == sb && ag.phase == phRunning {
		s.h.advance(sb, s.now)
		s.actionEnded(ag, policy.Done{Index: ag.next, PeakBytes: sb.mem, OOM: oom})
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
	ag.faulting = false
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
	s.endAttempt(ag)
	if ag.free {
		ag.free = false
		ag.charged-- // a preempted attempt: restarted without charging a retry
	}
	ag.charged++
	if ag.charged > s.cfg.Retries {
		ag.phase = phDone
		ag.res.End = s.now
		ag.res.Latency = s.now - ag.res.Submit
		s.res.Failed++
		s.left--
		return
	}
	s.enqueueAttempt(ag)
}
