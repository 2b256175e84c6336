package api

import (
	"context"
	"net/http"
)

// Pressure levels as reported by Status.
const (
	PressureGreen  = "green"
	PressureYellow = "yellow"
	PressureRed    = "red"
)

// pressureOf classifies the domain's available memory: red under 5 % of
// the budget, yellow under 20 %, else green. It is the observation the
// status page shows; the gate policy computes its own Q(t).
func pressureOf(budget, available int64) string {
	switch {
	case budget <= 0:
		return PressureGreen
	case available*20 < budget:
		return PressureRed
	case available*5 < budget:
		return PressureYellow
	}
	return PressureGreen
}

// slotCounter is a policy that counts how many more agents the host can
// take (live.Policy.AgentSlots).
type slotCounter interface {
	AgentSlots(ctx context.Context) (int, bool)
}

// Status snapshots the domain and the agents.
func (s *Server) Status(ctx context.Context) Status {
	st := Status{
		Policy: s.cfg.Policy.Name(), BudgetBytes: s.cfg.Budget, ChargeBytes: s.charge.Load(),
		QueuedAgents: int(s.queuedAgents.Load()), QueuedActions: int(s.queuedActions.Load()),
		Running: int(s.running.Load()), DaemonMemory: daemonMemory(), BodyMemory: s.bodies.inUse(), Agents: []AgentStatus{},
	}
	st.AvailableBytes = st.BudgetBytes
	if d := s.cfg.Domain; d != nil {
		if u, err := d.Usage(); err == nil {
			st.UsageBytes = u
		}
		if a, err := d.Available(); err == nil {
			st.AvailableBytes = a
		}
	}
	if st.BudgetBytes > 0 {
		st.WaterLevel = float64(st.UsageBytes) / float64(st.BudgetBytes)
	}
	st.Pressure = pressureOf(st.BudgetBytes, st.AvailableBytes)
	if sc, ok := s.cfg.Policy.(slotCounter); ok {
		if n, ok := sc.AgentSlots(ctx); ok {
			st.AgentSlots = &n
		}
	}
	for _, ag := range s.sortedAgents() {
		d := s.describe(ctx, ag)
		switch d.Residency {
		case ResidencyAbsent:
			st.Absent++
		case ResidencyPagedOut:
			st.PagedOut++
			st.Resident++
		default:
			st.Resident++
		}
		st.Agents = append(st.Agents, AgentStatus{ID: d.ID, State: d.State, Sandbox: d.Sandbox, Residency: d.Residency,
			MemBytes: d.MemBytes, Queued: d.Queued, Actions: d.Actions})
	}
	return st
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Status(r.Context()))
}
