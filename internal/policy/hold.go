package policy

import (
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// The OOM hold is an extension of seed 000 beyond Algorithm 1, for domains
// that can hold an allocation at the budget (controller.OOMHolder): cgroup
// v1's memory.oom_control (oom_kill_disable), or on v2 the domain's
// memory.high just below its memory.max (cgroup.Domain.SetOOMHold). The gate sees
// growth one control period after it happens; a tool ramping at 1 GiB/s
// passes the last 100 MiB of a budget before the gate can deny it, and the
// kernel then kills it. Under the hold the kernel instead makes the
// allocating task wait at the budget: the gate (red by then) keeps others
// from growing, and actions that are not allocating go on, finish and free
// their memory, after which the waiting task gets its page and continues.
// The hold is released only when it has lasted holdTimeout (Table 5's DMax,
// the overdue threshold, on the replay's clock) with no sandbox in the
// domain making progress (a deadlock: every task waits for memory or is
// frozen), or after HoldMaxWait however busy the others are: a grower at its
// peak that is still running its tests will exit and free its memory, and
// killing it — the largest process is the OOM killer's choice — would throw
// away the work closest to done. Where the host restarts preempted
// attempts (SetHoldPreempt), a wait with nothing progressing is not
// released: it preempts the youngest running attempt instead and goes on
// (hold_preempt.go). When released, the OOM killer picks its
// victim exactly as it would have without the hold, and the hold is re-armed
// once the domain is out of OOM. A kill is delayed, never avoided by
// relabelling: every kill still counts as an OOM event.
//
// What waits under v1's hold is a page fault taken in user mode: the
// faulting task sleeps in the kernel's OOM wait (mem_cgroup_oom_synchronize).
// Memory the kernel charges inside a system call does not wait: with
// oom_kill_disable the charge fails, and the call returns ENOMEM (or
// ENOBUFS). At the budget, live, that is mmap and munmap (a new or split
// VMA), fork and clone, unshare (runc's "failed to unshare remaining
// namespaces: No buffer space available"), and mkdir of a cgroup (runc's
// "unable to apply cgroup configuration: ... cannot allocate memory", so
// a sandbox cannot start in a held domain at its budget); a tool that
// allocates through such calls sees an error where, without the hold,
// the OOM killer would have made room. The replay's memory tool grows by
// page faults for this reason (internal/memtool's arena), as most
// allocators do between their mmaps.
//
// The two kernels hold differently, and the machine steps both alike. On
// v1 the allocating task sleeps in the kernel's OOM wait and under_oom
// says so. On v2 the kernel only throttles a task above memory.high (an
// eighth below memory.max), ever more slowly the further it gets, which
// alone let several throttled growers cross to memory.max together in the
// VM suite; so the host makes the hold a freezing one (SetHoldFreeze,
// hold_freeze.go): while tasks wait, every sandbox that grew is frozen and
// counts as waiting, as a v1 task in the OOM wait does, and the frozen are
// thawed one a period once the domain is back below the line. "Under" on
// v2 is the domain's usage above the memory.high line with its memory PSI
// (memory.pressure's some total) advancing since the previous period, a
// task stalled on memory; a release thaws every held sandbox and sets
// memory.high back to max, so the waiters' next allocations reach
// memory.max and the OOM killer. With memory.oom.group on every sandbox
// (the process backend's OOMGroup) that kill takes the whole sandbox,
// which the replay and the daemon replace. Measured in the VM suite
// (bench/results/v2-hold.md): throttling alone did not keep the gate from
// kills (3 kills in 2 runs with it); with the freezing the racing
// allocators stop below memory.max, but the gate alone still lost a
// workflow in 7 of 11 runs with the progress signal (hold_rest.go), each
// after a release with no sandbox resting: four 96 MiB ramps starting
// together in 256 MiB, all mid-ramp at the limit, leave nothing to wait
// for. With the preemption (hold_preempt.go), which ends such a deadlock
// by restarting the youngest stuck attempt instead of releasing, it lost
// none in 16 (bench/results/gate-hold-v2.md), so the hosts arm the v2 hold
// as they arm v1's. In the simulator on the real traces (tenon sim
// --cgroup v2) the hold cuts kills against no hold at every budget.

// HoldTimeout is how long tasks may wait under the hold with nothing
// progressing before it is released (HoldMaxWait bounds the whole wait), for the hold= parameter (hold) and the gate configuration gc (already on
// the replay's clock): gc's DMax, at least MinHold, when hold is 0, else
// hold itself (< 0: no hold).
func HoldTimeout(hold time.Duration, gc gate.Config) time.Duration {
	if hold != 0 {
		return hold
	}
	return max(gc.WithDefaults().DMax, MinHold)
}

// MinHold is the shortest default hold: a compressed replay's DMax shrinks
// with its clock, but freeing memory does not (residency pages stalled
// sandboxes out after ten gate periods, and a page-out takes real time).
const MinHold = 2 * time.Second

// HoldMaxWait bounds a hold during which other sandboxes keep making
// progress: a hundred times its timeout (five minutes at Table 5's DMax of
// 3 s on the traces' own clock). While anything progresses, the wait ends
// when a running action finishes and frees its memory, and real tool calls
// run for minutes (the AgentCgroup traces' longest actions: P99 68-120 s,
// max 6 min); a bound of ten timeouts (30 s) released the hold in the middle
// of such runs, and the kernel then killed the largest sandbox, usually the
// long-running action itself: in the simulator on the two shared real trace
// sets (six budgets from 768 MiB to 4 GiB, six arrival orders, 72 runs),
// 39 OOM kills with the 30 s bound, 16 with 60 s, 2 with 120 s, 1 with 300 s,
// and the summed makespan fell by 4 %, the summed P50 rose by 5 %
// (bench/results/traces-sim.md at 107b3f9).
// The bound is a livelock guard, not a tuning: a sandbox that spins forever
// counts as progress, and the waiter's action timeout may be longer still.
// The hold-max= parameter overrides it.
func HoldMaxWait(timeout time.Duration) time.Duration { return 100 * timeout }

// HoldMaxWaitFor is the hold's bound while sandboxes progress on a host
// whose actions time out after actionTimeout (0: none): HoldMaxWait, or
// the action timeout when that is longer. A running action that progresses
// either ends and frees its memory or times out, which frees it too, so
// waiting up to the timeout never waits for nothing; releasing sooner
// hands the OOM killer a wait that was about to resolve. On the shared
// real traces' longest action (362 s, with the default timeout of ten
// times it) the five-minute bound released a held 1.8 GiB test 0.9 s before
// the action it waited for ended: the one OOM kill of 72 simulated runs
// with the class floor's window (bench/results/traces-sim.md).
func HoldMaxWaitFor(timeout, actionTimeout time.Duration) time.Duration {
	return max(HoldMaxWait(timeout), actionTimeout)
}

// holdState is where the hold's state machine is.
type holdState int

const (
	holdArmed    holdState = iota // armed, nothing waiting
	holdWaiting                   // tasks wait for memory under the hold
	holdReleased                  // released to the OOM killer; re-armed when the domain is out of OOM
)

// HoldAction is what a step asks the caller to do.
type HoldAction int

const (
	HoldNone     HoldAction = iota
	HoldBegan               // tasks started waiting (log it)
	HoldResolved            // the wait ended without a kill (log it)
	HoldRelease             // release the hold (v1 oom_kill_disable=0, v2 memory.high=max): the OOM killer acts
	HoldRearm               // arm the hold again
	// HoldPreempt: the wait is deadlocked and the host restarts preempted
	// attempts (hold_preempt.go): it kills Step.Preempt's action and
	// restarts that attempt; the hold stays armed and goes on waiting.
	HoldPreempt
)

// HoldStats counts what the OOM hold did.
type HoldStats struct {
	Holds     uint64        // waits that began
	Resolved  uint64        // waits that ended with memory freed, no kill
	Released  uint64        // waits released to the OOM killer (the timeout without progress, or MaxWait)
	Held      time.Duration // total time tasks waited under the hold
	Froze     uint64        // sandboxes the freezing hold froze (hold_freeze.go; v2)
	Thawed    uint64        // resting sandboxes whose gate denial a wait lifted (hold_rest.go), counted once per run of periods
	Preempted uint64        // actions the hold preempted to end a deadlock instead of releasing (hold_preempt.go)
}

// OOMHold is the hold's decision logic, with no I/O: the live gate runner
// and the simulator step it the same way.
type OOMHold struct {
	Timeout time.Duration // how long tasks may wait with nothing progressing before the hold is released
	MaxWait time.Duration // how long they may wait at most (0: Timeout)
	state   holdState
	since   time.Time
	moved   time.Time // last step at which some sandbox made progress during the wait
	stats   HoldStats
}

// Stats returns the counters so far.
func (h *OOMHold) Stats() HoldStats { return h.stats }

// Step advances the state machine: once per control period, with the time,
// whether tasks wait under the hold (v1 under_oom; on v2 usage above the
// memory.high line and a memory stall since the last period) and whether
// any sandbox made progress since the previous step (used CPU, or rested
// at its peak while its action runs: hold_rest.go). The caller
// acts on the result (SetOOMHold(false) on a HoldRelease, true on a
// HoldRearm).
func (h *OOMHold) Step(now time.Time, under, progress bool) HoldAction {
	return h.step(now, under, progress, false)
}

// step is Step where preempt says whether the host can end a deadlock
// with a victim now (a preemption, hold_preempt.go, or a rollback,
// hold_rollback.go): then a wait that has lasted the timeout with nothing
// progressing returns HoldPreempt instead of HoldRelease and goes on
// waiting, with a new timeout for the victim's memory to come back; the
// caller counts the preemption (HoldStats.Preempted) if it preempts.
func (h *OOMHold) step(now time.Time, under, progress, preempt bool) HoldAction {
	switch h.state {
	case holdArmed:
		if under {
			h.state, h.since, h.moved = holdWaiting, now, now
			h.stats.Holds++
			return HoldBegan
		}
	case holdWaiting:
		waited := now.Sub(h.since)
		if !under {
			h.state = holdArmed
			h.stats.Resolved++
			h.stats.Held += waited
			return HoldResolved
		}
		if progress {
			h.moved = now
		}
		if preempt && now.Sub(h.moved) >= h.Timeout {
			h.moved = now
			return HoldPreempt
		}
		if now.Sub(h.moved) >= h.Timeout || waited >= max(h.MaxWait, h.Timeout) {
			h.state, h.since = holdReleased, now
			h.stats.Released++
			h.stats.Held += waited
			return HoldRelease
		}
	case holdReleased:
		// Out of OOM: the kill is done and the waiters have their memory.
		// If the domain is still under OOM after another timeout, re-arm
		// anyway (a waiter that went back to sleep before the kill starts
		// a new wait).
		if !under || now.Sub(h.since) >= h.Timeout {
			h.state = holdArmed
			return HoldRearm
		}
	}
	return HoldNone
}
