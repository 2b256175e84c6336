package sim

import (
	"reflect"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// runHeld runs cfg with the domain's OOM hold armed at timeout (0: off),
// at most maxWait while other sandboxes progress (0: timeout), and stepped
// every gate period, whatever the policy: the host's hold
// without the gate's freezing, so that the outcome is the host's alone.
// It fails the test if usage ever exceeds the budget or the accounting
// does not balance.
func runHeld(t *testing.T, cfg Config, timeout, maxWait time.Duration) *Result {
	t.Helper()
	observe := cfg.Observe
	cfg.Observe = func(a Accounting) {
		if observe != nil {
			observe(a)
		}
		if a.Used != a.Allocated-a.Freed || a.Used != a.Resident || a.Used > a.Budget {
			t.Fatalf("t=%v: used %d, allocated-freed %d, resident %d, budget %d", a.T, a.Used, a.Allocated-a.Freed, a.Resident, a.Budget)
		}
	}
	s, err := newSim(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if timeout > 0 {
		pc := s.m.Config()
		pc.Hold, pc.HoldMaxWait = timeout, max(maxWait, timeout)
		if s.m, err = policy.NewMachine(pc); err != nil {
			t.Fatal(err)
		}
		if cfg.V2 {
			s.m.SetHoldFreeze()
		}
		s.armed = true
		s.q.push(&event{t: 0, kind: evGateSample})
	}
	r, err := s.run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOOMHold(t *testing.T) {
	// a holds 300 MiB from t=0.1 s to 10.1 s; b ramps 200 MiB over 1 s from
	// t=1.1 s. The 400 MiB domain is full at t=1.6 s: without the hold the
	// kernel kills a there (TestOOMKillsLargest); under it b waits until a
	// frees its memory or the hold is released.
	crowd := []trajectory.Workflow{
		wf("a", 0, memAction(0, 300, 0, 10)),
		wf("b", 1, memAction(0, 200, 1, 1)),
	}
	// c's sandbox (8 MiB) does not fit beside a's 390 MiB until t=5.1 s.
	creation := []trajectory.Workflow{
		wf("a", 0, memAction(0, 390, 0, 5)),
		wf("c", 1, memAction(0, 1, 0, 1)),
	}
	tests := []struct {
		name      string
		wfs       []trajectory.Workflow
		base      int64
		timeout   time.Duration
		maxWait   time.Duration // 0: timeout
		killed    string        // the workflow OOM-killed, "" for none
		killAt    time.Duration // when, ±150 ms (gate periods)
		lateID    string        // a workflow that must end after lateAfter
		lateAfter time.Duration
		released  int
		resolved  int
	}{
		{name: "off: the largest is killed at the crossing", wfs: crowd, killed: "a", killAt: 1600 * time.Millisecond},
		{name: "armed: the grower waits, no kill, resumes when a frees", wfs: crowd, timeout: time.Minute,
			lateID: "b", lateAfter: 11 * time.Second, resolved: 1},
		{name: "released after the timeout: the largest is killed", wfs: crowd, timeout: 2 * time.Second,
			killed: "a", killAt: 3700 * time.Millisecond, released: 1},
		{name: "others progressing: the hold outlasts its timeout, no kill", wfs: crowd, timeout: 2 * time.Second, maxWait: 20 * time.Second,
			lateID: "b", lateAfter: 11 * time.Second, resolved: 1},
		{name: "others progressing: released at the longest wait", wfs: crowd, timeout: 2 * time.Second, maxWait: 5 * time.Second,
			killed: "a", killAt: 6600 * time.Millisecond, released: 1},
		{name: "armed: a creation waits for its base memory", wfs: creation, base: 8 * tMiB, timeout: time.Minute,
			lateID: "c", lateAfter: 6 * time.Second, resolved: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runHeld(t, Config{Workflows: tc.wfs, Policy: mustSpec(t, "eager"), Budget: 400 * tMiB,
				Create: DefaultCreate, SandboxBase: tc.base}, tc.timeout, tc.maxWait)
			wantOOM := 0
			if tc.killed != "" {
				wantOOM = 1
			}
			if r.OOMEvents != wantOOM || r.HoldsReleased != tc.released || r.HoldsResolved != tc.resolved {
				t.Fatalf("OOM %d released %d resolved %d; want %d, %d, %d", r.OOMEvents, r.HoldsReleased,
					r.HoldsResolved, wantOOM, tc.released, tc.resolved)
			}
			if tc.timeout > 0 && (r.Holds != tc.released+tc.resolved || r.HoldWaits == 0 || r.HoldTime <= 0) {
				t.Fatalf("holds %d waits %d held %v", r.Holds, r.HoldWaits, r.HoldTime)
			}
			for _, w := range r.Workflows {
				switch {
				case w.ID == tc.killed:
					if w.Completed || w.OOMs != 1 || w.End < tc.killAt-150*time.Millisecond || w.End > tc.killAt+150*time.Millisecond {
						t.Fatalf("%s: %+v, want killed at %v", w.ID, w, tc.killAt)
					}
				case !w.Completed || w.OOMs != 0:
					t.Fatalf("%s: %+v, want completed without a kill", w.ID, w)
				case w.ID == tc.lateID && w.End <= tc.lateAfter:
					t.Fatalf("%s ended at %v: it did not wait (want after %v)", w.ID, w.End, tc.lateAfter)
				}
			}
			if r.PeakBytes > 400*tMiB {
				t.Fatalf("peak %d above the budget", r.PeakBytes)
			}
		})
	}
}

func TestOOMHoldFrozenWaiterStaysPaused(t *testing.T) {
	// A waiter the gate freezes stays waiting; memory freed meanwhile ends
	// its wait, but it goes on only once thawed.
	s, err := newSim(Config{Workflows: []trajectory.Workflow{wf("a", 0, memAction(0, 10, 1, 1))},
		Budget: 400 * tMiB})
	if err != nil {
		t.Fatal(err)
	}
	s.armed = true
	p := profileOf(memAction(0, 100, 1, 1))
	sb := &sandbox{id: "s", state: sbLive, act: &p, activeIdx: -1, allIdx: -1}
	s.h.add(sb)
	s.h.setActive(sb, 0, true)
	s.now = 500 * time.Millisecond
	s.wait(sb, 0)
	s.freeze(sb)
	if !s.underOOM() || sb.activeIdx >= 0 {
		t.Fatalf("under_oom %v active %v, want a paused waiter", s.underOOM(), sb.activeIdx >= 0)
	}
	s.wakeWaiters() // 350 MiB free
	if s.underOOM() || sb.activeIdx >= 0 {
		t.Fatalf("after memory was freed: under_oom %v active %v, want no wait and still frozen", s.underOOM(), sb.activeIdx >= 0)
	}
	s.thaw(sb)
	if sb.activeIdx < 0 || sb.progress != 500*time.Millisecond {
		t.Fatalf("thawed: active %v progress %v", sb.activeIdx >= 0, sb.progress)
	}
}

func TestOOMHoldPolicies(t *testing.T) {
	// The gate policies arm the hold as live (policy.Config.Hold), the
	// others do not; a run is the same twice for a seed.
	wfs := generated(t, 16, 3)
	preds := predsFor(t, "swe16", wfs)
	tests := []struct {
		pol      string
		hold     time.Duration
		wantHold bool
	}{
		{"gate", 0, true},
		{"tenon", 0, true},
		{"gate", -1, false},
		{"tenon-no-gate", 0, false},
		{"eager", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.pol+"/hold="+tc.hold.String(), func(t *testing.T) {
			run := func() *Result {
				cfg := Config{Workflows: wfs, Policy: mustSpec(t, tc.pol), Budget: 1024 * tMiB, Retries: 5,
					Create: DefaultCreate, Teardown: DefaultTeardown, Rematerialize: DefaultRematerialize,
					SandboxBase: 4 * tMiB, Predictors: preds, Hold: tc.hold}
				s, err := newSim(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if armed := s.m.HoldArmed(); armed != tc.wantHold {
					t.Fatalf("hold armed %v, want %v", armed, tc.wantHold)
				}
				r, err := s.run(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				r.Wall, r.GateStepWall = 0, 0
				return r
			}
			a, b := run(), run()
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("two runs differ: makespan %v vs %v, events %d vs %d, holds %d vs %d",
					a.Makespan, b.Makespan, a.Events, b.Events, a.Holds, b.Holds)
			}
			if !tc.wantHold && (a.Holds != 0 || a.HoldWaits != 0) {
				t.Fatalf("holds %d waits %d without the hold", a.Holds, a.HoldWaits)
			}
			if tc.pol == "gate" && tc.wantHold && (a.Holds == 0 || a.HoldWaits == 0) {
				t.Fatalf("the gate alone never held: holds %d waits %d (OOM %d, timeouts %d)", a.Holds, a.HoldWaits, a.OOMEvents, a.Timeouts)
			}
			if a.Holds != a.HoldsResolved+a.HoldsReleased && a.Holds != a.HoldsResolved+a.HoldsReleased+1 {
				t.Fatalf("holds %d, resolved %d + released %d (+1 open at the end at most)", a.Holds, a.HoldsResolved, a.HoldsReleased)
			}
			if a.OOMEvents < a.HoldsReleased {
				t.Fatalf("%d releases but %d OOM kills: every release kills", a.HoldsReleased, a.OOMEvents)
			}
		})
	}
}

func TestThawStartsActionAdmittedWhilePaged(t *testing.T) {
	// An action admitted while its sandbox is paged out and frozen waits
	// for the page-in (phPagingIn); a thaw that faults the memory back
	// starts it, or nothing ever would.
	s, ag, sb := pagedFrozen(t)
	if !sb.paged {
		t.Fatal("setup: the sandbox is not paged out")
	}
	ag.phase = phPagingIn
	s.pagingIn = append(s.pagingIn, ag)
	s.thaw(sb)
	handleAll(s, evThawed)
	s.retryPagingIn()
	if ag.phase != phRunning || sb.act == nil || sb.activeIdx < 0 {
		t.Fatalf("after the thaw: phase %d, action %v, active %v; want its action running", ag.phase, sb.act != nil, sb.activeIdx >= 0)
	}
}

// TestThawDuringPageInStartsOnce: an action admitted while its sandbox is
// paged out and frozen starts that sandbox's page-in (an evPagedIn is
// pending); a thaw before the page-in is done must leave the start to it.
// Starting it at the thaw too ran the action twice (found on the haiku
// traces at the live time scale: "already has action 26 outstanding", or
// a nil sandbox when the first run had ended).
func TestThawDuringPageInStartsOnce(t *testing.T) {
	s, ag, sb := pagedFrozen(t)
	s.start(ag) // admitted: it fits, so its page-in starts
	if ag.phase != phPagingIn || sb.paged || !ag.faulting {
		t.Fatalf("setup: phase %d, paged %v, faulting %v; want the page-in under way", ag.phase, sb.paged, ag.faulting)
	}
	s.thaw(sb)
	if sb.act != nil {
		t.Fatal("the thaw started the action while its page-in was under way")
	}
	handleAll(s, evPagedIn)
	if ag.phase != phRunning || sb.act == nil || s.res.Actions != 1 {
		t.Fatalf("after the page-in: phase %d, action %v, %d actions started; want it running, started once", ag.phase, sb.act != nil, s.res.Actions)
	}
}

// pagedFrozen is a simulator with one agent whose live sandbox (30 MiB) is
// paged out and frozen, its action not started.
func pagedFrozen(t *testing.T) (*sim, *agent, *sandbox) {
	t.Helper()
	s, err := newSim(Config{Workflows: []trajectory.Workflow{wf("a", 0, memAction(0, 10, 1, 1))},
		Budget: 400 * tMiB})
	if err != nil {
		t.Fatal(err)
	}
	ag := s.agents[0]
	sb := &sandbox{id: "s", ag: ag, state: sbLive, activeIdx: -1, allIdx: -1, floor: 30 * tMiB}
	ag.sb = sb
	s.h.add(sb)
	s.h.setMem(sb, sb.floor)
	s.pageOut(sb)
	s.freeze(sb)
	return s, ag, sb
}

// handleAll pops every queued event and handles those of kind, in time
// order, at their time.
func handleAll(s *sim, kind evKind) {
	for s.q.len() > 0 {
		ev := s.q.pop()
		if ev.kind != kind {
			continue
		}
		s.now = ev.t
		s.handle(ev)
	}
}

// TestBlockedPageInThawedBecomesReady: an agent whose page-in was blocked
// (red pressure) waits with the blocked rematerializations; when a thaw
// faults its frozen sandbox back meanwhile, the retry readies its action in
// that sandbox. It created a second sandbox instead, and the first stayed
// live with its memory to the end of the run (found on haiku at 2 GiB: a
// 189 MiB sandbox no agent owned for 1250 s, then an OOM kill).
func TestBlockedPageInThawedBecomesReady(t *testing.T) {
	s, ag, sb := pagedFrozen(t)
	if _, err := s.m.Submit(s.clock(), ag.wf.ID, 1, ag.wf, s); err != nil {
		t.Fatal(err)
	}
	ag.attempt, ag.phase = 1, phBlocked
	s.blocked = append(s.blocked, ag)
	s.thaw(sb)
	handleAll(s, evThawed)
	if sb.paged || sb.frozen {
		t.Fatalf("setup: paged %v frozen %v after the thaw", sb.paged, sb.frozen)
	}
	s.retryBlocked()
	if ag.sb != sb || len(s.h.all) != 1 || ag.nSandbox != 0 {
		t.Fatalf("after the retry: the agent's sandbox changed (%d live, %d created); want it in the thawed one", len(s.h.all), ag.nSandbox)
	}
	if ag.phase != phRunning && ag.phase != phAdmission {
		t.Fatalf("after the retry: phase %d, want its action admitted or waiting for admission", ag.phase)
	}
}

// TestThawThatDoesNotFitIsBlocked: a paged-out frozen sandbox the gate lets
// run stays frozen while its memory does not fit back, and reports a
// blocked task (a live one faults its pages in and sleeps in the kernel at
// the limit). Reported as not blocked, it looked like one resting at its
// peak and the OOM hold counted it as progress forever.
// The memory is another sandbox's running action: its pages are hot, the
// kernel does not swap them (TestThawSwapsColdSandboxes).
func TestThawThatDoesNotFitIsBlocked(t *testing.T) {
	s, _, sb := pagedFrozen(t)
	p := profileOf(memAction(0, 10, 1, 1))
	other := &sandbox{id: "t", ag: s.agents[0], state: sbLive, activeIdx: -1, allIdx: -1, floor: 390 * tMiB, act: &p}
	s.h.add(other)
	s.h.setMem(other, other.floor)
	s.thaw(sb)
	if !sb.frozen || !sb.paged {
		t.Fatalf("setup: frozen %v paged %v; want it kept frozen and paged out (its memory does not fit)", sb.frozen, sb.paged)
	}
	if got := s.blockedTasks(sb); got != 1 {
		t.Fatalf("blocked tasks %d while its thaw waits for memory, want 1", got)
	}
	s.h.setMem(other, 0)
	s.thaw(sb)
	handleAll(s, evThawed)
	if sb.frozen || s.blockedTasks(sb) != 0 {
		t.Fatalf("after a thaw that fits: frozen %v, blocked tasks %d; want it running, 0", sb.frozen, s.blockedTasks(sb))
	}
}

// TestThawSwapsColdSandboxes: a paged-out frozen sandbox the gate lets run
// at the limit faults its pages back as the kernel would, by swapping out
// the coldest memory of the domain, that of sandboxes that run nothing (the
// largest first, only as much as it needs); without swap it stays frozen.
// Before, it waited for memory nobody would free (on batch18 at 768 MiB on
// pure v2, 1600 s while frozen growers and admitted actions waited).
func TestThawSwapsColdSandboxes(t *testing.T) {
	for _, swapOff := range []bool{false, true} {
		s, _, sb := pagedFrozen(t)
		s.cfg.Swap.Off = swapOff
		var cold []*sandbox
		for i, mem := range []int64{150, 220, 20} { // 390 MiB, run nothing
			o := &sandbox{id: string(rune('t' + i)), ag: s.agents[0], state: sbLive, activeIdx: -1, allIdx: -1, floor: mem * tMiB}
			s.h.add(o)
			s.h.setMem(o, o.floor)
			cold = append(cold, o)
		}
		s.thaw(sb)
		handleAll(s, evThawed)
		if swapOff {
			if !sb.frozen || !sb.paged || cold[0].paged || cold[1].paged || cold[2].paged {
				t.Fatalf("without swap: frozen %v paged %v, others paged %v %v %v; want it waiting, nothing swapped",
					sb.frozen, sb.paged, cold[0].paged, cold[1].paged, cold[2].paged)
			}
			continue
		}
		if sb.frozen || sb.paged {
			t.Fatalf("frozen %v paged %v after the thaw; want it running, its memory back", sb.frozen, sb.paged)
		}
		if !cold[1].paged || cold[0].paged || cold[2].paged {
			t.Fatalf("swapped out %v %v %v (150, 220, 20 MiB); want only the 220 MiB one", cold[0].paged, cold[1].paged, cold[2].paged)
		}
		if s.h.used > s.cfg.Budget {
			t.Fatalf("used %d MiB over the budget %d MiB", s.h.used>>20, s.cfg.Budget>>20)
		}
	}
}

// TestHoldWaitsForTheLongestAction: a sandbox held at the budget waits for
// another's action that progresses for ten minutes, longer than the hold's
// default bound (HoldMaxWait: 100 times its 3 s timeout); with the action
// timeout of the workload (ten times its longest action) the hold waits it
// out and nothing is killed, without it the bound hands the OOM killer a
// wait that was about to resolve.
func TestHoldWaitsForTheLongestAction(t *testing.T) {
	wfs := []trajectory.Workflow{
		wf("long", 0, memAction(0, 250, 1, 600)),
		wf("late", 5, memAction(0, 200, 5, 1)),
	}
	run := func(timeout time.Duration) *Result {
		t.Helper()
		r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, "gate"), Budget: 400 * tMiB,
			SandboxBase: 4 * tMiB, ActionTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(0); r.OOMEvents == 0 {
		t.Fatalf("setup: without an action timeout no OOM kill (holds %d, released %d); the case does not outlast the hold's bound", r.Holds, r.HoldsReleased)
	}
	r := run(6010 * time.Second)
	if r.OOMEvents != 0 || r.HoldsReleased != 0 || r.Completed != len(wfs) || r.Timeouts != 0 {
		t.Fatalf("with a 6010 s action timeout: %d OOM kills, %d holds released, %d timeouts, %d of %d done; want none killed, all done",
			r.OOMEvents, r.HoldsReleased, r.Timeouts, r.Completed, len(wfs))
	}
}

// TestWaitingPageInIsBlocked: a sandbox whose admitted action waits for
// room to fault its paged-out memory back reports a blocked task, so the
// OOM hold does not take it for one resting at its peak (progress) and
// waits until an action times out; once its page-in is under way, or
// the action runs, it does not.
func TestWaitingPageInIsBlocked(t *testing.T) {
	s, ag, sb := pagedFrozen(t)
	sb.frozen = false // paged out by the kernel's reclaim, not frozen
	if got := s.blockedTasks(sb); got != 0 {
		t.Fatalf("idle and paged out: blocked %d, want 0", got)
	}
	ag.phase = phPagingIn // admitted; no room to fault back yet
	s.pagingIn = append(s.pagingIn, ag)
	if got := s.blockedTasks(sb); got != 1 {
		t.Fatalf("admitted, waiting for its page-in: blocked %d, want 1", got)
	}
	s.retryPagingIn() // it fits: the page-in starts
	if !ag.faulting || s.blockedTasks(sb) != 0 {
		t.Fatalf("page-in under way (faulting %v): blocked %d, want 0", ag.faulting, s.blockedTasks(sb))
	}
}
