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
// The victim is, among the sandboxes stuck at the limit (a thread blocked
// or its memory stall advancing at the last sample, frozen though the
// policy let it run: residency could not page it back in, or held by the
// freezing hold) that run an action of an attempt started before the wait
// began, the one that loses the least work for the memory it frees: the
// least time since its attempt started (what the restart redoes) per byte
// its sandbox held at the last sample; of equal ones, the attempt that
// started last. Taking the youngest whatever it held (as before) let a
// deadlock around one large action preempt the light actions beside it
// one by one: in the simulator on swe-real at 1 GiB without swap (seed 1)
// an 800 MiB test rerun stuck 50 MiB short saw two 13 and 22 MiB attempts
// preempted, the memory each freed taken at once by light actions
// admitted into the margin, before it went itself (157.3 s); by work lost
// per byte it went first (143.8 s). Over the simulated grid
// (traces-sim.md's 72 runs on v1, without swap and on v2,
// traces-robust.md's 48, six seeds of swe-real at 1 and 1.5 GiB with and
// without swap: 288 runs) 6 runs changed, none with a kill: that one,
// haiku at 2 GiB and batch18 at 4 GiB on v2 (2274 -> 1708 s and 1239 ->
// 1097 s), and three 0.5-8.7 % slower (swe-real seed 6 without swap 130.5
// -> 141.8 s); summed makespan -0.2 % (v2 -0.8 %), P50 -0.1 %. Of the
// generated workloads (tenon bench --sim) one run moved:
// tenon-always-resident on swe-real 173.1 -> 152.6 s. A sandbox that
// moves (uses CPU, or rests asleep at its peak) will end its action and
// free its memory by itself; killing it throws that work away. With no
// stuck candidate, the victim is the youngest such attempt whose sandbox
// the gate froze: it cannot move either (the gate keeps it denied in red
// until memory frees, and nothing frees while the waiters wait), and
// preempting it beats a release, which hands the OOM killer the largest
// sandbox and, on v2, often more than one. Stuck ones go first because a
// gate-frozen sandbox asks for nothing: in the simulator on the two real
// trace sets (v1 and v2, with and without page-out, 768 MiB to 2 GiB)
// taking the gate-frozen as readily as the stuck ones made tenon's haiku
// 2 GiB runs on v2 preempt 6-26 attempts more and take 7-17 % longer,
// where as a fallback it changed tenon only without page-out at 768 MiB
// and 1 GiB on batch18 (its two OOM kills gone; on v2 at 768 MiB 15 %
// longer). Without the fallback (the simulator reports a gate-frozen
// sandbox not blocked, and since 6f7ad97 so did the live backends) the
// gate alone in the v2 VM suite (four ramps at once in 256 MiB) released
// 5 waits of 5 with no candidate and lost 2 workflows to the OOM killer;
// before that, live, the freezer's threads' state D (Linux 6.1 on) had
// made them count as stuck. An attempt that started during the wait (a
// victim's restart) is not part of the deadlock. The attempt that started
// first among all running ones is never the victim, so it finishes (or,
// alone at the limit, is the OOM killer's after a release), and every
// preemption makes room for older work. With no candidate (only the
// first-started attempt, or only sandboxes that move; or docker on v1,
// whose threads' states are not reported and whose kernel has no memory
// stall, with nothing frozen) the hold releases as before.
//
// While the wait lasts, the sandboxes of attempts that started during it
// (the victims' restarts) are denied, so what a preemption frees goes to
// the work the wait holds. A preempted sandbox is allowed in the gate's
// decision until its action has ended, so a frozen victim is thawed and
// its kill lands (v1's freezer holds a SIGKILL until the thaw).
//
// Tried, not adopted: admitting no action while the hold waits (what a
// preemption frees went to light actions of older attempts admitted into
// the margin, not to the stuck grower: swe-real at 1 GiB without swap,
// seed 1, 157.3 -> 139.6 s), and rolling back again an action rolled
// back once where the hold would preempt its attempt (129.8 s with both).
// Over six seeds of swe-real (1 and 1.5 GiB, with and without swap: 24
// runs) they lost, summed makespan 2639 s against 2703 (no admission),
// 2668 (rollback) and 2660 s (both); over traces-sim's 72 runs (v1, no
// swap, v2) no admission moved it by +0.3, -1.2 and -1.4 %, both
// together by +0.3, -1.1 and -1.6 % (the second rollback alone was not
// run there).
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
	// Idle: Agent's attempt runs no action (a model wait, or its next
	// action waits for admission); the host destroys Sandbox and
	// restarts the attempt (idleVictim).
	Idle bool
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

// SetHoldPreemptIdle tells the machine that the host also ends and
// restarts an attempt that runs no action (its agent waits for the model,
// for admission or for a page-in) when the hold preempts it
// (Preemption.Idle): it destroys the attempt's sandbox at once. Without it
// the hold preempts only running actions (SetHoldPreempt, which this
// needs).
func (m *Machine) SetHoldPreemptIdle() {
	if m.preempt {
		m.preemptIdle = true
	}
}

// holdVictim returns the attempt the hold would preempt now, in the wait
// that began at since, or nil: among the attempts that run an action,
// started before the wait and are not preempted yet, never the
// first-started running one, the one whose sandbox is stuck at the limit
// with the least time since its attempt started per byte it holds at the
// last sample (the latest started of equal ones), or, with none, the one
// that started last whose sandbox is frozen.
func (m *Machine) holdVictim(now, since time.Time) *agentState {
	run := m.runningSandboxes()
	var stuck, frozen *agentState
	var best float64 // stuck's work lost per byte
	first := true
	for _, a := range m.started { // in start order
		if !run[a.sandbox] || a.act == nil {
			continue
		}
		if !first && !m.preempted[a.sandbox] && !a.start.After(since) {
			switch {
			case m.stuck(a.sandbox):
				lost := float64(now.Sub(a.start)) / float64(max(m.rest.seen[a.sandbox].mem, 1))
				if stuck == nil || lost <= best {
					stuck, best = a, lost
				}
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

// idleVictim returns the attempt the hold preempts when no running one
// qualifies (holdVictim is nil) and the wait would otherwise be released,
// or nil: among the attempts that started before the wait began at since,
// run no action and whose sandbox holds memory at the last sample, never
// the first-started attempt of all, the one that started last among those
// whose sandbox holds what the stuck actions are short of (stuckNeed less
// what is free), or, with none, the one that started last; none where all
// of them together hold less than that. Taking the youngest whatever it
// held (tried first) preempted sandboxes of a few MiB that freed nothing
// that mattered, each restarting a workflow 50-60 actions long; taking
// the one holding the most when none holds enough lost more work still
// (the real traces three times at 512 MiB in the simulator, six runs:
// 31667 and 33711 s summed against 31473 s), and so did the one losing
// the least work per byte, as holdVictim chooses (haiku and batch18
// three times at 512 MiB without swap: 5817 -> 6000 s and 6281 -> 6465 s,
// P50 +15 % and +14 %; no other of the 288 runs of holdVictim's grid
// changed).
//
// A deadlock in which nothing runs that could be preempted is one of idle
// sandboxes: their floors (page cache, what tools left behind; on v1 and
// v2 with swap, their compressed copies) fill the budget while one
// action, alone at the limit, needs more than is left. Releasing the hold
// then hands the OOM killer the largest sandbox, often an idle one, and
// on v2 often several. In the simulator on the real traces three times
// at 512 MiB (bench/traces-robust.sh) that was most of the OOM kills left:
// batch18 without swap lost six idle sandboxes to one release.
// Preempting an idle attempt instead costs no kill, and its restart waits
// for agent pacing like any new attempt (the host ends it: an attempt
// preempted idle is never chosen again). The first-started attempt is
// never the victim, so the oldest work goes on; where it is idle and no
// other idle attempt holds memory, the victim is the one running attempt
// (holdVictim spares it) if it is stuck or frozen and nothing else runs:
// the deadlock is then between the two, and the older goes on (idle
// false), on v1 only: there a release is a kill. On v2 it lets the
// action grow to memory.max, which a prediction cannot rule out: on v2 at
// 4 GiB with batch18 twice, a 3.5 GiB action alone at the line, predicted
// to need more than was free, was preempted twice where a release had let
// it finish (makespan 1029 -> 1379 s). With others running, one of them
// may end and free memory.
//
// Except on v2 where the wait follows a release within the hold's
// timeout and the stuck actions took more than half of what that release
// left free below memory.max (relAvail, the available memory then, less
// twice what is available now, is positive): as much again would not
// fit, and the next release is the OOM killer's. The wait is then short
// of that difference at least, and its victims are v1's, the running one
// included. In the simulator on batch18 three times at 512 MiB on v2 a
// build past its 375 MiB reservation was released three times, with 63,
// 25 and 2 MiB free, and the third release was a kill; with the rule the
// running attempt is preempted instead (the idle one beside it is the
// first-started): no kill, makespan 4072 -> 4313 s, P50 unchanged. No
// other of the 120 runs of the grid (traces-sim.md's 72, traces-robust's
// 48) changed; haiku three times at 512 MiB on v2 keeps its kill, at a
// first release.
func (m *Machine) idleVictim(since time.Time, avail int64) (victim *agentState, idle bool) {
	run := m.runningSandboxes()
	short := m.stuckNeed(run) - avail
	// v2, back at the limit after a release: the stuck actions took what
	// the release left free; as much again would not fit.
	regrown := false
	if m.freeze != nil && m.relAvail >= 0 && !since.After(m.relAt.Add(m.hold.Timeout)) {
		if more := m.relAvail - 2*avail; more > 0 {
			regrown, short = true, max(short, more)
		}
	}
	if m.freeze != nil && short <= 0 {
		return nil, false // v2: a release lets them grow into what is free below memory.max
	}
	var running, youngest *agentState
	var total int64
	for i, a := range m.started { // in start order
		if i == 0 || a.sandbox == "" || a.start.After(since) || m.preempted[a.sandbox] || a.idleCut {
			continue
		}
		if run[a.sandbox] {
			if running == nil && a.act != nil && (m.stuck(a.sandbox) || m.rest.seen[a.sandbox].frozen) {
				running = a
			}
			continue
		}
		s, ok := m.rest.seen[a.sandbox]
		if !ok || s.mem <= 0 || !m.preemptIdle {
			continue
		}
		if s.mem >= short {
			victim = a
		}
		youngest = a
		total += s.mem
	}
	switch {
	case total < short: // all of them would not do
	case victim != nil:
		return victim, true
	case youngest != nil:
		return youngest, true
	}
	if running != nil && len(run) == 1 && !run[m.started[0].sandbox] && (m.freeze == nil || regrown) {
		return running, false
	}
	return nil, false
}

// stuckNeed is what the admitted actions stuck at the limit or held by
// the freezing hold are predicted to still need: each one's predicted
// peak (or what admission charged it, the larger) above its sandbox's
// memory before it, less what it holds now (none for one past its
// prediction). On v2 the hold waits at memory.high, an eighth below
// memory.max; where this fits in what is free below memory.max, a release
// lets the waiters grow into it, and preempting an attempt would throw
// its work away for nothing. In the simulator on haiku twice at 2 GiB it
// did, in all six arrival orders, when an idle victim was taken whatever
// the release would do: after the hold rolled back one of two 1.8 GiB
// test runs, the other needed 194 MiB with 255 MiB free, the victims held
// 5 and 19 MiB, and the first one's restart took its workflow 500 s
// longer. The gate's projected demand (tried as the need too) is no
// guide: batch18 twice at 4 GiB, a 3.5 GiB action projected to need
// 629 MiB with 511 MiB free was preempted three times where the release
// had let it finish. On v1 the hold waits at the hard limit: a release is
// a kill. Counting an action past its prediction as still needing
// admission's margin (v2 only) took away the three OOM kills of batch18
// three times at 512 MiB on v2 (bench/traces-robust.sh: a 407 MiB build
// past its prediction, released beside 88 MiB of idle floors) but, over
// the six arrival orders of batch18 twice at 4 GiB on v2 (traces-sim.md's
// grid), gave 28 action timeouts, 2 unfinished workflows and the four
// other orders 1.8-4.2 times the makespan: idle victims preempted for a
// 3.5 GiB action whose real need was 0. Dropped.
func (m *Machine) stuckNeed(run map[string]bool) int64 {
	var need int64
	for _, a := range m.started {
		if !run[a.sandbox] || !m.stuck(a.sandbox) || a.admIdx < 0 {
			continue
		}
		if s, ok := m.rest.seen[a.sandbox]; ok {
			need += max(0, a.before+max(a.peak, a.charge)-s.mem)
		}
	}
	return need
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
