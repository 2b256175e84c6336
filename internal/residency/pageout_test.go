package residency

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/policy"
)

// pagingEnv is an env whose host can page out, with the tier on unless
// mod turns it off.
func pagingEnv(t *testing.T, mod func(*Config)) (*env, *fakePager) {
	t.Helper()
	var p *fakePager
	e := newEnvWith(t, func(c *Config) {
		c.Policy.PageOut = true
		if mod != nil {
			mod(c)
		}
	}, func(h *fakeHost) Host { p = newFakePager(h); return p })
	return e, p
}

// pinnedAgent leaves agent a idle at a boundary that is not restart-safe
// (a background server lives) with working set ws; it returns its sandbox.
func pinnedAgent(t *testing.T, e *env, a string, ws int64) string {
	t.Helper()
	ctx := context.Background()
	e.host.workingSet[a] = ws
	id, err := e.m.Ensure(ctx, info(a))
	if err != nil {
		t.Fatal(err)
	}
	e.host.procs[a] = []ProcInfo{{PID: 42, Comm: "server"}}
	v, err := e.m.Boundary(ctx, a, clean)
	if err != nil || v.Restartable {
		t.Fatalf("Boundary = %+v, %v; want resident_only", v, err)
	}
	return id
}

func TestPageOutUnderRed(t *testing.T) {
	tests := []struct {
		name      string
		ratio     float64 // what the host reports; 0: unknown
		wantFrees int64
	}{
		{"host ratio", 0.25, 300<<20 - 75<<20},
		{"default ratio", 0, 300<<20 - int64(float64(300<<20)*DefaultCompressionRatio)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, p := pagingEnv(t, nil)
			p.ratio = tt.ratio
			id := pinnedAgent(t, e, "a", 300<<20)
			e.press.Store(int32(Red))
			ds := e.m.Tick()
			e.m.Wait()
			if len(ds) != 1 || ds[0].Kind != policy.ReclaimPageOut || ds[0].Frees != tt.wantFrees {
				t.Fatalf("decisions = %+v, want one page-out freeing %d", ds, tt.wantFrees)
			}
			if got := p.callLog(); !reflect.DeepEqual(got, []string{"out " + id}) {
				t.Errorf("host calls = %v", got)
			}
			if !p.isFrozen(id) || len(e.host.destroyed) != 0 {
				t.Errorf("frozen = %v, destroyed = %v; want frozen, none destroyed", p.isFrozen(id), e.host.destroyed)
			}
			evs := e.events.kinds(EventPageOut)
			if len(evs) != 1 || evs[0].Bytes != 240<<20 || evs[0].Freed != 270<<20 || evs[0].WorkingSet != 300<<20 {
				t.Errorf("page_out events = %+v", evs)
			}
			if mt := e.m.Metrics(); mt.PageOuts != 1 || mt.BytesPagedOut != 240<<20 || mt.Teardowns != 0 {
				t.Errorf("metrics = %+v", mt)
			}
			// Paged out already: the next tick pages nothing more.
			if ds := e.m.Tick(); len(ds) != 0 {
				t.Errorf("second tick decided %+v", ds)
			}
		})
	}
}

func TestEnsurePagesInBeforeAction(t *testing.T) {
	ctx := context.Background()
	e, p := pagingEnv(t, nil)
	id := pinnedAgent(t, e, "a", 300<<20)
	e.press.Store(int32(Red))
	e.m.Tick()
	e.m.Wait()
	e.press.Store(int32(Yellow)) // a demand page-in may run in yellow
	got, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	if got != id {
		t.Errorf("Ensure returned %s, want the same sandbox %s", got, id)
	}
	if calls := p.callLog(); !reflect.DeepEqual(calls, []string{"out " + id, "in " + id}) || p.isFrozen(id) {
		t.Errorf("host calls = %v, frozen = %v; want out, in, thawed", calls, p.isFrozen(id))
	}
	evs := e.events.kinds(EventPageIn)
	if len(evs) != 1 || evs[0].Bytes != 240<<20 || evs[0].Reason != "demand" {
		t.Errorf("page_in events = %+v", evs)
	}
	// The measured rate (240 MiB in 20 ms) replaces the prior.
	if c := e.m.pageInCost(240 << 20); c < 19*time.Millisecond || c > 21*time.Millisecond {
		t.Errorf("page-in cost of 240 MiB = %v, want 20ms", c)
	}
	// Busy: not paged out while its action runs.
	e.press.Store(int32(Red))
	if ds := e.m.Tick(); len(ds) != 0 {
		t.Errorf("tick with the action in flight decided %+v", ds)
	}
}

func TestNoPageOutWithTierOff(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T) (*env, *fakePager)
	}{
		{"tier off", func(t *testing.T) (*env, *fakePager) {
			return pagingEnv(t, func(c *Config) { c.Policy.PageOut = false })
		}},
		{"host cannot page", func(t *testing.T) (*env, *fakePager) {
			return newEnv(t, func(c *Config) { c.Policy.PageOut = true }), nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, p := tt.make(t)
			pinnedAgent(t, e, "a", 300<<20)
			e.press.Store(int32(Red))
			if ds := e.m.Tick(); len(ds) != 0 {
				t.Errorf("decisions = %+v, want none (not restart-safe, no page-out tier)", ds)
			}
			e.m.Wait()
			if p != nil && len(p.callLog()) != 0 {
				t.Errorf("host calls = %v", p.callLog())
			}
		})
	}
}

func TestPrefetchPagesIn(t *testing.T) {
	ctx := context.Background()
	e, p := pagingEnv(t, nil)
	id := pinnedAgent(t, e, "a", 64<<20)
	e.press.Store(int32(Red))
	e.m.Tick()
	e.m.Wait()
	e.press.Store(int32(Yellow))
	if e.m.Prefetch("a") {
		t.Error("predictive page-in started in yellow")
	}
	e.press.Store(int32(Green))
	if !e.m.Prefetch("a") {
		t.Fatal("predictive page-in refused in green")
	}
	e.m.Wait()
	if p.isFrozen(id) {
		t.Fatal("prefetch left the sandbox frozen")
	}
	if _, err := e.m.Ensure(ctx, info("a")); err != nil {
		t.Fatal(err)
	}
	if calls := p.callLog(); !reflect.DeepEqual(calls, []string{"out " + id, "in " + id}) {
		t.Errorf("host calls = %v; want one page-in, by the prefetch", calls)
	}
	if evs := e.events.kinds(EventPageIn); len(evs) != 1 || evs[0].Reason != "prefetch" {
		t.Errorf("page_in events = %+v", evs)
	}
}

func TestFailedPageOutThaws(t *testing.T) {
	e, p := pagingEnv(t, nil)
	p.outErr = errors.New("no process_madvise")
	id := pinnedAgent(t, e, "a", 64<<20)
	e.press.Store(int32(Red))
	e.m.Tick()
	e.m.Wait()
	if calls := p.callLog(); !reflect.DeepEqual(calls, []string{"out " + id, "in " + id}) || p.isFrozen(id) {
		t.Errorf("host calls = %v, frozen = %v; want out, in, thawed", calls, p.isFrozen(id))
	}
	if mt := e.m.Metrics(); mt.PageFailures != 1 || mt.PageOuts != 0 {
		t.Errorf("metrics = %+v", mt)
	}
	if len(e.events.kinds(EventPageOutFailed)) != 1 {
		t.Error("no page_out_failed event")
	}
}

// TestStalledPageOut: an agent whose action waits for admission (Stall)
// is paged out in red once it has stalled Policy.Stall, never torn down
// (it is restart-safe here) and never before that or outside red; Unstall
// pages it back in whatever the pressure.
func TestStalledPageOut(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e, p := pagingEnv(t, func(c *Config) { c.Clock, c.Policy.Stall = clk, time.Second })
	e.host.workingSet["a"] = 200 << 20
	id, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Boundary(ctx, "a", clean); err != nil { // restart-safe, idle
		t.Fatal(err)
	}
	if _, err := e.m.Ensure(ctx, info("a")); err != nil { // its next action: busy
		t.Fatal(err)
	}
	e.press.Store(int32(Red))
	if ds := e.m.Tick(); len(ds) != 0 {
		t.Fatalf("busy, not stalled: decided %+v", ds)
	}
	e.m.Stall("a")
	clk.Advance(500 * time.Millisecond)
	if ds := e.m.Tick(); len(ds) != 0 {
		t.Fatalf("stalled 0.5 s: decided %+v", ds)
	}
	clk.Advance(time.Second)
	e.press.Store(int32(Yellow))
	if ds := e.m.Tick(); len(ds) != 0 {
		t.Fatalf("stalled 1.5 s in yellow: decided %+v", ds)
	}
	e.press.Store(int32(Red))
	ds := e.m.Tick()
	e.m.Wait()
	if len(ds) != 1 || ds[0].Kind != policy.ReclaimPageOut {
		t.Fatalf("stalled 1.5 s in red: decided %+v, want one page-out", ds)
	}
	if !p.isFrozen(id) || len(e.host.destroyed) != 0 {
		t.Fatalf("frozen = %v, destroyed = %v; want paged out, not torn down", p.isFrozen(id), e.host.destroyed)
	}
	if err := e.m.Unstall(ctx, "a"); err != nil { // admitted, still red
		t.Fatal(err)
	}
	if calls := p.callLog(); !reflect.DeepEqual(calls, []string{"out " + id, "in " + id}) || p.isFrozen(id) {
		t.Errorf("host calls = %v, frozen = %v; want out, in, thawed", calls, p.isFrozen(id))
	}
	if ds := e.m.Tick(); len(ds) != 0 {
		t.Errorf("after Unstall the running action's sandbox was chosen: %+v", ds)
	}
}

// TestGateStalledPageOut: a sandbox the gate froze mid-action
// (StallSandbox) is paged out in red once stalled long enough, and
// UnstallSandbox pages it back in, reporting that it did; a sandbox that
// was not paged out reports nothing to do.
func TestGateStalledPageOut(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e, p := pagingEnv(t, func(c *Config) { c.Clock, c.Policy.Stall = clk, time.Second })
	e.host.workingSet["a"] = 200 << 20
	id, err := e.m.Ensure(ctx, info("a")) // its action runs: busy
	if err != nil {
		t.Fatal(err)
	}
	e.m.StallSandbox(id)
	if paged, err := e.m.UnstallSandbox(ctx, id); paged || err != nil {
		t.Fatalf("UnstallSandbox before any page-out = %v, %v; want false, nil", paged, err)
	}
	e.m.StallSandbox("no-such-sandbox") // ignored
	e.m.StallSandbox(id)
	clk.Advance(2 * time.Second)
	e.press.Store(int32(Red))
	ds := e.m.Tick()
	e.m.Wait()
	if len(ds) != 1 || ds[0].Kind != policy.ReclaimPageOut || !p.isFrozen(id) {
		t.Fatalf("decided %+v, frozen %v; want one page-out", ds, p.isFrozen(id))
	}
	paged, err := e.m.UnstallSandbox(ctx, id)
	if !paged || err != nil || p.isFrozen(id) {
		t.Fatalf("UnstallSandbox = %v, %v, frozen %v; want paged back in and thawed", paged, err, p.isFrozen(id))
	}
}

// stalledInRed is a paging env on a manual clock whose agent "a" runs an
// action (busy) in sandbox id, which the gate froze 2 s ago, with the
// pressure red: the next Tick decides its page-out, and Tick returns it
// after checking that decision.
func stalledInRed(t *testing.T) (e *env, p *fakePager, clk *clocktest.Manual, id string, tick func()) {
	t.Helper()
	clk = clocktest.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e, p = pagingEnv(t, func(c *Config) { c.Clock, c.Policy.Stall = clk, time.Second })
	e.host.workingSet["a"] = 200 << 20
	id, err := e.m.Ensure(context.Background(), info("a"))
	if err != nil {
		t.Fatal(err)
	}
	e.m.StallSandbox(id)
	clk.Advance(2 * time.Second)
	e.press.Store(int32(Red))
	tick = func() {
		t.Helper()
		if ds := e.m.Tick(); len(ds) != 1 || ds[0].Kind != policy.ReclaimPageOut {
			t.Fatalf("decided %+v, want one page-out", ds)
		}
	}
	return e, p, clk, id, tick
}

// TestGateThawDeferred: a paged-out sandbox whose memory cannot all come
// back (the domain at its budget under the v1 OOM hold) stays frozen and
// stalled when the gate lets it run, UnstallSandbox reporting
// ErrThawDeferred so that the caller does not thaw it and asks again; so
// does one for which no lifecycle slot is free. The next try waits a
// backoff (250 ms, doubling to 2 s): asked earlier, it stays deferred
// without reading its pages. Once its memory fits it is paged in and
// thawed.
func TestGateThawDeferred(t *testing.T) {
	ctx := context.Background()
	e, p, clk, id, tick := stalledInRed(t)
	tick()
	e.m.Wait()
	p.pmu.Lock()
	p.wholeErr = fmt.Errorf("paging in sandbox %s: %w", id, ErrPageInIncomplete)
	p.pmu.Unlock()
	paged, err := e.m.UnstallSandbox(ctx, id)
	if !paged || !errors.Is(err, ErrThawDeferred) || !p.isFrozen(id) {
		t.Fatalf("UnstallSandbox at the budget = %v, %v, frozen %v; want paged, ErrThawDeferred, still frozen", paged, err, p.isFrozen(id))
	}
	// The gate asks again every period; within the backoff nothing is
	// tried, after it each try counts, one event says so.
	calls := len(p.callLog())
	clk.Advance(200 * time.Millisecond)
	if paged, err := e.m.UnstallSandbox(ctx, id); !paged || !errors.Is(err, ErrThawDeferred) || len(p.callLog()) != calls {
		t.Fatalf("UnstallSandbox within the backoff = %v, %v, calls %v; want paged, ErrThawDeferred, no page-in", paged, err, p.callLog()[calls:])
	}
	clk.Advance(100 * time.Millisecond)
	if paged, err := e.m.UnstallSandbox(ctx, id); !paged || !errors.Is(err, ErrThawDeferred) {
		t.Fatalf("second UnstallSandbox at the budget = %v, %v; want paged, ErrThawDeferred", paged, err)
	}
	clk.Advance(300 * time.Millisecond) // the backoff is 500 ms now
	if _, err := e.m.UnstallSandbox(ctx, id); !errors.Is(err, ErrThawDeferred) || !strings.Contains(err.Error(), "backing off") {
		t.Fatalf("UnstallSandbox 300 ms after the second try = %v; want deferred, backing off", err)
	}
	if evs := e.events.kinds(EventThawDeferred); len(evs) != 1 || evs[0].Sandbox != id {
		t.Errorf("thaw_deferred events = %+v, want one for %s", evs, id)
	}
	if evs := e.events.kinds(EventPageInFailed); len(evs) != 0 {
		t.Errorf("page_in_failed events = %+v, want none: a deferred thaw is not a failure", evs)
	}
	if m := e.m.Metrics(); m.ThawDeferrals != 2 || m.PageFailures != 0 {
		t.Errorf("metrics: %d thaw deferrals, %d page failures; want 2, 0", m.ThawDeferrals, m.PageFailures)
	}
	a, err := e.m.lookup("a")
	if err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	stalled := e.m.stalledFor(a, clk.Now())
	a.mu.Unlock()
	if stalled < 2*time.Second {
		t.Errorf("after a deferred thaw the sandbox has stalled %v, want its stall kept (at least 2s)", stalled)
	}
	// No paging slot free: deferred as well, without a page-in.
	held := 0
	for e.m.paging.tryAcquire() {
		held++
	}
	p.pmu.Lock()
	p.wholeErr = nil
	p.pmu.Unlock()
	clk.Advance(time.Second)
	paged, err = e.m.UnstallSandbox(ctx, id)
	for range held {
		e.m.paging.release()
	}
	if !paged || !errors.Is(err, ErrThawDeferred) || !p.isFrozen(id) {
		t.Fatalf("UnstallSandbox without a slot = %v, %v, frozen %v; want paged, ErrThawDeferred, still frozen", paged, err, p.isFrozen(id))
	}
	paged, err = e.m.UnstallSandbox(ctx, id)
	if !paged || err != nil || p.isFrozen(id) {
		t.Fatalf("UnstallSandbox with room = %v, %v, frozen %v; want paged back in and thawed", paged, err, p.isFrozen(id))
	}
}

// TestGateAllowsDuringPageOut: the gate lets a stalled sandbox run while
// red is paging it out; UnstallSandbox cannot take the agent's lock, so
// the caller resumes it, and the page-out would then leave it frozen
// mid-action with nothing to bring it back before the action's timeout
// (a live replay lost 133 s so). The page-out pages it back in instead.
func TestGateAllowsDuringPageOut(t *testing.T) {
	ctx := context.Background()
	e, p, _, id, tick := stalledInRed(t)
	gate := make(chan struct{})
	p.pmu.Lock()
	p.outGate = gate
	p.pmu.Unlock()
	tick()
	for !p.isFrozen(id) { // the page-out has begun
		time.Sleep(time.Millisecond)
	}
	if paged, err := e.m.UnstallSandbox(ctx, id); paged || err != nil {
		t.Fatalf("UnstallSandbox during the page-out = %v, %v; want false, nil (the caller resumes)", paged, err)
	}
	p.thaw(id) // the caller's resume
	close(gate)
	e.m.Wait()
	if p.isFrozen(id) || e.m.PagedOut("a") {
		t.Fatalf("after the page-out: frozen %v, paged out %v, calls %v; want paged back in and running", p.isFrozen(id), e.m.PagedOut("a"), p.callLog())
	}
}

// TestGateCallsNeverWaitForAgentLock: the gate's StallSandbox and
// UnstallSandbox return while another operation holds the agent's lock
// (as Ensure does while it waits for red pressure to ease, which only
// the gate loop can end): waiting there would deadlock the gate.
func TestGateCallsNeverWaitForAgentLock(t *testing.T) {
	ctx := context.Background()
	e, _ := pagingEnv(t, nil)
	id, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.m.lookup("a")
	if err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	done := make(chan bool)
	go func() {
		e.m.StallSandbox(id)
		paged, _ := e.m.UnstallSandbox(ctx, id)
		done <- paged
	}()
	select {
	case paged := <-done:
		if paged {
			t.Error("UnstallSandbox paged in without the agent's lock")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the gate's calls wait for the agent's lock")
	}
}

// TestTickLoop: without ManualReclaim the manager runs its policy every
// TickEvery on its own, so pressure that rises between boundaries (no
// action ends under the OOM hold) still reclaims idle sandboxes.
func TestTickLoop(t *testing.T) {
	clk := clocktest.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e, p := pagingEnv(t, func(c *Config) {
		c.ManualReclaim, c.Clock, c.TickEvery = false, clk, time.Second
		c.Policy.GreenMinWorkingSet = 1 << 30 // green keeps it
	})
	id := pinnedAgent(t, e, "a", 100<<20) // green at the boundary: kept
	if p.isFrozen(id) {
		t.Fatal("paged out in green")
	}
	e.press.Store(int32(Red))
	deadline := time.Now().Add(10 * time.Second)
	for !p.isFrozen(id) {
		if time.Now().After(deadline) {
			t.Fatal("no tick paged the idle sandbox out under red")
		}
		clk.Advance(time.Second)
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPagedOutTeardownFreesItsCopy: a restart-safe sandbox already paged
// out holds only its compressed copy, so a teardown of it is offered at
// that, not at the working set measured before the page-out; with the
// cost of the way back unchanged it is the last choice per byte. (Its
// wait, a second, is shorter than the way back: a wait that pays for the
// teardown gets one at once.)
func TestPagedOutTeardownFreesItsCopy(t *testing.T) {
	ctx := context.Background()
	e, _ := pagingEnv(t, nil)
	e.host.workingSet["a"] = 60 << 20
	if _, err := e.m.Ensure(ctx, info("a")); err != nil {
		t.Fatal(err)
	}
	b := clean
	b.PredictedWait = time.Second
	if _, err := e.m.Boundary(ctx, "a", b); err != nil {
		t.Fatal(err)
	}
	e.press.Store(int32(Red))
	ds := e.m.Tick()
	e.m.Wait()
	if len(ds) != 1 || ds[0].Kind != policy.ReclaimPageOut {
		t.Fatalf("first reclaim = %+v, want a page-out (cheaper per byte)", ds)
	}
	ds = e.m.Tick()
	e.m.Wait()
	copyBytes := int64(60<<20) - pageFrees(60<<20, e.m.compressionRatio())
	if len(ds) != 1 || ds[0].Kind != policy.ReclaimTeardown || ds[0].Frees != copyBytes || ds[0].WorkingSet != copyBytes {
		t.Fatalf("reclaim of the paged-out sandbox = %+v, want a teardown freeing its copy, %d bytes", ds, copyBytes)
	}
}

// TestPagingTakesItsOwnSlots: with every slot for teardowns and
// rematerializations busy, red still pages an idle sandbox out, and its
// agent's next action still pages it back in (slotsFor): in one pool a
// page-in of a few tens of milliseconds waited behind teardowns of a few
// hundred.
func TestPagingTakesItsOwnSlots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, p := pagingEnv(t, func(c *Config) { c.LifecycleLimit = 1 })
	id := pinnedAgent(t, e, "a", 300<<20)
	if err := e.m.lifecycle.acquire(ctx, prioReclaim); err != nil { // a teardown runs
		t.Fatal(err)
	}
	defer e.m.lifecycle.release()
	e.press.Store(int32(Red))
	if ds := e.m.Tick(); len(ds) != 1 || ds[0].Kind != policy.ReclaimPageOut {
		t.Fatalf("decisions = %+v, want one page-out", ds)
	}
	for e.m.Metrics().PageOuts != 1 {
		if ctx.Err() != nil {
			t.Fatalf("no page-out while the lifecycle slot is busy (metrics %+v)", e.m.Metrics())
		}
		time.Sleep(time.Millisecond)
	}
	if !p.isFrozen(id) {
		t.Fatal("paged out but not frozen")
	}
	e.press.Store(int32(Yellow))
	if _, err := e.m.Ensure(ctx, info("a")); err != nil {
		t.Fatalf("Ensure while the lifecycle slot is busy: %v, want paged back in", err)
	}
	if calls := p.callLog(); !reflect.DeepEqual(calls, []string{"out " + id, "in " + id}) || p.isFrozen(id) {
		t.Errorf("host calls = %v, frozen = %v; want out, in, thawed", calls, p.isFrozen(id))
	}
}

// TestDemandPageInBeforePageOut: with the one paging slot busy, a page-in
// an action waits for (Ensure) takes the freed slot before a page-out red
// queued after it was waiting; the page-out follows.
func TestDemandPageInBeforePageOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, p := pagingEnv(t, func(c *Config) { c.LifecycleLimit = 1 })
	idA := pinnedAgent(t, e, "a", 300<<20)
	e.press.Store(int32(Red))
	if ds := e.m.Tick(); len(ds) != 1 || ds[0].ID != "a" {
		t.Fatalf("decisions = %+v, want a paged out", ds)
	}
	e.m.Wait()
	e.press.Store(int32(Green))
	idB := pinnedAgent(t, e, "b", 300<<20)
	if err := e.m.paging.acquire(ctx, prioReclaim); err != nil { // a page-out runs
		t.Fatal(err)
	}
	e.press.Store(int32(Yellow))
	ensured := make(chan error, 1)
	go func() {
		_, err := e.m.Ensure(ctx, info("a"))
		ensured <- err
	}()
	pollWaiters(ctx, t, e.m.paging, 1)
	e.press.Store(int32(Red))
	if ds := e.m.Tick(); len(ds) != 1 || ds[0].ID != "b" || ds[0].Kind != policy.ReclaimPageOut {
		t.Fatalf("decisions = %+v, want b paged out", ds)
	}
	pollWaiters(ctx, t, e.m.paging, 2)
	e.m.paging.release()
	if err := <-ensured; err != nil {
		t.Fatal(err)
	}
	e.m.Wait()
	want := []string{"out " + idA, "in " + idA, "out " + idB}
	if calls := p.callLog(); !reflect.DeepEqual(calls, want) {
		t.Errorf("host calls = %v, want %v", calls, want)
	}
}

// pollWaiters waits until n waiters, of any priority, are queued on s.
func pollWaiters(ctx context.Context, t *testing.T, s *slots, n int) {
	t.Helper()
	for {
		s.mu.Lock()
		k := 0
		for _, q := range s.waiters {
			k += len(q)
		}
		s.mu.Unlock()
		if k == n {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%d waiters, want %d", k, n)
		}
		time.Sleep(time.Millisecond)
	}
}
