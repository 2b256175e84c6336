package controller

import (
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Agent is one logical agent: a workflow's identity and progress. It
// outlives the sandboxes it runs in. The driver goroutine that owns the
// agent mutates it; policies and managers may read it during the calls
// they receive and must not keep the pointer's fields as a stable snapshot.
type Agent struct {
	ID       string               // the workflow id
	Workflow *trajectory.Workflow // the trajectory being replayed or served
	// Next is the index of the next action to run (the one being run while
	// inside ActionReady/ActionDone).
	Next int
	// Attempt counts attempts from 1; a retry starts a new attempt at action 0.
	Attempt int
	// SandboxID is the agent's current sandbox, "" when absent.
	SandboxID string
	// Submitted is when the workflow was submitted; Started when the
	// current attempt passed AgentReady.
	Submitted, Started time.Time
	// Workspace is the host directory holding the agent's durable state for
	// the current attempt ("" when the backend picks one).
	Workspace string
	// NextWait is the predicted model wait after the current action when
	// the workflow does not record it (the daemon learns it per agent);
	// 0: unknown.
	NextWait time.Duration

	// boundary is closed when the boundary Step.Run left running in the
	// background (Step.AsyncBoundary) is done; nil when none runs.
	boundary chan struct{}
}

// Action returns the action at index Next, or nil past the end.
func (a *Agent) Action() *trajectory.Action {
	if a.Workflow == nil || a.Next < 0 || a.Next >= len(a.Workflow.Actions) {
		return nil
	}
	return &a.Workflow.Actions[a.Next]
}
