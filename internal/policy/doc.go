// Package policy is tenon's decision core: every policy a replay, the
// daemon, the bench or the simulator runs under (seed 000 §5.1) is one
// Machine, a synchronous state machine. Hosts feed it events with the time
// they happened (an attempt submitted or ended, an action ready or done, an
// admission period, a gate period with its observation) and act on the
// decisions it returns (agents that may start, actions admitted, sandboxes
// to allow or deny, the OOM hold to release or re-arm, a memory.high limit
// for an action). It reads no clock, starts no goroutine and imports no
// backend or kernel interface (deps_test.go checks); an Observer lets it
// read the domain's available memory and a sandbox's memory at the moment
// of an event. internal/live drives it on a live host, internal/sim on a
// simulated one; a Call trace (SetTrace) shows that both drive it alike.
//
// The one registry of names (registry.go) maps a name to a Spec (what it
// switches on) and a Config (its parameters, predictor and defaults):
// "eager" (no control), "static-N" (at most N agents at once),
// "agent-reservation" (each agent reserves its profiled lifetime peak),
// "agentcgroup" (AgentCgroup's memory.high on Low actions), "tenon" (water-
// level admission, internal/admission, with the runtime gate,
// internal/gate, and residency), and "gate", "admission" and the tenon-*
// ablations, which switch mechanisms off.
//
// Beyond seed 000, tenon's composition paces new agents (by memory and,
// where the host states its CPUs, by the sandboxes' CPU use: cpupace.go;
// the simulator models no CPU), counts predicted
// peaks in admission's physical check, caps the gate's demand of a sandbox
// at its admitted action's predicted remaining growth, lets a retried
// action reserve what its earlier attempt needed, lets an action reserve
// what the same command of the same task grew in another agent when that
// was more than a heavy action past its prediction (taskreserve.go: the
// replicas or rollouts of one task run the same tools on the same tree;
// learned at a gate period, while the first still grows; task-reserve=off
// is the ablation), keeps two liveness
// rules (admitstep.go), and runs the gate on the replay's clock: under a
// time scale s its period, horizon and waits are multiplied by s, since the
// tools' ramps are s times as short (registry.go, ScaledGate). Its default
// admission margin keeps one red region of the gate free
// (AdmissionMargin), except from light actions, which may use it
// (Config.LightMargin, admission's light lane: on the imported real traces
// one heavy action at its peak otherwise kept every small action waiting
// for its whole run; light-margin=off is the ablation); the current predictor assumes at least a task's
// largest peak of its class's latest three, or its class's p90 for the first
// (predict.ClassFloor); and where the domain has one (cgroup v1's
// oom_kill_disable; v2's memory.high below memory.max, with the domain's
// PSI as the stall signal and the machine freezing the allocators,
// hold_freeze.go; only when the host asks for it) the gate runs the OOM
// hold, so an allocation at the budget waits for memory
// instead of being killed and the OOM killer acts only after DMax with no
// sandbox making progress (using CPU, or resting at its peak while its
// action runs, whose gate denial the wait lifts: hold_rest.go; at least
// MinHold), or after a hundred times
// that, or the host's action timeout when longer, however busy the others
// are (hold.go, HoldMaxWaitFor); where the host
// restarts a preempted attempt without charging a retry (the replay and
// the simulator), a wait with nothing progressing preempts the youngest
// running attempt instead of releasing (hold_preempt.go; with none, where
// the host also restarts an attempt that runs no action, the youngest
// idle one whose sandbox holds memory: a deadlock of idle floors; on v2,
// where a release only lets the stuck actions grow into what is free
// below memory.max, only when they are short of it, or took more than
// half of it since a release just before), and where it
// runs a rolled-back action again (the same two), a wait that has lasted
// the timeout rolls back the action stuck furthest past its admission's
// reservation, once an attempt, whose rerun then reserves what it reached
// (hold_rollback.go; rollback=off turns it off). By default
// (Config.HeldBudget; held-budget=off turns it off), while it runs the
// hold the gate's yellow permits every grower that fits its headroom, not
// b of them (gate.Config.HeldBudget, off again with DisableHold).
// Residency's rules (which idle sandboxes to reclaim and how,
// whether a rematerialization or page-in may start; residency.go) take the
// machine's pressure. They read each agent's predicted model wait from a
// WaitModel (waits.go), learned from the waits an agent was seen in and
// never from the one to come, kept alike by the daemon, the live replay
// and the simulator.
//
// Floors. On real agent traces idle sandboxes' resident memory (files the
// tools wrote, caches, processes left running: the sandbox's floor), not
// bursts, fills the budget. Three rules account for it:
//   - agent pacing charges floors: a new agent starts only if the headroom,
//     less the floors that paged-out or torn-down sandboxes will take back
//     before their next action (OwedFloor), fits its first action's
//     predicted peak plus its predicted floor (PredictFloor: the median of
//     the floors measured after actions so far, Done.AfterBytes) plus the
//     agent reserve; each agent started in a pass takes its floor from the
//     headroom;
//   - residency reclaims idle floors, restart-safe or not: DecideReclaim
//     picks per idle sandbox teardown (restart-safe) or page-out (with the
//     host's compressed swap; frees the floor less its compressed copy,
//     which counts against the budget) by bytes freed per second of delay
//     when the agent resumes, and under pressure reclaims only what the
//     domain lacks (ReclaimNeed: up to the yellow line, or a waiting
//     action's peak above the margin), cheapest per byte first; in red
//     it also pages out sandboxes that have
//     stalled for ResidencyConfig.Stall, or as long as their page-in takes
//     when that is longer (action waiting for admission, or frozen by the
//     gate), never tearing them down;
//   - admission takes a paged-out sandbox's level before its action to be
//     its floor, and counts what it faults back (Returning) in the physical
//     headroom.
package policy
