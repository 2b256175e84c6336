package policy

import (
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// The OOM hold's progress signal. The hold is released once tasks have
// waited its timeout with nothing progressing. A sandbox that uses CPU
// progresses, unless it is stalled on memory (Machine.progressed); so does
// one resting at its peak: it runs an action, is not frozen (by the gate
// or the freezing hold), its footprint has been flat
// since before the wait began, and it is not stalled on memory. Such a
// sandbox is a tool sleeping at its peak (a test run waiting for I/O or a
// timer, memtool's hold phase): it uses no CPU, yet its action will end and
// free its memory, which is what the waiters wait for. Counting CPU alone
// made the hold release (and the OOM killer kill a sandbox at its peak)
// 2-3 s into a wait that would have ended when the sleeper exited.
//
// A sandbox stuck at the limit looks the same by CPU and footprint; the
// kernel tells them apart. The stuck one has a thread in uninterruptible
// sleep (gate.Sample.Blocked: state D, as v1's OOM wait and v2's
// memory.high throttling sleep, where a tool sleeping in nanosleep or on a
// pipe is in S), and on v2 its own memory.pressure "some" total advances
// (gate.Sample.MemStall: direct reclaim and throttling both count). So
// where the backend reports its threads' states, a sandbox rests when none
// is blocked, its stall total did not advance, and its footprint has not
// grown by restGrowth for restLead periods (one that is still growing, or
// reached its peak a moment ago, does not count yet). A sleeper waiting
// on a disk is in D too and does not count: the hold then times out as it
// did with CPU alone. Where the backend cannot tell (Blocked < 0: docker),
// the growth history decides alone: the stuck one grew into the limit, in
// the periods just before the wait began or during it (by restGrowth over
// a period or in total since the wait began); a sandbox that rested at its
// peak and then, during the wait, asks for one page more waits with no
// growth and still counts as resting, and the hold waits until
// HoldMaxWait or until another sandbox ends.
//
// A sandbox whose action has no process left but its init (gate.Sample.
// Procs is 1) does not rest either: its action ended and its result is
// on the way, so it frees nothing more by waiting, and at the v1 budget
// the executor's write of that result can itself wait for memory (a
// socket's buffers are kernel memory charged to the held domain, and
// such a charge fails at the limit instead of waiting: the executor
// retries it, sleeping, heldio_linux.go). Counted as resting it kept the
// hold waiting for it while it waited for the hold: live, until the
// action's timeout (60-120 s).
//
// A frozen sandbox (gate.Sample.Frozen) does not rest: it cannot end its
// action while frozen. Whether it is stuck on memory depends on who froze
// it. One the policy froze (the gate's denial or the freezing hold, at the
// previous step) waits for the policy, not for memory: it is not stalled,
// so it is no preemption victim, and the gate's denial of it may be
// lifted (thawResting). One frozen that the policy let run waits for
// memory: residency paged it out and cannot page it back in until memory
// frees (residency.ErrThawDeferred), so it counts as stalled, as the
// simulator's sandbox waiting to fault its memory back in does. Before
// backends told frozen threads apart (since Linux 6.1 the v1 freezer's
// threads report state D), every sandbox the gate froze looked stuck on
// memory: thawResting never lifted a denial live on v1, and a frozen
// sandbox could be preempted.

// restLead is how many periods a sandbox's footprint must be flat (before
// the wait began, where the growth history decides alone) for it to rest
// at its peak rather than to have run into the limit.
const restLead = 2

// restGrowth is the growth over one period, or since the wait began, that
// marks a sandbox as growing rather than resting: a page, far below
// HoldGrowth, since taking a grower for a rester delays the release while
// the reverse only keeps today's timeout.
const restGrowth = 4 << 10

// restSeen is what the signal remembers of one sandbox.
type restSeen struct {
	mem     int64         // footprint at the previous sample
	base    int64         // footprint when the current wait began (or when first seen in it)
	grew    time.Time     // last sample at which it grew by restGrowth since the previous one
	stall   time.Duration // its memory stall total at the previous sample
	stalled bool          // a thread blocked, the stall total advanced since the previous sample, or frozen though the policy let it run
	frozen  bool          // its cgroup is frozen (gate.Sample.Frozen)
	known   bool          // the backend reports its threads' states (Blocked >= 0)
	ended   bool          // nothing but its init runs (Procs 1): an action has ended, its result not yet received
}

// holdRest tracks the sandboxes for the signal.
type holdRest struct {
	now  time.Time // the latest sample
	seen map[string]restSeen
}

// observe records one sample at now; waiting is whether the hold was
// already waiting before this sample (bases are kept through a wait), and
// froze whether the policy froze a sandbox at the previous step.
func (r *holdRest) observe(now time.Time, smp []gate.Sample, waiting bool, froze func(id string) bool) {
	prev := r.seen
	r.now, r.seen = now, make(map[string]restSeen, len(smp))
	for _, s := range smp {
		p, ok := prev[s.ID]
		cur := restSeen{mem: s.Footprint, base: s.Footprint, stall: s.MemStall,
			stalled: s.Blocked > 0 || s.Frozen && !froze(s.ID), frozen: s.Frozen,
			known: s.Blocked >= 0, ended: s.Ended()}
		if ok {
			cur.grew = p.grew
			if s.Footprint-p.mem >= restGrowth {
				cur.grew = now
			}
			cur.stalled = cur.stalled || s.MemStall > p.stall
			if waiting {
				cur.base = p.base
			}
		}
		r.seen[s.ID] = cur
	}
}

// resting reports whether sandbox id rests at its peak during the wait that
// began at since (period: the gate's control period): it must also run an
// action and not be frozen, which the caller knows.
func (r *holdRest) resting(id string, since time.Time, period time.Duration) bool {
	s, ok := r.seen[id]
	switch {
	case !ok || s.stalled || s.ended || s.frozen:
		return false
	case s.known:
		return s.grew.IsZero() || s.grew.Before(r.now.Add(-restLead*period))
	case s.mem-s.base >= restGrowth:
		return false
	}
	return s.grew.IsZero() || s.grew.Before(since.Add(-restLead*period))
}

// anyResting returns a sandbox that runs an action (admitted, with
// admission), was not frozen at the last gate step and rests at its peak
// in the wait that began at since (the first in start order), "" when
// none does.
func (m *Machine) anyResting(since time.Time) string {
	for _, a := range m.started {
		if m.runsAction(a) && !slices.Contains(m.frozen, a.sandbox) && m.rest.resting(a.sandbox, since, m.cfg.GateConfig.Period) {
			return a.sandbox
		}
	}
	return ""
}

// While tasks wait under the hold, the gate's denial of a sandbox that
// rested at its peak before it was denied is lifted (thawResting): a
// sleeper held frozen can never finish and free what the waiters wait
// for, and under the hold it cannot take the domain past the budget
// either (v1's oom_kill_disable makes an allocation wait; on v2 the
// freezing hold freezes it again once it grows). The gate's estimate of a
// sandbox frozen right after its ramp stays at the ramp's rate (a frozen
// sandbox gives no new interval), so in red it would stay denied while
// the hold timed out and the OOM killer took the largest sandbox, often
// that sleeper. A sandbox the freezing hold holds stays frozen.

// runningSandboxes is the set of sandboxes running an action (admitted,
// with admission).
func (m *Machine) runningSandboxes() map[string]bool {
	run := make(map[string]bool, len(m.started))
	for _, a := range m.started {
		if m.runsAction(a) {
			run[a.sandbox] = true
		}
	}
	return run
}

// runsAction reports whether started agent a's sandbox runs an action
// (admitted, with admission).
func (m *Machine) runsAction(a *agentState) bool {
	return a.act != nil && a.sandbox != "" && (m.adm == nil || a.admIdx >= 0)
}

// thawResting allows, in the gate's decision d, every denied sandbox that
// runs an action, is not held by the freezing hold, is not stalled and
// had been flat for restLead periods when the gate denied it; it returns
// how many of them it did not allow the period before.
func (m *Machine) thawResting(d *gate.Decision) int {
	run := m.runningSandboxes()
	prev := m.lifted
	m.lifted = map[string]bool{}
	n := 0
	for i := range d.Sandboxes {
		sd := &d.Sandboxes[i]
		if sd.Allowed || !run[sd.ID] || m.freeze != nil && slices.Contains(m.freeze.held, sd.ID) {
			continue
		}
		s, ok := m.rest.seen[sd.ID]
		denied, wasDenied := m.deniedAt[sd.ID]
		if !ok || s.stalled || !wasDenied || !s.grew.IsZero() && !s.grew.Before(denied.Add(-restLead*m.cfg.GateConfig.Period)) {
			continue
		}
		allow(d, sd)
		m.lifted[sd.ID] = true
		if !prev[sd.ID] {
			n++
		}
	}
	return n
}

// noteDenied remembers since when each sandbox denied in d has been
// denied.
func (m *Machine) noteDenied(now time.Time, d gate.Decision) {
	next := make(map[string]time.Time, len(d.Denied))
	for _, id := range d.Denied {
		if t, ok := m.deniedAt[id]; ok {
			next[id] = t
		} else {
			next[id] = now
		}
	}
	m.deniedAt = next
}
