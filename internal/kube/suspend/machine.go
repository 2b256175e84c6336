package suspend

import (
	"sort"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
)

// Config tunes a Machine. Zero values take the documented defaults.
type Config struct {
	// Policy tunes policy.DecideReclaim (its PageOut is ignored: see the
	// package documentation).
	Policy policy.ResidencyConfig
	// SuspendCostPrior and ResumeCostPrior seed the cost estimates the
	// policy weighs (a suspend, a resume until the Sandbox is Ready again)
	// before the first measurement; defaults 1 s and 10 s (a pod's start).
	SuspendCostPrior, ResumeCostPrior time.Duration
	// CostAlpha is the weight of a new measurement in the estimates'
	// moving averages; default 0.3.
	CostAlpha float64
}

// Idle is what the node agent knows of an agent that waits for its model.
type Idle struct {
	// WorkingSet is the agent pod's memory at the boundary, bytes.
	WorkingSet int64
	// Restartable is the restart-safe verdict of the boundary
	// (residency.Check) and the Sandbox's consent to lose its pod.
	Restartable bool
	// PredictedWait is the predicted model wait; 0 if unknown.
	PredictedWait time.Duration
}

// Action is what to do to a Sandbox.
type Action string

// Actions.
const (
	// Suspend sets the Sandbox's operatingMode to Suspended.
	Suspend Action = "suspend"
	// Resume sets it back to Running.
	Resume Action = "resume"
)

// Decision says to apply Action to the agent's Sandbox; report the
// outcome with Applied.
type Decision struct {
	ID     string
	Action Action
	Frees  int64 // a suspend's expected bytes freed
	Reason string
}

type mode int

const (
	running mode = iota
	suspending
	suspended
	resuming // patched to Running, not Ready yet
)

type agent struct {
	mode       mode
	idle       bool
	idleSince  time.Time
	info       Idle
	wantResume bool      // the agent is needed; resume once possible
	sent       time.Time // when the pending action was decided
}

// Machine tracks the node's agents and decides their Sandboxes' mode.
type Machine struct {
	cfg           Config
	agents        map[string]*agent
	suspendCost   time.Duration
	resumeCost    time.Duration
	resumeMeasure map[string]time.Time // resume decided, Ready not seen yet
}

// New returns a Machine with no agents.
func New(cfg Config) *Machine {
	if cfg.SuspendCostPrior <= 0 {
		cfg.SuspendCostPrior = time.Second
	}
	if cfg.ResumeCostPrior <= 0 {
		cfg.ResumeCostPrior = 10 * time.Second
	}
	if cfg.CostAlpha <= 0 || cfg.CostAlpha > 1 {
		cfg.CostAlpha = 0.3
	}
	cfg.Policy.PageOut = false
	return &Machine{
		cfg: cfg, agents: map[string]*agent{},
		suspendCost: cfg.SuspendCostPrior, resumeCost: cfg.ResumeCostPrior,
		resumeMeasure: map[string]time.Time{},
	}
}

// Track adds an agent whose Sandbox runs (busy until Idle says otherwise);
// isSuspended says its Sandbox is already Suspended. Tracking a known agent
// changes nothing.
func (m *Machine) Track(id string, isSuspended bool) {
	if _, ok := m.agents[id]; ok {
		return
	}
	a := &agent{}
	if isSuspended {
		a.mode = suspended
	}
	m.agents[id] = a
}

// Forget drops an agent (its Sandbox was deleted or left the node).
func (m *Machine) Forget(id string) {
	delete(m.agents, id)
	delete(m.resumeMeasure, id)
}

// Idle records that the agent finished an action and waits for its model.
// An agent that ran an action runs: a resume is complete even if its
// Sandbox's Ready was not seen.
func (m *Machine) Idle(id string, now time.Time, info Idle) {
	a, ok := m.agents[id]
	if !ok || a.mode == suspending || a.mode == suspended {
		return
	}
	a.mode, a.idle, a.idleSince, a.info = running, true, now, info
}

// Needed records that the agent is needed (a resume request through
// tenon's API, its next action, or its Sandbox being claimed): it is busy,
// and a suspended Sandbox is resumed at the next Tick that may.
func (m *Machine) Needed(id string) {
	a, ok := m.agents[id]
	if !ok {
		return
	}
	a.idle = false
	if a.mode == suspending || a.mode == suspended {
		a.wantResume = true
	}
}

// Applied reports the outcome of a decision's patch at now.
func (m *Machine) Applied(id string, act Action, now time.Time, err error) {
	a, ok := m.agents[id]
	if !ok {
		return
	}
	switch {
	case act == Suspend && err == nil:
		a.mode = suspended
		m.suspendCost = m.ewma(m.suspendCost, now.Sub(a.sent))
	case act == Suspend:
		a.mode = running // kept; the policy may choose it again
	case err == nil:
		m.resumeMeasure[id] = a.sent
	default:
		a.mode, a.wantResume = suspended, true // retried at the next Tick
	}
}

// Ready reports that the agent's Sandbox is Ready again (its pod runs):
// the resume is complete and its duration measured.
func (m *Machine) Ready(id string, now time.Time) {
	if a, ok := m.agents[id]; ok && a.mode == resuming {
		a.mode = running
	}
	if sent, ok := m.resumeMeasure[id]; ok {
		m.resumeCost = m.ewma(m.resumeCost, now.Sub(sent))
		delete(m.resumeMeasure, id)
	}
}

// Suspended reports whether the agent's Sandbox is suspended or being
// suspended (a resume not yet decided): its pod going is tenon's doing.
func (m *Machine) Suspended(id string) bool {
	a, ok := m.agents[id]
	return ok && (a.mode == suspending || a.mode == suspended)
}

// Costs returns the current suspend and resume cost estimates.
func (m *Machine) Costs() (suspend, resume time.Duration) { return m.suspendCost, m.resumeCost }

func (m *Machine) ewma(old, sample time.Duration) time.Duration {
	if sample < 0 {
		return old
	}
	return time.Duration(m.cfg.CostAlpha*float64(sample) + (1-m.cfg.CostAlpha)*float64(old))
}

// Tick decides at now under pressure p: resumes first (agents needed again,
// if policy.MayRematerialize allows a demand-driven one), then the
// suspends policy.DecideReclaim chooses among the idle running agents, in
// its order.
func (m *Machine) Tick(now time.Time, p gate.Pressure) []Decision {
	var out []Decision
	ids := make([]string, 0, len(m.agents))
	for id := range m.agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var idle []policy.IdleSandbox
	for _, id := range ids {
		a := m.agents[id]
		switch {
		case a.mode == suspended && a.wantResume && policy.MayRematerialize(p, false):
			a.mode, a.wantResume, a.sent = resuming, false, now
			out = append(out, Decision{ID: id, Action: Resume, Reason: "needed, " + p.String() + " pressure"})
		case a.mode == running && a.idle:
			idle = append(idle, policy.IdleSandbox{
				ID: id, WorkingSet: a.info.WorkingSet, Restartable: a.info.Restartable,
				IdleSince: a.idleSince, PredictedWait: a.info.PredictedWait,
				TeardownCost: m.suspendCost, RematCost: m.resumeCost,
			})
		}
	}
	// The node's free share and need are not passed here (-1: unknown),
	// so green decides by amortization alone, never by the plentiful
	// rule, and red suspends every idle agent.
	for _, d := range policy.DecideReclaim(now, p, -1, -1, idle, m.cfg.Policy) {
		if d.Kind != policy.ReclaimTeardown {
			continue
		}
		a := m.agents[d.ID]
		a.mode, a.sent = suspending, now
		out = append(out, Decision{ID: d.ID, Action: Suspend, Frees: d.Frees, Reason: d.Reason})
	}
	return out
}
