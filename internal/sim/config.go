package sim

import (
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/admission"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Config describes one simulated run.
type Config struct {
	Workflows []trajectory.Workflow
	Policy    Spec
	Budget    int64 // the workload domain's memory limit, bytes

	Retries int // retries after the first attempt (replay's default is 5)

	// Lifecycle costs. Defaults (DefaultCreate etc.) are the measured ones.
	Create, Teardown, Rematerialize time.Duration
	// SandboxBase is the memory of an idle, freshly created sandbox, bytes.
	SandboxBase int64

	// TimeScale is the workflows' time compression (0 means 1), as a live
	// replay's: the gate runs on the compressed clock (policy.ScaledGate).
	// Workflows must already be compressed (replay.Scale).
	TimeScale float64
	// Gate's zero fields take the live policy's defaults
	// (policy.GateConfigFor: Table 5, with S = min(256 MiB, Budget/8)).
	Gate      gate.Config
	Admission admission.Config // zero fields: defaults scaled to Budget
	// Margin is admission's physical safety margin; 0 means the live
	// policy's default for Budget and Gate (policy.AdmissionMargin).
	Margin int64
	// LightMargin is policy.Config.LightMargin: how much of Margin light
	// actions may use (0: all, negative: none).
	LightMargin int64
	// Hold is how long sandboxes may wait at the budget under the domain's
	// OOM hold (hold.go) with no action running before the gate releases it
	// to the OOM killer (at most HoldMaxWait in all), as
	// the hold= parameter: 0 means the gate's DMax, < 0 turns the hold
	// off. Only policies with the gate hold; without it the domain
	// OOM-kills at once.
	Hold time.Duration
	// HoldMaxWait bounds a hold while other sandboxes progress, as the
	// hold-max= parameter (0: policy.HoldMaxWaitFor of the hold's timeout
	// and ActionTimeout).
	HoldMaxWait time.Duration
	// NoHeldBudget turns policy.Config.HeldBudget off (held-budget=off),
	// which the live tenon policies turn on.
	NoHeldBudget bool
	// NoTaskReserve turns policy.Config.NoTaskReserve on (task-reserve=off).
	NoTaskReserve bool
	// NoRollback turns policy.Config.NoRollback on (rollback=off).
	NoRollback bool
	// V2 models a pure cgroup v2 domain (hold.go): no oom_kill_disable, so
	// the OOM hold is the freezing hold at HoldLine, as the live policy
	// runs it on v2 (policy.Machine.SetHoldFreeze).
	V2 bool
	// HoldLine is the v2 hold's line, the domain's memory.high under the
	// hold (cgroup.HoldHigh of Budget; the caller computes it). Required,
	// below Budget, with V2.
	HoldLine int64
	// AgentReserve is the headroom a new agent must leave free beyond its
	// first action's predicted peak (agent pacing); 0 means the live
	// policy's: the largest recorded action peak of Workflows, at most
	// Budget/4. Negative means none.
	AgentReserve int64
	// Residency decides teardowns and page-outs; nil means
	// PressureResidency with defaults and the page-out tier on unless
	// Swap.Off.
	Residency Residency
	// Swap is the host's compressed swap for the page-out tier.
	Swap Swap
	// LifecycleSlots bounds concurrent teardowns and rematerializations
	// of the residency policy (0: 8).
	LifecycleSlots int

	// Predictors are the cross-fitted predictors; nil means build them from
	// Workflows (see NewPredictors). Only used when Policy.Admission is on.
	Predictors *Predictors

	// ActionTimeout fails an attempt whose action has not completed this
	// long after it started, frozen time included (0: none). `tenon sim`
	// gives it the live replay's default (replay.DefaultActionTimeout at
	// time scale 1, through internal/app), so both hosts time out alike.
	ActionTimeout time.Duration
	// Horizon stops a run that has not finished by this simulated time; its
	// unfinished workflows are failed and counted in Result.Stalled. 0 means
	// max(24 h, 20 × the makespan lower bound).
	Horizon time.Duration

	// RecordEvery is the interval of the memory time series in Result (0: 1 s).
	RecordEvery time.Duration
	// Observe, when set, is called after every processed event with the
	// host's accounting (tests use it to check conservation).
	Observe func(Accounting)
	// Debug, when set, receives a line per lifecycle event (agent start,
	// action queued, started and done, reclaim, gate, hold, OOM kill,
	// completion) for tracing a run.
	Debug func(string)
	// Trace, when set, receives every call the decision core handles
	// (policy.Machine.SetTrace).
	Trace func(policy.Call)
}

// Measured lifecycle costs on this project's hosts.
const (
	DefaultCreate        = 100 * time.Millisecond
	DefaultTeardown      = 300 * time.Millisecond
	DefaultRematerialize = 300 * time.Millisecond
	DefaultRetries       = 5
)

func (c Config) withDefaults() (Config, error) {
	if len(c.Workflows) == 0 {
		return c, fmt.Errorf("%w: no workflows", ErrBadConfig)
	}
	if c.Budget <= 0 {
		return c, fmt.Errorf("%w: budget %d must be > 0", ErrBadConfig, c.Budget)
	}
	if c.Retries < 0 || c.Create < 0 || c.Teardown < 0 || c.Rematerialize < 0 || c.SandboxBase < 0 {
		return c, fmt.Errorf("%w: retries, lifecycle costs and sandbox base must be >= 0", ErrBadConfig)
	}
	if c.Policy.Name == "" {
		c.Policy = Spec{Name: "eager"}
	}
	if c.V2 && (c.HoldLine <= 0 || c.HoldLine >= c.Budget) {
		return c, fmt.Errorf("%w: cgroup v2: hold line %d must be in (0, budget %d)", ErrBadConfig, c.HoldLine, c.Budget)
	}
	c.Gate = policy.ScaledGate(policy.GateConfigFor(c.Gate, c.Budget), c.TimeScale)
	if err := c.Gate.Validate(); err != nil {
		return c, fmt.Errorf("gate config: %w", err)
	}
	if c.Admission.Budget == 0 {
		c.Admission.Budget = c.Budget
	}
	c.Margin = policy.AdmissionMargin(c.Margin, c.Budget, c.Gate)
	switch {
	case c.AgentReserve == 0:
		c.AgentReserve = agentReserve(c.Workflows, c.Budget)
	case c.AgentReserve < 0:
		c.AgentReserve = 0
	}
	c.Swap = c.Swap.withDefaults()
	if c.Residency == nil {
		c.Residency = PressureResidency{PageOut: !c.Swap.Off, Stall: 10 * c.Gate.Period}
	}
	if c.LifecycleSlots <= 0 {
		c.LifecycleSlots = 8
	}
	if c.Horizon <= 0 {
		c.Horizon = max(24*time.Hour, 20*secs(trajectory.LowerBoundWith(c.Workflows, c.Budget, c.bound())))
	}
	if c.RecordEvery <= 0 {
		c.RecordEvery = time.Second
	}
	return c, nil
}

// bound is what the makespan lower bound knows of the simulated host.
func (c Config) bound() trajectory.BoundOptions {
	o := trajectory.BoundOptions{SandboxBase: c.SandboxBase, CreateS: c.Create.Seconds(), PinnedIdle: 1}
	if !c.Swap.Off {
		o.PinnedIdle = c.Swap.withDefaults().Ratio
	}
	return o
}

// agentReserve is the live policy's agent reserve (policy.AgentReserve)
// over wfs with Recorded values derived from Mem profiles where missing
// (see withRecorded), as the predictors are trained.
func agentReserve(wfs []trajectory.Workflow, budget int64) int64 {
	return policy.AgentReserve(recordedWorkflows(wfs), budget)
}
