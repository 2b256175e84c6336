package residency

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Stalls: a sandbox that runs nothing although its agent is not in a model
// wait (its action waits for admission: Stall; or the runtime gate froze
// it mid-action: StallSandbox) is stalled. In red Tick may page it out once
// it has stalled ResidencyConfig.Stall, or its page-in's time when that is
// longer (policy.IdleSandbox.Stalled, PageInCost); it is
// never torn down. The stall state lives under Manager.mu, not the agent's
// lock, so the gate's calls never wait behind an Ensure.

// Stall marks the agent's action as waiting for admission. Unstall ends
// it. Unknown agents are ignored.
func (m *Manager) Stall(agentID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.agents[agentID]; ok {
		m.stalls[agentID] = m.cfg.Clock.Now()
	}
}

// Unstall ends Stall once the action was admitted (or gave up waiting): a
// sandbox paged out meanwhile is paged back in now, whatever the pressure,
// since admission counted the memory it takes back. A failed page-in
// leaves the sandbox thawed (its memory faults back on demand) and is
// returned.
func (m *Manager) Unstall(ctx context.Context, agentID string) error {
	a, err := m.lookup(agentID)
	if err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.stalls, agentID)
	m.mu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.pagedOut || a.state != stateResident {
		return nil
	}
	if err := m.paging.acquire(ctx, prioDemand); err != nil {
		return err
	}
	defer m.paging.release()
	return m.pageInLocked(ctx, a, false, false)
}

// StallSandbox is Stall for the agent whose current sandbox is id, for a
// sandbox the runtime gate froze. UnstallSandbox ends it.
func (m *Manager) StallSandbox(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if agentID, ok := m.bySandboxID[id]; ok {
		m.stalls[agentID] = m.cfg.Clock.Now()
	}
}

// UnstallSandbox ends StallSandbox when the gate lets the sandbox run
// again. paged reports whether it had been paged out meanwhile, so that
// the caller must not thaw it: it was paged back in and thawed (err nil,
// or the page-in failed otherwise and it is thawed anyway, its memory
// faulting back on demand), or it is left frozen (err wraps
// ErrThawDeferred: with a WholePager host not all of its memory could
// come back, or no paging slot was free) and the caller asks again
// later. It never waits for the agent's lock: when another operation
// holds it, the caller thaws the sandbox and its memory faults back on
// demand.
func (m *Manager) UnstallSandbox(ctx context.Context, id string) (paged bool, err error) {
	m.mu.Lock()
	agentID, ok := m.bySandboxID[id]
	a := m.agents[agentID]
	since, stalled := m.stalls[agentID]
	if ok {
		delete(m.stalls, agentID)
	}
	m.mu.Unlock()
	if a == nil || !a.mu.TryLock() {
		return false, nil
	}
	defer a.mu.Unlock()
	if !a.pagedOut || a.sandbox != id {
		return false, nil
	}
	restall := func(err error) (bool, error) {
		if stalled {
			m.mu.Lock()
			m.stalls[agentID] = since
			m.mu.Unlock()
		}
		return true, fmt.Errorf("%w: %s: %w", ErrThawDeferred, a.info.ID, err)
	}
	if now := m.cfg.Clock.Now(); now.Before(a.thawRetry) {
		return restall(fmt.Errorf("backing off %s after an incomplete page-in", a.thawRetry.Sub(now).Round(time.Millisecond)))
	}
	if !m.paging.tryAcquire() {
		return restall(errors.New("no paging slot free"))
	}
	defer m.paging.release()
	err = m.pageInLocked(ctx, a, false, true)
	if errors.Is(err, ErrPageInIncomplete) {
		return restall(err)
	}
	return true, err
}

// After an incomplete page-in the gate's next request to let the sandbox
// run waits thawBackoffMin, doubling with each incomplete one up to
// thawBackoffMax: each try reads all of the sandbox's pages back while the
// domain sits at its budget, where the reads only churn reclaim, and the
// gate asks every control period. Memory freed meanwhile waits at most
// thawBackoffMax for the sandbox.
const (
	thawBackoffMin = 250 * time.Millisecond
	thawBackoffMax = 2 * time.Second
)

// unstall forgets a's stall (a.mu held).
func (m *Manager) unstall(a *agent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.stalls, a.info.ID)
}

// stalledFor is how long a, busy, has stalled (a.mu held); 0: not stalled.
func (m *Manager) stalledFor(a *agent, now time.Time) time.Duration {
	if !a.busy {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	since, ok := m.stalls[a.info.ID]
	if !ok {
		return 0
	}
	return max(now.Sub(since), time.Nanosecond)
}
