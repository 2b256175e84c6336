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
//	    id := sandboxes.Ensure(ctx, a)     // create or rematerialize; SandboxUp on create
//	    g  := policy.ActionReady(ctx, a, act) // blocks: admission
//	    out := backend.Exec(id, ...)
//	    policy.ActionDone(a, g, out)       // exactly once per granted action
//	    sandboxes.Boundary(ctx, a, out)    // residency may tear down during the next wait
//	sandboxes.Release(ctx, a)              // destroy; SandboxDown
//	policy.AgentDone(a, err)
//
// Policies receive observations (Env.Domain, Env.Live, Env.Backend) and
// make decisions; they emit what they do (pause, resume, deny) through
// Env.Emit. A policy that also manages residency implements
// SandboxManagerProvider and the driver uses its manager instead of the
// default resident one.
//
// The package owns no kernel state: it must not read /sys or /proc. It
// imports sandbox and trajectory only for their types.
package controller
