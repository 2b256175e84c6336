package residency

import (
	"context"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
)

// Tick applies the residency policy at the reclaim pressure
// (reclaimPressure): it snapshots the idle resident sandboxes, calls
// policy.DecideReclaim and starts the chosen teardowns and page-outs in
// the background, in decision order, at most LifecycleLimit at once. A
// page-out is assumed to free the working set less its compressed copy
// (the host's compression ratio, else DefaultCompressionRatio) and to
// cost its page-in at the measured rate (DefaultPageInRate until
// measured). It returns the decisions. Sandboxes
// whose agent is busy (unless its action stalled in admission, Stall) or
// locked (another lifecycle operation) are skipped this tick.
func (m *Manager) Tick() []policy.ReclaimDecision {
	if m.bg.Err() != nil {
		return nil
	}
	m.reapZombies()
	now := m.cfg.Clock.Now()
	tdc, rmc := m.Costs()
	ratio := m.compressionRatio()
	var idle []policy.IdleSandbox
	for _, a := range m.sortedAgents() {
		if !a.mu.TryLock() {
			continue
		}
		if !m.isPending(a) {
			if is, ok := m.idleOf(a, now, tdc, rmc, ratio); ok {
				idle = append(idle, is)
			}
		}
		a.mu.Unlock()
	}
	pressure := m.reclaimPressure()
	ds := policy.DecideReclaim(now, pressure, m.cfg.Free(), m.need(nil), idle, m.cfg.Policy)
	if len(ds) == 0 {
		return nil
	}
	// Under pressure a reclaim takes the next free slot of its pool before
	// any rematerialization or predictive page-in waiting for one (a page-in
	// an action waits for goes first: slots); in green it is not urgent and
	// waits its turn behind them, so an agent's next sandbox is not held up
	// by reclaims that only amortize.
	prio := prioReclaim
	if pressure == gate.Green {
		prio = prioRestore
	}
	type job struct {
		a    *agent
		kind policy.ReclaimKind
	}
	// Page-outs and teardowns take slots of their own pools (slotsFor),
	// each pool's in decision order: a teardown waiting for a slot does
	// not hold up a page-out decided after it.
	queues := map[*slots][]job{}
	m.mu.Lock()
	for _, d := range ds {
		if a, ok := m.agents[d.ID]; ok && !a.pending {
			a.pending, a.frees = true, d.Frees
			m.inflight += d.Frees
			pool := m.slotsFor(d.Kind == policy.ReclaimPageOut)
			queues[pool] = append(queues[pool], job{a, d.Kind})
		}
	}
	m.mu.Unlock()
	for _, d := range ds {
		m.emit(Event{Time: now, Kind: EventReclaimDecision, Agent: d.ID, WorkingSet: d.WorkingSet, Bytes: d.Frees,
			Reason: d.Kind.String() + ": " + d.Reason})
	}
	for pool, jobs := range queues {
		m.work.Add(1)
		go func() {
			defer m.work.Done()
			for _, j := range jobs {
				if err := pool.acquire(m.bg, prio); err != nil {
					m.clearPending(j.a)
					continue
				}
				m.work.Add(1)
				go func() {
					defer m.work.Done()
					defer pool.release()
					defer m.clearPending(j.a)
					m.reclaimOne(j.a, j.kind)
				}()
			}
		}()
	}
	return ds
}

// idleOf is agent a as policy.DecideReclaim sees it (a.mu held); ok is
// false when a is not a candidate (not resident, or busy with an action
// that has not stalled).
func (m *Manager) idleOf(a *agent, now time.Time, tdc, rmc time.Duration, ratio float64) (policy.IdleSandbox, bool) {
	stalled := m.stalledFor(a, now)
	if a.state != stateResident || !(!a.busy && a.haveVerdict || stalled > 0) {
		return policy.IdleSandbox{}, false
	}
	ws := a.workingSet // measured at the boundary
	switch {
	case a.pagedOut:
		// Paged out, it holds its compressed copy: all a teardown
		// frees, as the simulator counts it. Counted at the working set
		// measured before the page-out, a teardown looked as good as one
		// of a resident sandbox and was chosen in yellow for waits that
		// amortize it: replaying batch18 live at 1 GiB, 140 of 293
		// teardowns were of paged-out sandboxes (5 MiB working sets,
		// their 3-4 MiB already freed), each a capture and a
		// rematerialization on its agent's path (median 0.46 s) for
		// about 1.7 MiB.
		ws -= pageFrees(ws, ratio)
	case stalled > 0:
		// Mid-action (waiting for admission or frozen by the gate): what
		// it holds now.
		if cur, err := m.host.WorkingSet(m.bg, a.sandbox); err == nil {
			ws = cur
		}
	}
	return policy.IdleSandbox{
		ID: a.info.ID, WorkingSet: ws, Restartable: a.verdict.Restartable,
		IdleSince: a.idleSince, PredictedWait: a.wait, TeardownCost: tdc, RematCost: rmc,
		PagedOut: a.pagedOut, PageFrees: pageFrees(ws, ratio), PageInCost: m.pageInCost(ws),
		Stalled: stalled,
	}, true
}

// reclaimOne tears down or pages out an idle sandbox unless its agent
// moved on or, now that its turn for a lifecycle slot came, residency
// would no longer reclaim it (pressure fell, its wait is nearly over):
// the decision is taken again for it alone, with the pressure and free
// memory of now.
func (m *Manager) reclaimOne(a *agent, kind policy.ReclaimKind) {
	if !a.mu.TryLock() {
		return // Ensure or another lifecycle operation holds it: not idle
	}
	defer a.mu.Unlock()
	now := m.cfg.Clock.Now()
	if a.state != stateResident || a.busy && (m.stalledFor(a, now) == 0 || kind != policy.ReclaimPageOut) {
		return // moved on; a stalled action's sandbox is only paged out
	}
	tdc, rmc := m.Costs()
	is, ok := m.idleOf(a, now, tdc, rmc, m.compressionRatio())
	var again []policy.ReclaimDecision
	if ok {
		again = policy.DecideReclaim(now, m.reclaimPressure(), m.cfg.Free(), m.need(a), []policy.IdleSandbox{is}, m.cfg.Policy)
	}
	if len(again) == 0 || again[0].Kind != kind {
		// Not now, or the other way, whose pool's slot this is not:
		// the next Tick decides again.
		m.metrics.update(func(x *Metrics) { x.ReclaimsDropped++ })
		return
	}
	// Failures are logged and counted; the sandbox stays resident.
	if kind == policy.ReclaimPageOut {
		_ = m.pageOutLocked(m.bg, a)
		return
	}
	_ = m.teardownLocked(m.bg, a)
}

func (m *Manager) isPending(a *agent) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return a.pending
}

func (m *Manager) clearPending(a *agent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.pending {
		m.inflight -= a.frees
	}
	a.pending, a.frees = false, 0
}

// need is the memory the pressure asks reclaim to free (Config.Need) less
// what the queued reclaims other than self's (nil: all of them) are
// expected to free; -1 when unknown.
func (m *Manager) need(self *agent) int64 {
	need := m.cfg.Need()
	if need < 0 {
		return -1
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	queued := m.inflight
	if self != nil && self.pending {
		queued -= self.frees
	}
	return max(need-queued, 0)
}

// Prefetch starts a predictive rematerialization of an absent agent, or a
// page-in of a paged-out one, in the background when pressure is green
// (seed 000 Table 1) and reports whether it started. Call it when the end
// of the agent's wait is known. Ensure later finds the sandbox resident
// and thawed.
func (m *Manager) Prefetch(agentID string) bool {
	if m.bg.Err() != nil || !policy.MayRematerialize(m.cfg.Pressure(), true) {
		return false
	}
	a, err := m.lookup(agentID)
	if err != nil {
		return false
	}
	if !a.mu.TryLock() {
		return false
	}
	absent := a.state == stateAbsent
	pagedOut := a.state == stateResident && a.pagedOut
	a.mu.Unlock()
	if !absent && !pagedOut {
		return false
	}
	m.work.Add(1)
	go func() {
		defer m.work.Done()
		a.mu.Lock() // same order as Ensure: agent lock, then a slot
		defer a.mu.Unlock()
		pool := m.slotsFor(a.state == stateResident)
		if err := pool.acquire(m.bg, prioRestore); err != nil {
			return
		}
		defer pool.release()
		if !policy.MayRematerialize(m.cfg.Pressure(), true) {
			return
		}
		ctx := context.WithoutCancel(m.bg)
		switch {
		case a.state == stateAbsent:
			_ = m.rematerialize(ctx, a)
		case a.state == stateResident && a.pagedOut && !a.busy:
			_ = m.pageInLocked(ctx, a, true, false)
		}
	}()
	return true
}

// reapZombies retries, in the background, destroying sandboxes whose
// destroy failed after their record was committed.
func (m *Manager) reapZombies() {
	m.mu.Lock()
	zs := m.zombies
	m.zombies = nil
	m.mu.Unlock()
	if len(zs) == 0 {
		return
	}
	m.work.Add(1)
	go func() {
		defer m.work.Done()
		var failed []string
		for _, id := range zs {
			if err := m.host.Destroy(m.bg, id); err != nil {
				failed = append(failed, id)
			}
		}
		m.mu.Lock()
		m.zombies = append(m.zombies, failed...)
		m.mu.Unlock()
	}()
}

// reclaimPressure is the pressure idle sandboxes are reclaimed at:
// policy.ReclaimPressure over Config.Pressure, Config.Waiting and the
// page-out tier.
func (m *Manager) reclaimPressure() Pressure {
	return policy.ReclaimPressure(m.cfg.Pressure(), m.cfg.Waiting(), m.cfg.Policy.PageOut)
}
