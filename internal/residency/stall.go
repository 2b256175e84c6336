package residency

import (
	"context"
	"time"
)

// Stall marks the busy agent's action as waiting for admission: its
// sandbox runs nothing, and in red Tick may page it out once it has
// stalled ResidencyConfig.Stall (policy.IdleSandbox.Stalled); it is never
// torn down. Unstall ends it. Unknown or idle agents are ignored.
func (m *Manager) Stall(agentID string) {
	a, err := m.lookup(agentID)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.busy && a.state == stateResident {
		a.stalledSince = m.cfg.Clock.Now()
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
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stalledSince = time.Time{}
	if !a.pagedOut {
		return nil
	}
	if err := m.acquire(ctx); err != nil {
		return err
	}
	defer m.release()
	return m.pageInLocked(ctx, a, false)
}

// stalled reports whether a's action waits for admission (a.mu held).
func (a *agent) stalled() bool { return a.busy && !a.stalledSince.IsZero() }

// StallSandbox is Stall for the agent whose sandbox is id, for a sandbox
// the runtime gate froze mid-action: in red it may be paged out while it
// stays frozen. UnstallSandbox ends it.
func (m *Manager) StallSandbox(id string) {
	if a := m.bySandbox(id); a != nil {
		m.Stall(a.info.ID)
	}
}

// UnstallSandbox ends StallSandbox when the gate lets the sandbox run
// again. paged reports whether it had been paged out meanwhile: it was then
// paged back in and thawed (err: the page-in failed; the sandbox is thawed
// anyway, its memory faulting back on demand), and the caller need not
// thaw it.
func (m *Manager) UnstallSandbox(ctx context.Context, id string) (paged bool, err error) {
	a := m.bySandbox(id)
	if a == nil {
		return false, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stalledSince = time.Time{}
	if !a.pagedOut || a.sandbox != id {
		return false, nil
	}
	if err := m.acquire(ctx); err != nil {
		return false, err
	}
	defer m.release()
	return true, m.pageInLocked(ctx, a, false)
}

// bySandbox is the agent whose current sandbox is id, or nil.
func (m *Manager) bySandbox(id string) *agent {
	m.mu.Lock()
	as := make([]*agent, 0, len(m.agents))
	for _, a := range m.agents {
		as = append(as, a)
	}
	m.mu.Unlock()
	for _, a := range as {
		a.mu.Lock()
		hit := a.sandbox == id
		a.mu.Unlock()
		if hit {
			return a
		}
	}
	return nil
}
