package policy

import (
	"maps"
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// The hold's preemption ends a deadlock without losing a workflow. A wait
// with nothing progressing for the hold's timeout means no running action
// will end and free memory: every sandbox is mid-ramp at the limit (four
// 96 MiB ramps starting together in 256 MiB), frozen by the gate or the
// freezing hold, or stuck in the kernel's wait. Releasing the hold then
// lets the OOM killer take the largest sandbox (on v2, after the thawed
// growers meet at memory.max, often more than one), and a workflow with
// no retries left is lost. Where the host restarts a preempted attempt
// without charging it a retry (SetHoldPreempt: the replay, whose every
// attempt starts over in a fresh sandbox and workspace, so restarting one
// is safe), the hold instead preempts one victim: the host kills that
// attempt's action and restarts the attempt, and the hold stays armed, so
// the other sandboxes keep waiting (v1) or stay frozen (v2's freezing
// hold) and take the victim's memory, one at a time where the freezing
// hold thaws them. If the domain is still stuck a timeout later, the next
// victim goes.
//
// The victim is, among the sandboxes stuck at the limit (a thread
// blocked or its memory stall advancing at the last sample, frozen
// though the policy let it run: residency could not page it back in, or
// held by the freezing hold) that run an action of an attempt started
// before the wait began, the one whose attempt started last: the least
// work lost, the cheapest restart. A sandbox that moves (uses CPU, or
// rests asleep at its peak) will end its action and free its memory by
// itself; killing it throws that work away. With no stuck candidate, the
// victim is the youngest such attempt whose sandbox the gate froze: it
// cannot move either (the gate keeps it denied in red until memory
// frees, and nothing frees while the waiters wait), and preempting it
// beats a release, which hands the OOM killer the largest sandbox and,
// on v2, often more than one. Stuck ones go first because a gate-frozen
// sandbox asks for nothing: in the simulator on the two real trace sets
// (v1 and v2, with and without page-out, 768 MiB to 2 GiB) taking the
// gate-frozen as readily as the stuck ones made tenon's haiku 2 GiB runs
// on v2 preempt 6-26 attempts more and take 7-17 % longer, where as a
// fallback it changed tenon only without page-out at 768 MiB and 1 GiB
// on batch18 (its two OOM kills gone; on v2 at 768 MiB 15 % longer).
// Without the fallback (the simulator reports a gate-frozen sandbox not
// blocked, and since 6f7ad97 so did the live backends) the gate alone in
// the v2 VM suite (four ramps at once in 256 MiB) released 5 waits of 5
// with no candidate and lost 2 workflows to the OOM killer; before that,
// live, the freezer's threads' state D (Linux 6.1 on) had made them count
// as stuck. An attempt that started during the wait (a victim's restart)
// is not part of the deadlock. The attempt that started first among all
// running ones is never the victim, so it finishes (or, alone at the
// limit, is the OOM killer's after a release), and every preemption
// makes room for older work. With no candidate (only the first-started
// attempt, or only sandboxes that move; or docker on v1, whose threads'
// states are not reported and whose kernel has no memory stall, with
// nothing frozen) the hold releases as before.
//
// While the wait lasts, the sandboxes of attempts that started during it
// (the victims' restarts) are denied, so what a preemption frees goes to
// the work the wait holds. A preempted sandbox is allowed in the gate's
// decision until its action has ended, so a frozen victim is thawed and
// its kill lands (v1's freezer holds a SIGKILL until the thaw).
//
// On the imported real traces in the simulator (haiku twice, 90
// workflows, 2 GiB; bench/results/gate-hold-v2.md) preempting the
// youngest running attempt, stuck or not, took the gate alone from 13 OOM
// kills to 123 preemptions on v1, and on v2 to 610 attempts for 90
// workflows with 93 action timeouts, 18 never done (workflows restarted
// from their first action, again and again); among the stuck only, 19 and
// 31 preemptions, with no OOM kill on v2 and one on v1.

// MaxPreempts bounds the attempts of one workflow a host restarts after
// the hold preempted them without charging a retry: a livelock guard (the
// hold never preempts the first-started running attempt, so older work
// always goes on); beyond it a preemption counts as any failure.
const MaxPreempts = 10

// Preemption names the action the hold preempts: the host kills the
// running action of Agent's attempt in Sandbox and restarts the attempt.
type Preemption struct {
	Agent   string
	Sandbox string
}

// SetHoldPreempt tells the machine that the host restarts an attempt whose
// action the hold preempts (HoldPreempt) without counting it as a retry,
// so a deadlocked wait may preempt a victim instead of releasing the hold
// to the OOM killer. A machine without the hold ignores it.
func (m *Machine) SetHoldPreempt() {
	if m.hold != nil {
		m.preempt = true
	}
}

// holdVictim returns the attempt the hold would preempt now, in the wait
// that began at since, or nil: among the attempts that run an action,
// started before the wait and are not preempted yet, never the
// first-started running one, the one that started last whose sandbox is
// stuck at the limit, or, with none, the one that started last whose
// sandbox is frozen.
func (m *Machine) holdVictim(since time.Time) *agentState {
	run := m.runningSandboxes()
	var stuck, frozen *agentState
	first := true
	for _, a := range m.started { // in start order
		if !run[a.sandbox] || a.act == nil {
			continue
		}
		if !first && !m.preempted[a.sandbox] && !a.start.After(since) {
			switch {
			case m.stuck(a.sandbox):
				stuck = a
			case m.rest.seen[a.sandbox].frozen:
				frozen = a
			}
		}
		first = false
	}
	if stuck != nil {
		return stuck
	}
	return frozen
}

// stuck reports whether sandbox id is stuck at the limit: a thread
// blocked, its memory stall advancing, or frozen though the policy let it
// run, at the last sample (holdRest), or held by the freezing hold.
func (m *Machine) stuck(id string) bool {
	return m.rest.seen[id].stalled || m.freeze != nil && slices.Contains(m.freeze.held, id)
}

// froze reports whether the policy froze sandbox id at the last step: the
// gate denied it, or the freezing hold holds it.
func (m *Machine) froze(id string) bool {
	return slices.Contains(m.frozen, id) || m.freeze != nil && slices.Contains(m.freeze.held, id)
}

// notePreempted forgets preempted sandboxes whose action has ended.
func (m *Machine) notePreempted() {
	if len(m.preempted) == 0 {
		return
	}
	run := m.runningSandboxes()
	maps.DeleteFunc(m.preempted, func(id string, _ bool) bool { return !run[id] })
}

// allowPreempted allows, in the gate's decision d, every sandbox whose
// action the hold preempted and that is still running it.
func (m *Machine) allowPreempted(d *gate.Decision) {
	for i := range d.Sandboxes {
		if sd := &d.Sandboxes[i]; !sd.Allowed && m.preempted[sd.ID] {
			allow(d, sd)
		}
	}
}

// denyNewcomers denies, in the gate's decision d, every sandbox whose
// attempt started after the wait that began at since (a preempted
// attempt's restart among them): the memory a preemption frees is for the
// work the wait holds, not for new work to take and deadlock again.
func (m *Machine) denyNewcomers(d *gate.Decision, since time.Time) {
	late := map[string]bool{}
	for _, a := range m.started {
		if a.sandbox != "" && a.start.After(since) {
			late[a.sandbox] = true
		}
	}
	for i := range d.Sandboxes {
		if sd := &d.Sandboxes[i]; sd.Allowed && late[sd.ID] {
			deny(d, sd)
		}
	}
}

// deny turns sd, an allowed sandbox of d, into a denied one.
func deny(d *gate.Decision, sd *gate.SandboxDecision) {
	sd.Allowed = false
	d.Permitted = slices.DeleteFunc(slices.Clone(d.Permitted), func(id string) bool { return id == sd.ID })
	if !slices.Contains(d.Denied, sd.ID) {
		d.Denied = append(slices.Clone(d.Denied), sd.ID)
		slices.Sort(d.Denied)
	}
}

// allow turns sd, a denied sandbox of d, into an allowed one.
func allow(d *gate.Decision, sd *gate.SandboxDecision) {
	sd.Allowed = true
	d.Denied = slices.DeleteFunc(slices.Clone(d.Denied), func(id string) bool { return id == sd.ID })
	d.Permitted = append(slices.Clone(d.Permitted), sd.ID)
	slices.Sort(d.Permitted)
}
