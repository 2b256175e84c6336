// Package replay runs recorded trajectories against a sandbox backend under
// a memory policy and a budget, and records what happened.
//
// Run starts one goroutine per workflow. Each waits for its (scaled) arrival
// offset, passes Policy.AgentReady, and then for every action sleeps the
// (scaled) model wait, gets a sandbox from the Sandboxes manager, passes
// Policy.ActionReady, executes the action (Mem profiles through
// `tenon tool mem`, file edits through `tenon tool edit`, Run commands
// through /bin/sh -c), reports the measured outcome to Policy.ActionDone
// and calls the manager's Boundary hook.
//
// A workflow with a Workspace seed (real repositories, internal/realtools)
// gets each attempt's fresh workspace unpacked from its archive before the
// attempt's first sandbox starts (archive.ExtractTar), shown again at the
// seed's Mount (a read-write sandbox.Bind, where actions then run), with
// the workflow's Env and its Binds (read-only) in every sandbox it gets.
//
// An attempt that hits an OOM kill, a sandbox timeout or a sandbox that
// cannot be created or died ends: its sandbox is destroyed and the workflow
// is re-enqueued from its first action with a fresh sandbox and workspace,
// up to Config.MaxRetries retries after the first attempt; after that it is
// failed. An attempt whose action the policy preempted (the OOM hold's
// preemption, controller.ErrPreempted: the driver sets
// Env.RestartsPreempted) is restarted the same way without being charged a
// retry, up to policy.MaxPreempts times per workflow. A non-zero exit status alone is recorded and does not end the
// attempt. Every submitted workflow ends completed or failed.
//
// TimeScale compresses model waits, arrival offsets and Mem profile times
// (ramp, hold, retain); Run commands take the time they take. Policies see
// the scaled workflows (Agent.Workflow), i.e. the schedule actually run.
//
// A sampler records domain memory and concurrency every SampleInterval.
// Every step is written to the JSONL event log (see controller.Event); the
// action_done records are complete enough to train the memory predictor.
//
// The package owns the replay's goroutines, workspaces it creates under
// Config.WorkspaceRoot and the sandboxes it creates; it touches the kernel
// only through the Backend and the Domain.
package replay
