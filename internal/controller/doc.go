// Package controller holds the runtime types shared by the replay driver,
// the serving API and every memory policy: the logical Agent, the Policy
// interface with its boundary hooks, the Env a policy is started with, the
// Sandboxes manager that decides where an agent's sandbox lives, and the
// Event records every component emits.
//
// The call sequence a driver follows for one attempt of one agent is:
//
//	policy.AgentReady(ctx, a)              // blocks: Static-N, agent-level reservation
//	for each action:
//	    wait the model time
//	    step.Run(ctx, a, x):                   // Step, one for both hosts
//	        id := sandboxes.Ensure(ctx, a)     // create or rematerialize; SandboxUp on create
//	        g  := policy.ActionReady(ctx, a, act) // blocks: admission
//	        out := backend.Exec(id, ...)
//	        policy.ActionDone(a, g, out)       // exactly once per granted action
//	        sandboxes.Boundary(ctx, a, out)    // unless out failed; residency may tear down during the next wait
//	sandboxes.Release(ctx, a)              // destroy; SandboxDown
//	policy.AgentDone(a, err)
//
// The replay driver runs this loop once per attempt. The daemon runs
// step.Run once per request of a long-lived agent and releases the sandbox
// after a failed action, so that the next one gets a fresh sandbox. What
// differs between the two (how the queue wait is bounded, retries of a
// failed sandbox start, their gauges) is in Step and StepAction.
//
// Policies receive observations (Env.Domain, Env.Live, Env.Backend) and
// make decisions; they emit what they do (pause, resume, deny) through
// Env.Emit. A policy that also manages residency implements
// SandboxManagerProvider and the driver uses its manager instead of the
// default resident one.
//
// The package owns no kernel state: it must not read /sys or /proc. It
// imports sandbox, trajectory and units only for their types and constants.
package controller
