package controller

import (
	"context"
	"errors"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Policy decides when agents and actions may run. Every method must be safe
// for concurrent use: the driver calls them from one goroutine per agent.
type Policy interface {
	// Name identifies the policy in reports, e.g. "eager" or "static-4".
	Name() string
	// Start is called once before any agent; it may launch background loops
	// (such as the 100 ms execution gate) that stop when Stop is called.
	Start(ctx context.Context, env Env) error
	// Stop ends background loops and undoes every actuation (thaws what it
	// froze, lifts quotas). It is called once, after the last agent.
	Stop(ctx context.Context) error

	// AgentReady blocks until the agent may start an attempt, or ctx is done.
	AgentReady(ctx context.Context, a *Agent) error
	// AgentDone ends the attempt AgentReady allowed. err is nil when the
	// attempt completed every action, else why it failed (see Outcome.Failure).
	AgentDone(a *Agent, err error)

	// ActionReady blocks until the action a.Action() may be dispatched, or
	// ctx is done. The Grant it returns is handed back to ActionDone.
	ActionReady(ctx context.Context, a *Agent, act *trajectory.Action) (Grant, error)
	// ActionDone releases the grant's charge; the driver calls it exactly
	// once for every successful ActionReady, also when Exec failed.
	ActionDone(a *Agent, g Grant, o Outcome)

	// SandboxUp and SandboxDown report a sandbox becoming live or gone.
	SandboxUp(a *Agent, info sandbox.Info)
	SandboxDown(a *Agent, id string)
}

// SandboxManagerProvider is implemented by a policy that manages residency
// itself (teardown during model waits, rematerialization). The driver calls
// it once after Start and uses the returned manager instead of the default.
type SandboxManagerProvider interface {
	SandboxManager(h SandboxHost) Sandboxes
}

// Preempter is a Policy that may kill a running action to end a deadlock
// at the budget (the OOM hold's preemption). Step runs each action under
// the context Preemptible returns and calls done once the action ended;
// the policy preempts it by cancelling that context with ErrPreempted
// as its cause, and the action fails with ErrPreempted; or, where the
// driver reruns it (Env.RerunsRolledBack), rolls it back with
// ErrRolledBack.
type Preempter interface {
	Preemptible(ctx context.Context, a *Agent) (actx context.Context, done func())
}

// AttemptPreempter is a Preempter that may also end an attempt that runs
// no action (the OOM hold's idle preemption: its agent waits for the
// model or for admission while its sandbox's memory fills the budget).
// Where Env.PreemptsIdle, the driver runs each attempt (its model waits
// and Step.Run) under the context PreemptibleAttempt returns and calls
// done when the attempt ended; the policy preempts the attempt by
// cancelling that context with ErrPreempted as its cause; the driver then
// releases the attempt's sandbox and restarts it as for ErrPreempted.
type AttemptPreempter interface {
	PreemptibleAttempt(ctx context.Context, a *Agent) (actx context.Context, done func())
}

// Grant is what ActionReady allowed.
type Grant struct {
	ID     uint64 // policy-assigned, unique among outstanding grants; 0 when unused
	Charge int64  // bytes charged against the budget until ActionDone; 0 when none
	Heavy  bool   // the policy classified the action as heavy
	Peak   int64  // the action's predicted peak growth, bytes; 0 when none
	// Token carries policy-private data from ActionReady to ActionDone.
	Token any
}

// Outcome is what an executed action did, measured.
type Outcome struct {
	Index     int    // action index in the workflow
	Class     string // action class
	Sandbox   string // sandbox the action ran in
	AvgBytes  int64  // time-average sandbox memory during the action
	PeakBytes int64  // peak sandbox memory during the action
	Duration  time.Duration
	Queued    time.Duration // time spent in ActionReady
	Exit      int           // exit code, -1 when killed by a signal
	OOM       bool          // a task of the sandbox was OOM-killed
	TimedOut  bool          // the action exceeded its timeout
	// Err is set when the action could not be run at all (sandbox gone,
	// backend failure); the sandbox is then presumed lost.
	Err error
	// Preempted is set when the policy killed the action (Preempter).
	Preempted bool
	// RolledBack is set when the policy killed the action to have it run
	// again (Preempter, Env.RerunsRolledBack).
	RolledBack bool
}

// Failure returns why the outcome ends the attempt (ErrPreempted, ErrOOM, ErrTimeout or
// ErrSandboxLost wrapping Err), or why the action must run again
// (ErrRolledBack), or nil when the attempt may continue. A
// non-zero exit alone does not end an attempt: agents see failing commands
// all the time.
func (o Outcome) Failure() error {
	switch {
	case o.RolledBack:
		return ErrRolledBack
	case o.Preempted:
		return ErrPreempted
	case o.OOM:
		return ErrOOM
	case o.TimedOut:
		return ErrTimeout
	case o.Err != nil:
		return errors.Join(ErrSandboxLost, o.Err)
	}
	return nil
}
