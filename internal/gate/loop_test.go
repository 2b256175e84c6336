package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type actCall struct {
	id    string
	allow bool
	at    time.Time
}

type fakeActuator struct {
	mu       sync.Mutex
	allowed  map[string]bool
	calls    []actCall
	failNext map[string]int // failures to inject per sandbox
	closed   bool
	denied   chan string // receives every successful Deny, if non-nil
}

func newFakeActuator() *fakeActuator {
	return &fakeActuator{allowed: map[string]bool{}, failNext: map[string]int{}}
}

func (a *fakeActuator) Name() string { return "fake" }

func (a *fakeActuator) set(id string, allow bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failNext[id] > 0 {
		a.failNext[id]--
		return fmt.Errorf("fake: injected failure for %s", id)
	}
	a.allowed[id] = allow
	a.calls = append(a.calls, actCall{id, allow, time.Now()})
	if !allow && a.denied != nil {
		select {
		case a.denied <- id:
		default:
		}
	}
	return nil
}

func (a *fakeActuator) Allow(_ context.Context, id string) error { return a.set(id, true) }
func (a *fakeActuator) Deny(_ context.Context, id string) error  { return a.set(id, false) }
func (a *fakeActuator) Close(context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	return nil
}

func (a *fakeActuator) takeCalls() []actCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.calls
	a.calls = nil
	return c
}

// world is a shared, mutable fake workload domain read by an Observer.
type world struct {
	mu    sync.Mutex
	avail int64
	sb    map[string]*Sample
	err   error
}

func newWorld(ids ...string) *world {
	w := &world{avail: testBudget, sb: map[string]*Sample{}}
	for _, id := range ids {
		w.sb[id] = &Sample{ID: id}
	}
	return w
}

// observe grows every sandbox by 10 MiB and 10 ms of CPU per call.
func (w *world) observe(context.Context) (Observation, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return Observation{}, w.err
	}
	obs := Observation{Budget: testBudget, Available: w.avail}
	for _, s := range w.sb {
		s.Footprint += 10 * MiB
		s.CPU += 10 * time.Millisecond
		obs.Sandboxes = append(obs.Sandboxes, *s)
	}
	return obs, nil
}

func (w *world) setAvail(v int64) {
	w.mu.Lock()
	w.avail = v
	w.mu.Unlock()
}

func newTestLoop(t testing.TB, w *world, act Actuator, sink func(Event)) *Loop {
	t.Helper()
	l, err := NewLoop(LoopOptions{Controller: New(table5(Config{})), Observer: w.observe, Actuator: act, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// tk paces Tick calls one control period apart in fake time.
func tk(l *Loop) (Decision, error) {
	time.Sleep(tick)
	return l.Tick(context.Background())
}

func TestLoopAppliesOnlyChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld("a", "b")
		act := newFakeActuator()
		var events []Event
		l := newTestLoop(t, w, act, func(e Event) { events = append(events, e) })

		if _, err := tk(l); err != nil {
			t.Fatal(err)
		}
		if c := act.takeCalls(); len(c) != 2 || !c[0].allow || !c[1].allow {
			t.Fatalf("first tick calls = %+v, want Allow a and b (first decisions are always applied)", c)
		}
		for range 3 {
			tk(l)
		}
		if c := act.takeCalls(); len(c) != 0 {
			t.Fatalf("steady green calls = %+v, want none", c)
		}
		w.setAvail(300 * MiB) // red, H = 44 MiB: both demands (100 MiB) are too big
		d, _ := tk(l)
		if d.Pressure != Red {
			t.Fatalf("pressure = %v, want red", d.Pressure)
		}
		if c := act.takeCalls(); len(c) != 2 || c[0].allow || c[1].allow {
			t.Fatalf("red tick calls = %+v, want Deny a and b", c)
		}
		tk(l)
		if c := act.takeCalls(); len(c) != 0 {
			t.Fatalf("steady red calls = %+v, want none", c)
		}
		st := l.Stats()
		if st.Iterations != 6 || st.Denials != 2 || st.Pauses != 2 || st.Allows != 2 {
			t.Errorf("stats = %+v, want 6 iterations, 2 denials, 2 pauses, 2 allows", st)
		}
		last := events[len(events)-1]
		if last.Kind != EventIteration || last.Pressure != Red || !slices.Equal(last.Denied, []string{"a", "b"}) {
			t.Errorf("last event = %+v, want iteration summary with red and both denied", last)
		}
	})
}

func TestLoopRetriesFailedActuation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld("a")
		act := newFakeActuator()
		act.failNext["a"] = 1
		l := newTestLoop(t, w, act, nil)
		if _, err := tk(l); err == nil {
			t.Fatal("Tick = nil, want the injected actuator error")
		}
		if _, err := tk(l); err != nil {
			t.Fatal(err)
		}
		if !act.allowed["a"] || l.Stats().ActuatorErrors != 1 {
			t.Errorf("allowed=%v stats=%+v, want retried and allowed, 1 error", act.allowed["a"], l.Stats())
		}
	})
}

// stuckActuator's Deny of a sandbox in stuck waits for its context (a
// freeze that cannot complete) the first time, then succeeds.
type stuckActuator struct {
	*fakeActuator
	stuck map[string]bool
}

func (a stuckActuator) Deny(ctx context.Context, id string) error {
	if a.stuck[id] {
		delete(a.stuck, id)
		<-ctx.Done()
		return ctx.Err()
	}
	return a.fakeActuator.Deny(ctx, id)
}

// TestLoopBoundsStuckActuation: a Deny that would wait for ever fails
// after ActuateTimeout, the loop goes on (the other sandbox is denied in
// the same tick) and applies a's decision again the next period.
func TestLoopBoundsStuckActuation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld("a", "b")
		act := stuckActuator{newFakeActuator(), map[string]bool{"a": true}}
		l := newTestLoop(t, w, act, nil)
		for range 4 { // as TestLoopAppliesOnlyChanges: then red denies both
			if _, err := tk(l); err != nil {
				t.Fatal(err)
			}
		}
		act.takeCalls()
		w.setAvail(300 * MiB) // red: both denied
		start := time.Now()
		if d, err := tk(l); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Tick = %v (denied %v), want the stuck Deny's deadline", err, d.Denied)
		}
		if took := time.Since(start) - tick; took != DefaultActuateTimeout {
			t.Errorf("the tick took %v beyond its period, want DefaultActuateTimeout %v", took, DefaultActuateTimeout)
		}
		if c := act.takeCalls(); len(c) != 1 || c[0].id != "b" || c[0].allow {
			t.Fatalf("calls = %+v, want b denied beside the stuck a", c)
		}
		d, err := tk(l)
		if err != nil {
			t.Fatal(err)
		}
		// a's state was unknown: the next tick applies its decision,
		// whatever it is (after the stall a may be overdue and allowed).
		allowA := slices.Contains(d.Permitted, "a")
		if c := act.takeCalls(); len(c) != 1 || c[0].id != "a" || c[0].allow != allowA {
			t.Fatalf("next tick calls = %+v, want a's decision (allow %v) applied", c, allowA)
		}
		if l.Stats().ActuatorErrors != 1 {
			t.Errorf("stats = %+v, want 1 actuator error", l.Stats())
		}
	})
}

func TestLoopObserveError(t *testing.T) {
	w := newWorld("a")
	w.err = errors.New("cgroup read failed")
	var kinds []EventKind
	l := newTestLoop(t, w, newFakeActuator(), func(e Event) { kinds = append(kinds, e.Kind) })
	if _, err := l.Tick(context.Background()); err == nil {
		t.Fatal("Tick = nil, want observer error")
	}
	if st := l.Stats(); st.ObserveErrors != 1 || st.Iterations != 0 || !slices.Equal(kinds, []EventKind{EventObserveError}) {
		t.Errorf("stats %+v events %v, want one observe error and no iteration", st, kinds)
	}
}

func TestLoopAllowsRemovedDeniedSandbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld("a")
		act := newFakeActuator()
		l := newTestLoop(t, w, act, nil)
		for range 3 { // past the bootstrap demand: a grows 100 MiB/s
			tk(l)
		}
		w.setAvail(300 * MiB)
		tk(l)
		if act.allowed["a"] {
			t.Fatal("a not denied in red")
		}
		w.mu.Lock()
		w.sb["a"].Done = true
		w.mu.Unlock()
		tk(l)
		if !act.allowed["a"] {
			t.Error("completed sandbox left denied")
		}
	})
}

func TestLoopRunReleasesOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld("a", "b", "c")
		act := newFakeActuator()
		l := newTestLoop(t, w, act, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- l.Run(ctx) }()
		time.Sleep(550 * time.Millisecond)
		w.setAvail(300 * MiB)
		time.Sleep(300 * time.Millisecond)
		if d := l.Last(); len(d.Denied) != 3 {
			t.Fatalf("denied %v before cancel, want all three", d.Denied)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
		for _, id := range []string{"a", "b", "c"} {
			if !act.allowed[id] {
				t.Errorf("%s still denied after Run returned", id)
			}
		}
		if !act.closed {
			t.Error("actuator not closed")
		}
		if n := l.Stats().Iterations; n != 9 {
			t.Errorf("iterations = %d, want 9 (t = 0, 100, ..., 800 ms)", n)
		}
	})
}

// TestLoopRedToDenyDelay measures, in fake time, the delay from the moment
// the domain turns red to the published Deny through Run: at most one period.
func TestLoopRedToDenyDelay(t *testing.T) {
	var worst time.Duration
	for _, offset := range []time.Duration{1, 37, 99, 100, 101, 250, 333, 499} {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld("a", "b")
			act := newFakeActuator()
			act.denied = make(chan string, 4)
			l := newTestLoop(t, w, act, nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- l.Run(ctx) }()
			time.Sleep(time.Second + offset*time.Millisecond)
			red := time.Now()
			w.setAvail(300 * MiB)
			<-act.denied
			delay := time.Since(red)
			cancel()
			<-done
			if p := l.opts.Controller.Config().Period; delay > p {
				t.Errorf("offset %v ms: red→deny %v, want <= one period %v", offset, delay, p)
			}
			worst = max(worst, delay)
		})
	}
	t.Logf("worst red→deny delay (fake time, period 100 ms): %v", worst)
}
