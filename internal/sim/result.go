package sim

import "time"

// Result is what a simulated run did. Times are simulated offsets from the
// start, except the Wall fields.
type Result struct {
	Policy    string
	Budget    int64
	Horizon   time.Duration // the horizon the run was given
	Makespan  time.Duration // start to the end of the last workflow
	Workflows []WorkflowResult
	Samples   []Sample
	PeakBytes int64

	Attempts       int
	FailedAttempts int
	OOMEvents      int
	Timeouts       int // actions that exceeded Config.ActionTimeout
	Preempted      int // actions the OOM hold preempted, their attempts restarted without charging a retry
	Rollbacks      int // actions the OOM hold rolled back to their boundary (policy.SetHoldRollback)
	Completed      int
	Failed         int
	Actions        int // actions started, every attempt
	Stalled        int // workflows still unfinished at Config.Horizon (counted in Failed)
	// Infeasible counts workflows that cannot fit the budget
	// (trajectory.ErrInfeasible): never started, not counted in Failed.
	Infeasible int

	Teardowns          int   // residency teardowns (not final destroys)
	Rematerializations int   //
	PageOuts           int   // residency page-outs of idle sandboxes
	PagedOutBytes      int64 // summed bytes those page-outs freed
	// IdleMemAvg and IdleMemPeak are the memory of sandboxes that run
	// nothing (agent in a model or admission wait, or frozen), compressed
	// copies included, sampled every RecordEvery: how much of the budget
	// floors take.
	IdleMemAvg, IdleMemPeak int64
	LifecycleTime           time.Duration // summed create, teardown and rematerialization time
	Freezes                 int           // sandboxes frozen by the gate
	Throttled               int           // actions held at a memory.high limit they needed more than (agentcgroup)
	LivenessAdmits          int           // admission Schedule calls raised by the liveness rule

	// The domain's OOM hold (policy.HoldStats; zero when it is off).
	Holds         int           // waits that began (under_oom seen by a gate step)
	HoldsResolved int           // waits that ended with memory freed, no kill
	HoldsReleased int           // waits released to the OOM killer: the timeout with no action running, or 10× it (each kill counts in OOMEvents)
	HoldTime      time.Duration // total time the domain was under OOM, at gate-period resolution
	HoldWaits     int           // sandboxes that began waiting for memory
	HoldFroze     int           // sandboxes the freezing hold froze (Config.V2)

	Events       int           // events processed
	GateSteps    int           // gate.Controller.Step calls
	GateStepWall time.Duration // wall time spent inside Step
	Wall         time.Duration // wall time of the whole run (training excluded)
}

// WorkflowResult is one workflow's fate.
type WorkflowResult struct {
	ID     string
	Submit time.Duration
	// Started is when the first attempt passed the agent-level limit
	// (agent pacing, static-N or reservation) and began, -1 if never.
	Started   time.Duration
	End       time.Duration
	Latency   time.Duration // End − Submit, retries included
	Attempts  int
	Completed bool
	// Infeasible: the workflow cannot fit the budget and was never started.
	Infeasible bool
	OOMs       int
	Preempted  int // attempts the OOM hold preempted
	// Queued is the time its actions waited for admission, every attempt
	// (as the replay's WorkflowResult.Queued: the time in ActionReady).
	Queued time.Duration
}

// Sample is one point of the memory time series.
type Sample struct {
	T        time.Duration
	MemBytes int64
	Running  int // actions executing (frozen ones included)
	Live     int // sandboxes holding memory
}
