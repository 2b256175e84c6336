package policy

import "time"

// The hold's rollback ends a wait that admission's misprediction started.
// Admission reserves an action's predicted peak; an action that grows far
// past it (the first run of a command whose memory the predictor has not
// seen: on the real traces "light" commands predicted at 38-75 MiB grew
// to 0.8-1.6 GiB) is the gate's senior grower, takes the domain's free
// memory and then waits at the limit under the hold for memory that only
// another long action's exit frees. Nothing else runs meanwhile: the
// growers the gate froze are paged out and cannot fault back, and the
// agents residency tore down cannot come back in red. The hold does not
// preempt (the long actions count as progress), so the wait lasts until
// one of them ends: on batch18 x2 at 2 GiB in the simulator 75 s, the
// median workflow's delay was 72 s of it (haiku x2: 97 s). Eager's OOM
// killer kills the grower instead, and restarts its whole workflow.
//
// Where the host runs a rolled-back action again (SetHoldRollback: the
// replay and the simulator; the daemon's harness would see a failed
// command, so the daemon does not), the hold instead rolls back such an
// action once the wait has lasted the hold's timeout: among the sandboxes
// stuck at the limit running an admitted action, the one furthest past
// what admission reserved for it (its predicted peak or its charge above
// its memory at admission); none that stays within it. The host kills
// that action alone (its memory goes with its processes) and reports it
// done OOM-killed, so RetryReserve makes its rerun reserve at least what
// it reached, as a heavy action: it waits in admission's heavy lane for
// the memory it needs instead of taking it from the others. The work
// lost is the action's own progress, not the attempt's. An action is
// rolled back at most once an attempt: a rerun that outgrows its new
// reservation too waits under the hold as before (rolled back each time,
// a 1.8 GiB test was killed at 756 and at 991 MiB). rollback=off is the
// ablation.
//
// In a deadlock (nothing progressed for the hold's timeout) where the hold
// would preempt a victim (hold_preempt.go), a rollback candidate goes
// first: the preemption throws away the victim's attempt, the rollback
// one action's progress (live on haiku twice at 2 GiB a deadlock had
// preempted an attempt at its tenth action, a test run whose sandbox held
// 1.4 GiB). With no preemption victim the hold releases
// as before: a rollback there too cost tenon 13 % of makespan in two of
// the 72 simulated runs on v2, where the release lets an action that
// alone does not fit below memory.high run up to memory.max without a
// kill, and the rollback only made it start over (then the preemption
// came anyway). As landed, on the 72 runs: on v1 no run changed; on v2
// one (batch18 at 768 MiB, 1857 -> 1496 s) and without swap one (batch18
// at 768 MiB, 1712 -> 1688 s).
//
// In the simulator on the two real trace sets (72 runs: six budgets from
// 768 MiB to 4 GiB, six arrival orders; bench/traces-sim.sh's grid) the
// rollback took tenon's summed makespan -0.5 % and its summed P50 -12 %
// on v1 (84038 -> 83578 s, 23807 -> 20947 s), -3.3 % and -11 % on v2,
// with no OOM kill or timeout in either; without swap -1.8 % and -6 %,
// but with 4 OOM kills against 1: there the memory a rerun waits for can
// come only from actions that end and restart-safe sandboxes torn down,
// and twice the hold released with only idle floors beside the waiter.
// Of the generated workloads (tenon bench --sim) only the one at the
// traces' scale moved (swe-real, 45 workflows at 1 GiB): tenon 137.6 ->
// 115.1 s, P50 87.0 -> 55.0 s, and its ablations likewise but one:
// tenon-always-resident 130.9 -> 169.1 s, with 19.6 % of its attempts
// failing (preempted) against 2.2 %; not examined.

// SetHoldRollback tells the machine that the host runs an action the hold
// rolls back (Step.Rollback) again in the same sandbox. A machine without
// the hold or admission, or with Config.NoRollback, ignores it.
func (m *Machine) SetHoldRollback() {
	if m.hold != nil && m.adm != nil && !m.cfg.NoRollback {
		m.rollback = true
	}
}

// rollbackVictim returns the admitted action to roll back now in the wait
// that began at since, or nil: once the wait has lasted the hold's
// timeout, the one whose sandbox is stuck at the limit furthest past its
// reservation (by this period's sample, holdRest), not preempted, with fewer
// than MaxPreempts rollbacks in its attempt, and not rolled back already
// (the host's kill and the action's end come after this step). The
// caller marks the one it rolls back (agentState.rolled, rolling).
func (m *Machine) rollbackVictim(now, since time.Time) *agentState {
	if !m.rollback || now.Sub(since) < m.hold.Timeout {
		return nil
	}
	var victim *agentState
	var over int64
	for _, a := range m.admitted {
		s, ok := m.rest.seen[a.sandbox]
		if !ok || a.act == nil || m.preempted[a.sandbox] || a.rolling || a.rolled == a.index+1 || !m.stuck(a.sandbox) {
			continue
		}
		if o := s.mem - a.before - max(a.peak, a.charge); o > over {
			victim, over = a, o
		}
	}
	return victim
}
