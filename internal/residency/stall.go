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
