package residency

import "time"

// WaitBegin tells the manager that the idle agent's model wait began now
// and is predicted to last predicted (0: unknown): the wait the residency
// decision weighs restarts here, as a replay's does at the boundary, and
// unless Config.ManualReclaim the tick loop runs the policy at once (keep,
// page out or tear down by pressure and the remaining wait), off the
// caller's path. It reports whether the
// agent was idle and resident; a busy, absent or unknown agent is left
// alone. Call Prefetch when the wait ends.
func (m *Manager) WaitBegin(agentID string, predicted time.Duration) bool {
	a, err := m.lookup(agentID)
	if err != nil {
		return false
	}
	a.mu.Lock()
	ok := a.state == stateResident && !a.busy && a.haveVerdict
	if ok {
		a.idleSince, a.wait = m.cfg.Clock.Now(), predicted
	}
	a.mu.Unlock()
	if ok && !m.cfg.ManualReclaim {
		m.kicks.kick()
	}
	return ok
}

// PagedOut reports whether the agent's sandbox is resident but frozen
// with its memory paged out.
func (m *Manager) PagedOut(agentID string) bool {
	a, err := m.lookup(agentID)
	if err != nil {
		return false
	}
	if !a.mu.TryLock() {
		return false // a lifecycle operation runs: report it as it was
	}
	defer a.mu.Unlock()
	return a.state == stateResident && a.pagedOut
}
