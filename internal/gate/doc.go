// Package gate is tenon's runtime execution control: seed 000 §3.2 (the
// pressure state Q(t)), §3.5, Algorithm 1, Table 1, Table 5 and Appendix B.
// While actions run, it estimates each sandbox's memory growth, classifies
// the workload domain's pressure as green, yellow or red, adapts a yellow
// concurrency budget b by AIMD, and decides which sandboxes may receive CPU
// time. An Actuator enforces the decisions and a Loop runs it all live.
//
// The Controller is pure decision logic: it receives observation snapshots
// (Observation) with a timestamp and returns decisions (Decision). It never
// reads the clock or touches the kernel, so the same code runs live, in
// tests and in simulation. Nothing here reads /sys or /proc or imports a
// backend: the Loop's Observer and Actuator are given by its caller.
//
// # Iteration (Appendix B)
//
// Step performs, on one snapshot and one timestamp: (1) remove completed or
// vanished sandboxes (discarding estimator and denial timer) and register new
// ones (Growing, no estimate, bootstrap demand, no timer, permission deny);
// (2) collect footprint and CPU time; (3) update estimates on valid intervals
// only; (4) projected demands and pressure; (5) update b; (6) select the
// complete permitted set A; (7) publish allow for A and deny for the rest,
// clear timers of allowed sandboxes, start unset timers at t (keeping running
// ones), and relabel denied Growing sandboxes PausedGrowing.
//
// # Growth estimate
//
// Footprint m = memory usage + swap in use (Table 5: memory.current +
// memory.swap.current). Raw growth g = Δm/Δt over the interval
// since the previous sample. An interval is valid only if no permission
// change was published inside it and the sandbox's CPU time increased (or,
// with rest decay below, it rested while allowed); only
// valid intervals update the EWMA ĝ ← α·g + (1−α)·ĝ, and the first valid g
// initializes ĝ. The baseline (t, m, cpu) is refreshed at every sample, also
// while denied, so the first valid interval after a denial spans one period,
// not the whole episode. Labels: Resident iff |ĝ| <= ε, Cooling iff ĝ < −ε,
// Growing iff ĝ > ε or no valid estimate yet. Projected demand d = max(ĝ·T, 0)
// rounded up to whole bytes (so any positive rate consumes a contributor slot),
// or d_boot until the first valid estimate. The band changes only the label.
//
// The seed defines PausedGrowing only as "denied Growing". We keep the label
// consistent with that: a valid sample that labels a still-denied sandbox
// Growing labels it PausedGrowing (possible with an actuator that lets a
// denied sandbox run a little), and an allowed PausedGrowing sandbox is
// labelled Growing again at publication.
// Growing and PausedGrowing have the same rank, so this never changes a
// decision; it keeps the pause event to one per denial episode.
//
// # Pressure
//
// M is the domain's available memory, R_prev the summed current demands of
// the previously permitted sandboxes that are still live, and B the domain's
// budget (memory limit). Seed 000 sizes the red and yellow regions as
// fractions of the total budget (§5, memory-region sizing: 12.5% each by
// default), red being the bottom region of free memory and yellow the one above. Algorithm 1 line 2
// determines pressure "from M and R_prev, giving red priority"; §3.2 says
// accounting for predicted growth lets the controller react before current
// usage alone reveals pressure. So the projected free memory M − R_prev is
// placed in those regions, and red is tested first:
//
//	red    if M < red·B  or  M − R_prev < red·B
//	yellow if M − R_prev < (red+yellow)·B
//	green  otherwise
//
// Since R_prev >= 0, the first red clause is implied by the second; it is
// kept to state that current memory alone can make the state red. The safety
// margin S does not enter the classification: it only sizes the usable
// headroom H = max(M − S, 0) that bounds the aggregate demand admitted in
// yellow and red. With B <= 0 (no limit) both regions are empty.
//
// Available memory is budget − working set (usage less inactive file cache,
// as kubelet computes memory.available), not budget − usage.
// Table 5 defines H from MemAvailable, which counts reclaimable page cache as
// available. Usage would not: a domain whose sandboxes read and write files
// fills its limit with clean cache that the kernel reclaims on demand before
// any OOM kill, and usage-based pressure would then stay red and deny every
// growing sandbox indefinitely. Per-sandbox footprints stay usage + swap, as
// Table 5 prescribes, so cache growth counts as demand: conservative.
//
// # Budget b (AIMD)
//
// b starts at b0 and previous pressure at Green. On every iteration whose
// pressure is more severe than the previous one, b ← max(1, ⌊b/2⌋) once (a
// green→red jump is one observed transition: one halving). A decrease in
// pressure leaves b alone. The Green stability timer starts at the first green
// decision and is cleared by any non-green one; each complete T_stable of
// continuous green adds 1 to b (capped at bmax), and a late iteration that
// spans several intervals adds one per interval and keeps the remainder.
//
// # Selection (Algorithm 1 lines 4–16)
//
// Green permits every live sandbox, bypassing all restrictions. Otherwise the
// eligible candidates are those without a running denial timer or denied for
// at least Dmin. Overdue candidates (denied for at least Dmax) come first,
// longest-denied first; the rest by Resident, Cooling, Growing/PausedGrowing;
// in both groups smaller demand and then the ID break ties. Walking that order,
// a candidate joins A if the aggregate demand stays <= H and the number of
// positive-demand members stays <= K (K = b in yellow, 1 in red: the red-drain
// probe). Zero-demand sandboxes never consume a slot.
//
// # Extensions (each switchable off in Config)
//
// Algorithm 1 as written lets four sandboxes ramping at once to 40% of the
// budget OOM (TestLiveGateRamp in internal/replay): after it denies every
// grower, R_prev is 0, Q(t) reads green and the next iteration releases them
// all, to be denied again a period later, and memory ratchets up by a
// period of every sandbox's growth per cycle. Three extensions fix it:
//
//   - Green check (NoGreenCheck): green is kept only when the demand of every
//     live sandbox fits the green region; otherwise the iteration runs as
//     yellow (b growers within H).
//
//   - Stickiness (NoSticky): within a state rank, a sandbox permitted in the
//     previous iteration comes before a denied one with a smaller demand.
//
//   - Holding: a sandbox selected (permitted by a yellow or red iteration, not
//     by green's blanket allow) less than Dmax ago comes before every other
//     candidate, overdue ones included (also off with NoSticky). Without it
//     several waiting growers turn overdue together and rotate the one slot
//     every few periods, leaving each half-grown; the starvation bound becomes
//     Dmax of denial plus Dmax per holder ahead. A holder has to fit only the
//     growth it can make in two periods (it is re-checked every period), not
//     over the horizon T: otherwise, as memory fills, the running grower's
//     projection is the first not to fit and a sandbox with a smaller (often
//     bootstrap or stale) projection takes its place half-way.
//
//   - Fast attack (NoFastAttack): a valid interval faster than the estimate
//     sets the estimate to it; the EWMA (α = 0.35) only smooths the decay.
//     Table 5's EWMA reaches a burst's rate over several periods while a
//     1 GiB/s tool ramp adds 100 MiB per period.
//
// The liveness escape (NoLivenessEscape, in selectPermitted) permits the
// first overdue positive-demand candidate when nothing with positive demand
// would run (with seniority, the first senior one, overdue or not).
//
// Replaying the bundled workload (twelve agents, 1.2 GiB test runs in a
// 2 GiB budget) showed two more ways the gate made things worse than no
// gate at all: growers frozen half-grown hold memory that none of them can
// finish in, and a sandbox at its peak is frozen there. Two extensions:
//
//   - Seniority (NoSeniority): a sandbox's growth episode starts where it last
//     looked Resident or Cooling; the footprint it has added since (when at
//     least the bootstrap demand) is its seniority. Seniors come first, ahead
//     of overdue candidates and the state ranks (only holders come before);
//     a positive-demand candidate after a senior that did not fit is skipped
//     (a junior does not grow into the headroom the senior waits for); and
//     the liveness escape runs the first senior as the probe at once. The
//     grower closest to done finishes and frees its memory; juniors are
//     frozen while still small. Without it Table 5's smaller-demand order
//     lets the sandbox that has just begun displace the one that has grown
//     furthest, and in a full budget both end half-grown: a deadlock that
//     only an OOM kill resolves, and the OOM killer takes the largest, the
//     senior. Juniors wait for the seniors ahead of them as in a FIFO: a
//     senior that never fits is the probe, so it either finishes its action
//     or meets the budget (where the OOM hold, or the kernel, decides); one
//     that idles inside its action holds the juniors until the action ends
//     or times out, unless memory is not at the budget (the junior drain,
//     NoJuniorDrain: one overdue junior runs beside a senior probe that
//     stopped using CPU while at least half the red region is free). The
//     escape does not wait DMax for a senior: without the hold, in the
//     simulator, waiting gave more kills (29 vs 23).
//
//   - Resident zero (NoResidentZero): a Resident sandbox (|ĝ| ≤ ε) has demand
//     0. The EWMA of a sandbox that stopped growing decays towards 0 but
//     stays positive, and an idle sandbox uses no CPU, so while it is
//     denied (or memory is red; rest decay, below) its intervals are
//     invalid and its last estimate stays for as long as it idles. As
//     written, x_c = 1[d_c > 0] then gives every such sandbox one of the b
//     slots, ahead of growers (Resident ranks first): in yellow with b = 1 a
//     sandbox at its peak or idle takes the only slot and the growers are
//     frozen, or the other way round a sandbox at its peak is frozen,
//     holding the memory it would free a moment later. §3.5 says a sandbox
//     with no predicted positive growth takes no slot; within the band the
//     growth is noise.
//
//   - Rest decay (NoRestDecay): an interval in which a sandbox the gate
//     allowed used no CPU and did not grow is valid, its growth at most 0,
//     unless memory alone is red (M < red·B, where a sandbox without CPU
//     may be blocked waiting for memory). A tool that ramps up and then
//     sleeps at its peak (a server started, a wait on I/O or a subprocess)
//     otherwise keeps its ramp's rate for as long as it sleeps: with the
//     rate's projection the pressure stays red, and the senior holds the
//     probe while every other grower is frozen. Replaying the imported real
//     traces live (batch18 at 1 GiB) a 408 MiB action resting 11 s at its
//     peak froze eleven small actions and stopped the page-ins and
//     rebuilds of every returning sandbox for 10 s, twice in one run.
//
// # Held budget
//
// Yellow's b growers (AIMD, b <= BMax = 4) anticipate red: without a
// backstop, several growers crossing the budget together are OOM-killed.
// Where the domain holds an allocation at its budget instead (the OOM
// hold below; Config.HeldBudget, which the decision core sets exactly
// while it runs the hold, unless held-budget=off), an overshoot costs a wait at the budget, and
// the count limit costs more than it saves: on the imported real agent
// traces dozens of small actions run at once, each new one projecting the
// bootstrap demand, and in yellow all but b were frozen mid-action (44 of
// 50 at one point with 1.6 GiB of 4 GiB free), holding their memory while
// they waited. On a held budget yellow's K is the number of candidates:
// every grower that fits the headroom H is permitted, in the usual order,
// so the aggregate demand still stays within H; red keeps its one grower.
// In the simulator over both real trace sets, six budgets and six arrival
// orders (72 runs; bench/results/traces-sim.md): 0 kills either way,
// summed makespan -4.3 %, summed P50 -6.8 %; without swap (no page-out
// tier) 4 -> 2 kills; on pure cgroup v2 (the freezing hold) makespan
// -4.8 %, P50 -12 %, but 12 sandbox timeouts against 6 (two runs where one
// action timed out in every attempt, against one). Live on the imported
// traces (the process backend, cgroup v1) the count limit had frozen
// growers for 10-13 s mid-action: the actions of batch18 at 1 GiB ran
// 1532 s in sum against Eager's 1058 s, 752-828 s on a held budget. So
// the tenon policies run it by default; held-budget=off is the ablation.
// Letting
// yellow permit every sandbox, H ignored, gained more P50 (-11 %) but one
// huge action and a small one then met at the budget and the hold had to
// release one to the OOM killer.
//
// Red keeps its one grower on a held budget too. Letting red permit every
// grower that fits H where the hold sits at the budget (v1; on v2 the hold
// line, memory.high, is red's upper edge), as yellow does, was measured
// and dropped: on generated workloads at the traces' scale (tenon sim
// --kind swe-real, 60 and 120 agents, three seeds, 1-4 GiB) P50 -11 %,
// makespan -1.0 %; on the 72 real-trace runs -0.1 % (without swap
// -2.5 %); but the 48 runs of bench/traces-robust.sh moved +0.7 %, P50
// +2.7 % (haiku three times without swap at 2 GiB: P50 319 -> 1351 s).
//
// # The OOM hold
//
// The gate sees growth a period after it happens, so the domain's limit
// stays the backstop. Where the domain can hold an allocation at its
// budget instead of OOM-killing it, the decision core runs the OOM hold
// next to the gate (internal/policy, hold.go): tasks wait at the budget
// while the gate, red by then, keeps other sandboxes from growing, and
// the kernel's OOM killer acts only after DMax (at least two seconds)
// with no sandbox using CPU. On cgroup v1 the hold is memory.oom_control's
// oom_kill_disable: the allocating task sleeps in the kernel's OOM wait.
// On v2 it is the domain's memory.high an eighth below its memory.max,
// the top of the red region, where the allocator is reclaimed from and
// throttled (cgroup.HoldHigh), and "waiting" is read from the domain's
// memory PSI (memory.pressure); throttling alone only slows growers, so
// the machine also freezes every sandbox that grew while tasks wait and
// thaws them one at a time below the line (internal/policy,
// hold_freeze.go), denying them on top of this package's decision. A
// sandbox the gate denies while it sleeps in v1's OOM wait stays FREEZING
// (cgroup.Group.Freeze accepts it); on v2 a throttled sandbox freezes once
// its throttling sleep ends, at most 2 s later. The v2 hold is armed as
// v1's is; where the driver restarts preempted attempts (the replay) a
// deadlock under either is ended by preempting the youngest stuck attempt
// (internal/policy, hold_preempt.go), not by the OOM killer: in the VM
// suite the gate alone then lost no workflow in 16 runs, against 7 of 11
// before (bench/results/gate-hold-v2.md).
//
// # Enforcement
//
// The seed enforces decisions with a sched_ext scheduler. Decisions reach
// sandboxes through an Actuator, injected by the live adapter
// (internal/live): the freezer pauses and resumes them through the sandbox
// backend, which freezes the sandbox's cgroup; where the kernel has
// sched_ext, the pacing actuator runs a denied sandbox's tasks at a small
// share of one CPU in tenon's sched_ext scheduler (internal/schedext) and
// hands a denial longer than a few seconds over to the freezer. A frozen
// sandbox's CPU time stays flat, so its intervals are invalid; a paced
// one's creeps, so its intervals stay valid and its estimate follows the
// paced growth, below what it grows when allowed (fast attack catches up
// once it is allowed again).
//
// Loop calls the actuator only when a sandbox's applied permission differs
// from the decision (a new sandbox always gets its first decision applied),
// retries failures next iteration, and allows every sandbox before Run
// returns. The decision itself comes from Controller.Step or, when a policy
// owns the controller, from the policy's step (LoopOptions.Step).
package gate
