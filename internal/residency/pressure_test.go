package residency

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/policy"
)

// idleAgents creates agents with the given working sets and leaves each
// at a clean, restartable boundary. It returns their sandbox ids.
func idleAgents(t *testing.T, e *env, ws map[string]int64) map[string]string {
	t.Helper()
	ctx := context.Background()
	ids := map[string]string{}
	for a, w := range ws {
		e.host.workingSet[a] = w
		id, err := e.m.Ensure(ctx, info(a))
		if err != nil {
			t.Fatal(err)
		}
		ids[a] = id
		if _, err := e.m.Boundary(ctx, a, clean); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func TestReclaimOrderUnderPressure(t *testing.T) {
	for _, p := range []Pressure{Yellow, Red} {
		t.Run(p.String(), func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.LifecycleLimit = 1 })
			ids := idleAgents(t, e, map[string]int64{"a": 100 << 20, "b": 300 << 20, "c": 200 << 20})
			e.press.Store(int32(p))
			e.m.Tick()
			e.m.Wait()
			var want []string
			for _, a := range []string{"b", "c", "a"} {
				want = append(want, ids[a])
			}
			if !reflect.DeepEqual(e.host.destroyed, want) {
				t.Errorf("destroy order = %v, want %v (decreasing working set)", e.host.destroyed, want)
			}
			if mt := e.m.Metrics(); mt.Teardowns != 3 || mt.MemoryReclaimed != 600<<20 {
				t.Errorf("metrics = %+v", mt)
			}
		})
	}
}

func TestGreenRetainsUnlessWaitAmortizes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktest.NewManual(t0) // advanced by the test and by slow destroys
	e := newEnv(t, func(c *Config) {
		c.Clock = clk
		c.TeardownCostPrior = time.Second
		c.RematCostPrior = 2 * time.Second
	})
	e.host.destroyErr = func(string) error { clk.Advance(1500 * time.Millisecond); return nil }
	ctx := context.Background()
	for _, a := range []string{"short", "long"} {
		if _, err := e.m.Ensure(ctx, info(a)); err != nil {
			t.Fatal(err)
		}
	}
	b := clean
	b.PredictedWait = 2 * time.Second
	e.m.Boundary(ctx, "short", b)
	b.PredictedWait = 10 * time.Second
	e.m.Boundary(ctx, "long", b)
	steps := []struct {
		advance time.Duration
		want    []string
	}{
		{0, []string{"long"}}, // 10 s ≥ 1 s + 2 s (priors); 2 s < 3 s
		{0, nil},              // teardown measured 1.5 s; short has 0.5 s left
		{5 * time.Second, nil},
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		var got []string
		for _, d := range e.m.Tick() {
			got = append(got, d.ID)
		}
		e.m.Wait()
		if !reflect.DeepEqual(got, s.want) {
			t.Errorf("tick %d: reclaimed %v, want %v", i, got, s.want)
		}
	}
	if e.host.live() != 1 {
		t.Errorf("%d live sandboxes, want 1 (short retained)", e.host.live())
	}
}

// TestGreenKeepsAllWhilePlentiful: in green with at least half the budget
// free (Config.Free) no idle sandbox is reclaimed, however long its wait;
// once less is free the wait amortizes its reclaim again.
func TestGreenKeepsAllWhilePlentiful(t *testing.T) {
	var free atomic.Value
	free.Store(0.8)
	e := newEnv(t, func(c *Config) {
		c.Free = func() float64 { return free.Load().(float64) }
		c.TeardownCostPrior = time.Second
		c.RematCostPrior = time.Second
	})
	ctx := context.Background()
	if _, err := e.m.Ensure(ctx, info("a")); err != nil {
		t.Fatal(err)
	}
	b := clean
	b.PredictedWait = time.Hour
	e.m.Boundary(ctx, "a", b)
	if ds := e.m.Tick(); len(ds) != 0 {
		t.Fatalf("80 %% free: reclaimed %v, want none", ds)
	}
	free.Store(0.2)
	ds := e.m.Tick()
	e.m.Wait()
	if len(ds) != 1 || ds[0].ID != "a" || e.host.live() != 0 {
		t.Fatalf("20 %% free: reclaimed %v (%d live), want a torn down", ds, e.host.live())
	}
}

func TestAlwaysResidentAblation(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Policy.AlwaysResident = true; c.ManualReclaim = false })
	idleAgents(t, e, map[string]int64{"a": 1 << 30, "b": 2 << 30}) // Boundary runs the policy
	e.press.Store(int32(Red))
	e.m.Tick()
	e.m.Wait()
	if e.host.live() != 2 || e.m.Metrics().Teardowns != 0 {
		t.Errorf("always-resident tore down: live %d, metrics %+v", e.host.live(), e.m.Metrics())
	}
}

func TestBoundaryAppliesPolicy(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ManualReclaim = false })
	e.press.Store(int32(Yellow))
	idleAgents(t, e, map[string]int64{"a": 1 << 20})
	e.m.Wait()
	if e.host.live() != 0 || e.m.Metrics().Teardowns != 1 {
		t.Errorf("yellow boundary did not reclaim: live %d, metrics %+v", e.host.live(), e.m.Metrics())
	}
}

func TestRematDeferredInRed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, nil)
		idleAgents(t, e, map[string]int64{"a": 1 << 20})
		if err := e.m.Teardown(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		e.press.Store(int32(Red))
		done := make(chan string, 1)
		go func() {
			id, err := e.m.Ensure(ctx, info("a"))
			if err != nil {
				t.Error(err)
			}
			done <- id
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("rematerialization started under red pressure")
		default:
		}
		if e.host.live() != 0 {
			t.Fatal("sandbox created under red pressure")
		}
		if e.m.Prefetch("a") {
			t.Error("Prefetch started under red pressure")
		}
		e.press.Store(int32(Yellow)) // demand-driven remat may proceed in yellow
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case id := <-done:
			if id == "" {
				t.Fatal("no sandbox")
			}
		default:
			t.Fatal("Ensure still blocked after pressure fell to yellow")
		}
		if mt := e.m.Metrics(); mt.RematDeferred != 1 || mt.Rematerializations != 1 {
			t.Errorf("metrics = %+v", mt)
		}
	})
}

// TestCreateDeferredInRed: an agent's first sandbox is not created while
// the domain is red, and is once it is not.
func TestCreateDeferredInRed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		e.press.Store(int32(Red))
		done := make(chan string, 1)
		go func() {
			id, err := e.m.Ensure(t.Context(), info("a"))
			if err != nil {
				t.Error(err)
			}
			done <- id
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		if len(done) != 0 || e.host.live() != 0 {
			t.Fatal("a new sandbox was created under red pressure")
		}
		e.press.Store(int32(Yellow))
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case id := <-done:
			if id == "" || e.host.live() != 1 {
				t.Fatalf("sandbox %q, %d live, want one", id, e.host.live())
			}
		default:
			t.Fatal("Ensure still blocked after pressure fell to yellow")
		}
		if mt := e.m.Metrics(); mt.CreatesDeferred != 1 || mt.RematDeferred != 0 {
			t.Errorf("creates deferred %d, restores deferred %d: want the wait counted once, as a create", mt.CreatesDeferred, mt.RematDeferred)
		}
	})
}

func TestPrefetchOnlyInGreen(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	idleAgents(t, e, map[string]int64{"a": 1 << 20})
	if err := e.m.Teardown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	e.press.Store(int32(Yellow))
	if e.m.Prefetch("a") {
		t.Error("predictive rematerialization started in yellow")
	}
	e.press.Store(int32(Green))
	if !e.m.Prefetch("a") {
		t.Fatal("predictive rematerialization refused in green")
	}
	e.m.Wait()
	if e.host.live() != 1 {
		t.Fatalf("prefetch did not rematerialize")
	}
	creates := len(e.host.created)
	if _, err := e.m.Ensure(ctx, info("a")); err != nil {
		t.Fatal(err)
	}
	if len(e.host.created) != creates {
		t.Errorf("Ensure rebuilt a prefetched sandbox")
	}
}

func TestLifecycleLimit(t *testing.T) {
	e := newEnv(t, nil) // default limit 2
	idleAgents(t, e, map[string]int64{"a": 1, "b": 2, "c": 3, "d": 4})
	var inflight, peak atomic.Int32
	gate := make(chan struct{})
	e.host.pathsHook = func() {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-gate
	}
	e.host.destroyErr = func(string) error { inflight.Add(-1); return nil }
	e.press.Store(int32(Yellow))
	if ds := e.m.Tick(); len(ds) != 4 {
		t.Fatalf("decisions = %+v, want 4", ds)
	}
	deadline := time.Now().Add(5 * time.Second)
	for inflight.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // room for a third teardown to (wrongly) start
	if n := inflight.Load(); n != 2 {
		t.Errorf("%d teardowns in flight, want exactly the limit 2", n)
	}
	close(gate)
	e.m.Wait()
	if p := peak.Load(); p != 2 {
		t.Errorf("peak concurrent teardowns = %d, want 2", p)
	}
	if mt := e.m.Metrics(); mt.Teardowns != 4 {
		t.Errorf("teardowns = %d, want 4", mt.Teardowns)
	}
}

// TestStaleReclaimDropped: reclaims decided in red wait for the one
// lifecycle slot; once the first teardown brought pressure back to green
// with memory plentiful, the others are decided again when their turn
// comes and dropped: they no longer free anything that is needed.
func TestStaleReclaimDropped(t *testing.T) {
	var free atomic.Value
	free.Store(0.1)
	var e *env
	e = newEnv(t, func(c *Config) {
		c.LifecycleLimit = 1
		c.Free = func() float64 { return free.Load().(float64) }
	})
	e.host.destroyErr = func(string) error {
		e.press.Store(int32(Green))
		free.Store(0.8)
		return nil
	}
	idleAgents(t, e, map[string]int64{"a": 100 << 20, "b": 300 << 20, "c": 200 << 20})
	e.press.Store(int32(Red))
	if ds := e.m.Tick(); len(ds) != 3 {
		t.Fatalf("red: decided %v, want all three", ds)
	}
	e.m.Wait()
	if mt := e.m.Metrics(); mt.Teardowns != 1 || mt.ReclaimsDropped != 2 || e.host.live() != 2 {
		t.Errorf("teardowns %d, dropped %d, live %d; want 1, 2, 2 (metrics %+v)", mt.Teardowns, mt.ReclaimsDropped, e.host.live(), mt)
	}
}

// TestGreenReclaimWaitsItsTurn: a reclaim decided in green only amortizes
// an idle sandbox's wait; it takes a lifecycle slot in turn with
// rematerializations, not before an agent's sandbox that was already
// waiting for one.
func TestGreenReclaimWaitsItsTurn(t *testing.T) { synctest.Test(t, testGreenReclaimWaitsItsTurn) }

func testGreenReclaimWaitsItsTurn(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.LifecycleLimit = 1
		c.Free = func() float64 { return 0.1 }
		c.TeardownCostPrior = time.Second
		c.RematCostPrior = time.Second
	})
	ctx := t.Context()
	for _, a := range []string{"long", "next"} {
		if _, err := e.m.Ensure(ctx, info(a)); err != nil {
			t.Fatal(err)
		}
	}
	e.m.Boundary(ctx, "next", clean)
	if err := e.m.Teardown(ctx, "next"); err != nil {
		t.Fatal(err)
	}
	b := clean
	b.PredictedWait = time.Hour
	e.m.Boundary(ctx, "long", b)
	var mu sync.Mutex
	var order []string
	e.host.createErr = func(_ int, spec Spec) error {
		mu.Lock()
		order = append(order, "rematerialize "+spec.AgentID)
		mu.Unlock()
		return nil
	}
	e.host.destroyErr = func(string) error {
		mu.Lock()
		order = append(order, "teardown")
		mu.Unlock()
		return nil
	}
	if err := e.m.lifecycle.acquire(ctx, prioRestore); err != nil { // the one slot is busy
		t.Fatal(err)
	}
	go func() {
		if _, err := e.m.Ensure(ctx, info("next")); err != nil {
			t.Error(err)
		}
	}()
	waitWaiters(t, e.m.lifecycle, prioRestore, 1)
	if ds := e.m.Tick(); len(ds) != 1 || ds[0].ID != "long" {
		t.Fatalf("green, long wait: decided %v, want long's teardown", ds)
	}
	synctest.Wait()
	e.m.lifecycle.release()
	e.m.Wait()
	synctest.Wait()
	mu.Lock()
	defer mu.Unlock()
	want := []string{"rematerialize next", "teardown"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}

// TestCreateTakesNoSlot: an agent's first sandbox is created while every
// lifecycle slot is busy (agent pacing bounds agent starts, not the slots).
func TestCreateTakesNoSlot(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.LifecycleLimit = 1 })
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := e.m.lifecycle.acquire(ctx, prioRestore); err != nil {
		t.Fatal(err)
	}
	defer e.m.lifecycle.release()
	if _, err := e.m.Ensure(ctx, info("a")); err != nil {
		t.Fatalf("first sandbox with the only slot busy: %v", err)
	}
}

// TestBoundaryTicksOffPath: the policy a boundary asks for runs on the
// tick loop; the boundary returns while that Tick is still deciding, and
// Wait covers it.
func TestBoundaryTicksOffPath(t *testing.T) { synctest.Test(t, testBoundaryTicksOffPath) }

func testBoundaryTicksOffPath(t *testing.T) {
	release := make(chan struct{})
	var blocking atomic.Bool
	var e *env
	e = newEnv(t, func(c *Config) {
		c.ManualReclaim = false
		c.TickEvery = time.Hour
		c.Pressure = func() Pressure {
			if blocking.Load() {
				<-release
			}
			return Pressure(e.press.Load())
		}
	})
	ctx := t.Context()
	if _, err := e.m.Ensure(ctx, info("a")); err != nil {
		t.Fatal(err)
	}
	e.press.Store(int32(Yellow))
	blocking.Store(true)
	if _, err := e.m.Boundary(ctx, "a", clean); err != nil { // would hang here with Tick on the path
		t.Fatal(err)
	}
	synctest.Wait()
	if e.host.live() != 1 {
		t.Fatalf("torn down before the Tick was let go: live %d", e.host.live())
	}
	blocking.Store(false)
	close(release)
	e.m.Wait()
	if e.host.live() != 0 || e.m.Metrics().Teardowns != 1 {
		t.Errorf("yellow boundary did not reclaim: live %d, metrics %+v", e.host.live(), e.m.Metrics())
	}
}

// TestTickReclaimsAtReclaimPressure: Tick decides at
// policy.ReclaimPressure over Config.Pressure and Config.Waiting: in
// yellow an idle sandbox whose predicted wait does not amortize its way
// back stays, and once an action waits for admission (with the page-out
// tier on) the same tick reclaims it as red does. Without the tier the
// waiting action changes nothing.
func TestTickReclaimsAtReclaimPressure(t *testing.T) {
	for _, pageOut := range []bool{true, false} {
		t.Run(fmt.Sprintf("page-out %v", pageOut), func(t *testing.T) { testTickReclaimsAtReclaimPressure(t, pageOut) })
	}
}

func testTickReclaimsAtReclaimPressure(t *testing.T, pageOut bool) {
	var waiting atomic.Int32
	e, _ := pagingEnv(t, func(c *Config) {
		c.Waiting = func() int { return int(waiting.Load()) }
		c.TeardownCostPrior = time.Second
		c.RematCostPrior = time.Second
		c.Policy.PageOut = pageOut
	})
	e.press.Store(int32(Yellow))
	ctx := context.Background()
	if _, err := e.m.Ensure(ctx, info("a")); err != nil {
		t.Fatal(err)
	}
	b := clean
	b.PredictedWait = time.Second // shorter than teardown + rematerialization
	e.m.Boundary(ctx, "a", b)
	if ds := e.m.Tick(); len(ds) != 0 {
		t.Fatalf("yellow, nothing waits: reclaimed %v, want none", ds)
	}
	waiting.Store(1)
	ds := e.m.Tick()
	e.m.Wait()
	if !pageOut {
		if len(ds) != 0 {
			t.Fatalf("yellow, an action waits, no page-out tier: reclaimed %v, want none", ds)
		}
		return
	}
	if len(ds) != 1 || ds[0].ID != "a" {
		t.Fatalf("yellow, an action waits: reclaimed %v, want a", ds)
	}
}

// TestReclaimNeed: the pressure reclaims what Config.Need asks, the
// largest first among equal costs, counting the reclaims under way; each
// queued reclaim is decided again at its turn against the need of then
// less the others under way, and dropped once nothing is needed.
func TestReclaimNeed(t *testing.T) {
	var need atomic.Int64
	need.Store(450 << 20)
	var e *env
	release := make(chan struct{})
	e = newEnv(t, func(c *Config) {
		c.LifecycleLimit = 1
		c.Need = need.Load
	})
	ctx := context.Background()
	unknown := clean
	unknown.PredictedWait = 0 // the pressure alone reclaims
	for a, w := range map[string]int64{"a": 100 << 20, "b": 300 << 20, "c": 200 << 20} {
		e.host.workingSet[a] = w
		if _, err := e.m.Ensure(ctx, info(a)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.m.Boundary(ctx, a, unknown); err != nil {
			t.Fatal(err)
		}
	}
	first := true
	e.host.destroyErr = func(string) error {
		if first {
			first = false
			<-release
			need.Store(0) // the first teardown covered what was short
		}
		return nil
	}
	e.press.Store(int32(Red))
	ids := func(ds []policy.ReclaimDecision) (out []string) {
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	if got := ids(e.m.Tick()); !reflect.DeepEqual(got, []string{"b", "c"}) {
		t.Fatalf("red, 450 MiB needed: decided %v, want [b c] (300 + 200 MiB; a's 100 not needed)", got)
	}
	if got := e.m.Tick(); len(got) != 0 {
		t.Fatalf("the queued reclaims cover the need: decided %v more", ids(got))
	}
	close(release)
	e.m.Wait()
	if mt := e.m.Metrics(); mt.Teardowns != 1 || mt.ReclaimsDropped != 1 || e.host.live() != 2 {
		t.Errorf("teardowns %d, dropped %d, live %d; want 1 (b), 1 (c, no longer needed), 2 (metrics %+v)",
			mt.Teardowns, mt.ReclaimsDropped, e.host.live(), mt)
	}
	need.Store(-1) // unknown: every candidate
	if got := ids(e.m.Tick()); !reflect.DeepEqual(got, []string{"c", "a"}) {
		t.Errorf("red, need unknown: decided %v, want [c a]", got)
	}
	e.m.Wait()
}
