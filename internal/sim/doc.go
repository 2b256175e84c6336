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
// Policies with the gate arm the domain's OOM hold, as the live gate does on
// cgroup v1 (memory.oom_control, oom_kill_disable=1; Config.Hold, the hold=
// parameter; hold.go). While it is armed, usage stops at the budget instead
// of the kill: every growing action waits there (its curve does not
// advance, it uses no CPU), a sandbox being created waits until its base
// memory fits, and an action whose exit would leave more files than it held
// waits at its end; the domain is under OOM while anything waits. Memory
// freed by anyone (a retain drop, an exit, a teardown) lets the waiters go
// on, in the order they began waiting (growers once 1 MiB is free). A
// waiter the gate freezes stays waiting; once memory is free it is only
// frozen. Every gate period the live policy.OOMHold is stepped with the
// simulated clock, the under-OOM flag and whether any action runs: when no
// action ran for its timeout (the gate's DMax by default), or after ten
// times the timeout, it is released, the OOM killer kills
// the largest sandbox as above, and it is re-armed at a later period once
// no one waits. Result counts the holds, those resolved without a kill and
// those released.
//
// Lifecycle operations take fixed, measured costs (Config.Create,
// Config.Teardown, Config.Rematerialize): a sandbox's memory appears when
// creation or rematerialization ends and is freed when a teardown ends.
//
// # Decision code
//
// The policies reuse the pure decision packages unchanged with the simulated
// clock: gate.Controller.Step every gate period (100 ms) with observations
// from the model (footprint; CPU time that increases while an action runs
// unfrozen), admission.Admitter (Enqueue at action-ready; Schedule, as the
// live policy, after an enqueue or a release and every control period, at
// most once per 10 ms of simulated time; Release at completion) with
// descriptors from internal/predict, cross-fitted by task (a model trained
// on one half of the workflows predicts the other half, and vice versa).
// The residency decision sits behind the small Residency interface;
// PressureResidency delegates to internal/residency's pure Decide and
// MayRematerialize (seed 000 §3.4, Table 1).
//
// # The live policy's extensions
//
// The tenon policies compose these packages as internal/policy does
// (tenon.go, admitctl.go, gatectl.go). The live admitter's decision steps
// beyond seed 000 are pure functions in internal/policy (admitstep.go),
// called here with the simulated host's observations and clock, not copied
// (pacing.go feeds them):
//   - policy.PhysicalHeadroom: admission's physical check counts admitted
//     actions' predicted peaks (or charges, if larger) less their growth so
//     far, with the margin policy.AdmissionMargin (one red region of the
//     gate, at least S: 12.5 % of the budget with Table 5's regions);
//   - policy.AgentMayStart: a new attempt starts when none runs, or when no
//     action waits for admission, the gate (if on) is green and the first
//     action's predicted peak plus the agent reserve (policy.AgentReserve:
//     the largest recorded action peak, at most budget/4) fits the physical
//     headroom;
//   - policy.LivenessHeadroom: with no admitted action running, the oldest
//     queued one is admitted after policy.LivenessWait (2 s);
//   - policy.RetryReserve: a retried action reserves what the earlier
//     attempt grew (after an OOM kill at least 1.5 times its prediction);
//   - policy.GateConfigFor: the gate's safety margin S is min(256 MiB,
//     budget/8); policy.DemandCap: each sandbox's projected demand is capped
//     by admission's predicted remaining growth (0 for a sandbox running no
//     admitted action; no cap once an action outgrew its prediction). The
//     gate's own extensions (liveness escape and later ones) are in
//     gate.Controller itself.
//
// Parameters are parsed by the live parser (policy.ApplyTenonParams) and
// policy names map to what the live registry's variants switch on
// (policy.TenonVariant).
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
// Policy names follow the live registry: eager, static-N, agent-reservation,
// gate, admission, tenon, and tenon's ablations tenon-no-admission,
// tenon-no-gate, tenon-always-resident, tenon-static-pred and
// tenon-history-pred.
//
// The package touches no kernel interface and reads no files.
package sim
