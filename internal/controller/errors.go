package controller

import "errors"

// Attempt failure reasons, returned by Outcome.Failure and passed to
// Policy.AgentDone. A failed attempt is retried with a fresh sandbox.
var (
	// ErrOOM means a task of the agent's sandbox was killed by the OOM killer.
	ErrOOM = errors.New("controller: action OOM-killed")
	// ErrTimeout means an action exceeded its timeout and was killed.
	ErrTimeout = errors.New("controller: action timed out")
	// ErrSandboxLost means the sandbox could not be created or died.
	ErrSandboxLost = errors.New("controller: sandbox lost")
	// ErrPreempted means the policy killed the action to end a deadlock at
	// the budget (the OOM hold's preemption): the attempt is restarted
	// without counting as one of the workflow's retries.
	ErrPreempted = errors.New("controller: action preempted by the OOM hold")
	// ErrRolledBack means the policy killed the action because it grew far
	// past what admission reserved for it and waits at the budget (the OOM
	// hold's rollback): the driver runs the action again in the same
	// sandbox, and the attempt goes on.
	ErrRolledBack = errors.New("controller: action rolled back by the OOM hold")
)
