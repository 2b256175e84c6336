// Package sim runs tenon's decision code against a simulated host, for scale
// and for fast parameter sweeps: a discrete-event model of a workload domain
// driven by one goroutine and a simulated clock (an event heap; no goroutine
// sleeps and no wall time).
//
// # Host model
//
// Each sandbox's memory is its retained floor plus the curve of the action
// running in it. A Mem profile ramps linearly to peak_mib over ramp_s, holds
// it for hold_s, drops to retain_mib for retain_s, and exits; at exit the
// action's RetainedMiB (files_mib, plus retain_mib when a background process
// holds it) joins the sandbox's floor until the sandbox is destroyed. A Run
// action with only Recorded values ramps to its recorded peak over half its
// duration and holds it for the other half. Model waits take their recorded
// time. A frozen sandbox makes no progress and allocates nothing: its
// remaining action time is extended by the time it stays frozen.
//
// Memory is accounted in whole bytes. Between events it grows linearly, so
// the instant at which the domain's usage would exceed the budget is computed
// exactly and, without the OOM hold (below), the OOM killer runs then (to
// the nanosecond, up to rounding of the byte count): it kills the sandbox with the largest memory (the kernel's
// badness is rss; oom_score_adj is ignored), repeatedly until usage fits.
// The killed sandbox's attempt fails and the workflow is retried from its
// first action with a fresh sandbox, up to Config.Retries retries after the
// first attempt; after that it is failed.
//
// # OOM hold
//
// Policies with the gate arm the domain's OOM hold, as the live gate does
// (Config.Hold, the hold= parameter; hold.go). The simulator models v1's
// hold (memory.oom_control, oom_kill_disable=1), an exact wait at the
// budget, and with Config.V2 the freezing hold of a pure cgroup v2 domain
// (v2.go: waits just above memory.high, an eighth below the budget; a
// release lets the waiters grow on to the budget). While it is armed, usage stops at the budget instead
// of the kill: every growing action waits there (its curve does not
// advance, it uses no CPU), a sandbox being created waits until its base
// memory fits, and an action whose exit would leave more files than it held
// waits at its end; the domain is under OOM while anything waits. Memory
// freed by anyone (a retain drop, an exit, a teardown) lets the waiters go
// on, in the order they began waiting (growers once 1 MiB is free). A
// waiter the gate freezes stays waiting; once memory is free it is only
// frozen. Every gate period the decision core steps the OOM hold
// (policy.OOMHold) with the simulated clock, the under-OOM flag and the
// sandboxes' CPU times and blocked threads (a waiter not frozen has one,
// as a live task in the OOM wait sleeps in state D; hold_rest.go in
// internal/policy): when no sandbox made progress for its timeout (the
// gate's DMax by default), or after policy.HoldMaxWaitFor (a hundred times
// the timeout, or the action timeout when longer) however busy the others
// are, it is released,
// the OOM killer kills the largest sandbox as above, and it is re-armed at
// a later period once no one waits. The simulator restarts a preempted
// attempt without charging a retry, as the replay does, so a wait with
// nothing progressing preempts the youngest running attempt instead of
// releasing (policy's hold_preempt.go): its sandbox goes, the attempt
// restarts, the others keep waiting. Result counts the holds, those
// resolved without a kill, those released, and the preemptions.
//
// A paged-out sandbox that the gate thaws faults its memory back at once;
// at the limit the kernel makes room by swapping the domain's coldest
// pages, which the simulator takes to be those of the other sandboxes that
// run nothing (idle or frozen), the largest first (sample.go: swapColdFor).
// With swap off, or when even that leaves too little, it stays frozen and
// counts as a blocked task until its memory fits.
//
// Lifecycle operations take fixed, measured costs (Config.Create,
// Config.Teardown, Config.Rematerialize): a sandbox's memory appears when
// creation or rematerialization ends and is freed when a teardown ends.
//
// # Decision code
//
// Every policy is the live decision core, policy.Machine, built as the
// live registry builds it (policy.ParseSpec and policy.Configure; the
// simulator's own settings on top, MachineConfig) and driven exactly as
// the live adapter (internal/live) drives it: Submit when an attempt
// arrives or is retried, AgentEnd when it completes or fails, ActionReady
// when an action's wait ends and its sandbox is live, ActionDone when it
// exits or is OOM-killed (with its measured peak, so a retry reserves what
// it needed), Schedule after an action became ready or ended and every
// control period, at most once per 10 ms of simulated time, Pace when
// something happened that may let a queued attempt start, and Sample every
// gate period (100 ms) with the domain's available memory, each live
// sandbox's footprint and CPU time (which increases while an action runs
// unfrozen) and the under-OOM flag. The simulator freezes and thaws what
// the gate decided and acts on the OOM hold as the kernel would. The
// machine's Observer is the simulated host itself (the domain's projected
// available memory and a sandbox's memory now). Predictors are cross-fitted
// by task (a model trained on one half of the tasks predicts the other
// half, and vice versa; the copies of a replicated task, trajectory.TaskOf,
// stay in one half). Config.Trace receives every call into the
// machine; internal/live's TestLiveMatchesSim replays such a trace through
// the live adapter and finds the same calls and decisions.
//
// agentcgroup's Low actions run under a memory.high limit: an action that
// needs more than the limit leaves its sandbox at the limit and goes on at
// 2 % of its speed (the live v1 emulation's CPU quota) until it needs less
// (profile.go, underLimit). Result.Throttled counts them.
//
// The residency decision sits behind the small Residency interface;
// PressureResidency delegates to the decision core's residency rules
// (policy.DecideReclaim, policy.MayRematerialize; seed 000 §3.4, Table 1)
// with the machine's pressure; idle sandboxes are reclaimed at
// policy.ReclaimPressure (yellow while actions wait for admission
// reclaims as red, with the page-out tier on). An idle sandbox's predicted
// wait is its agent's learned one (policy.WaitModel over the waits it was
// seen in), as the daemon and the live replay predict it.
//
// LivePredictors trains the predictors exactly as the live registry
// (policy.TrainPredictor); NewPredictors samples at most 200 workflows per
// fold, for thousands of workflows.
//
// A run that cannot finish (for instance a red gate whose frozen sandboxes
// all project more growth than the headroom) stops at Config.Horizon and
// reports its unfinished workflows as Stalled; Config.ActionTimeout models a
// sandbox timeout that fails such attempts instead.
//
// Policy names are the live registry's (policy.Names): eager, static-N,
// agent-reservation, agentcgroup, gate, admission, tenon, and tenon's
// ablations.
//
// # Cluster
//
// RunCluster (cluster.go) runs several such hosts, each its own event heap
// and decision core exactly as Run builds them (newNode), behind a
// scheduler that places every arriving agent on one node: by the agent
// slots the nodes publish every ClusterConfig.Refresh
// (policy.Machine.AgentSlots, what a node agent publishes as
// tenon.dev/agent-slots), or by static memory requests against each
// node's budget, least requested first, Kubernetes' default. Agents that
// fit no node wait at the cluster. The hosts' events, the arrivals and the
// publications are processed in one time order, so a placement sees every
// node as it is at that instant (and the published slots as they were at
// the last publication).
//
// The package touches no kernel interface, reads no files and imports no
// backend or driver (internal/policy's deps_test.go checks).
package sim
