package live

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

func lookup(t *testing.T, name string, opts policy.Options) *Policy {
	t.Helper()
	p, err := Build(name, opts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func agent(id string) *controller.Agent {
	return &controller.Agent{ID: id, Attempt: 1, Workflow: &trajectory.Workflow{ID: id,
		Actions: []trajectory.Action{{Class: "bash", Command: "c", Mem: &trajectory.MemProfile{PeakMiB: 10, RampS: 1}}}}}
}

// TestAgentReadyCancel: an agent that gives up waiting for a slot holds
// none; the next one gets it.
func TestAgentReadyCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := lookup(t, "static-1", policy.Options{})
		if err := p.Start(t.Context(), controller.Env{}); err != nil {
			t.Fatal(err)
		}
		a, b, c := agent("a"), agent("b"), agent("c")
		if err := p.AgentReady(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- p.AgentReady(ctx, b) }()
		synctest.Wait()
		select {
		case err := <-errc:
			t.Fatalf("b started beside a under static-1: %v", err)
		default:
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled AgentReady = %v", err)
		}
		p.AgentDone(a, nil)
		done := make(chan error, 1)
		go func() { done <- p.AgentReady(t.Context(), c) }()
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("c waits: the cancelled b kept the slot")
		}
		if err := p.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// constPred predicts the same peak for every action.
type constPred struct{ peak int64 }

func (constPred) Name() string { return "const" }
func (p constPred) Predict(predict.ActionContext) predict.Descriptor {
	return predict.Descriptor{PredAvg: p.peak / 2, PredPeak: p.peak}
}

// fakeDomain has a fixed available memory; with hold set it is an
// OOMHolder whose under-OOM flag the test sets and whose writes it records.
type fakeDomain struct {
	mu     sync.Mutex
	avail  int64
	under  bool
	writes []bool
}

func (d *fakeDomain) Usage() (int64, error) { return 0, nil }
func (d *fakeDomain) Available() (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.avail, nil
}

type holdDomain struct{ *fakeDomain }

func (d holdDomain) SetOOMHold(on bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes = append(d.writes, on)
	return nil
}
func (d holdDomain) UnderOOM() (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.under, nil
}

func (d *fakeDomain) set(under bool) { d.mu.Lock(); d.under = under; d.mu.Unlock() }
func (d *fakeDomain) holdWrites() []bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.writes)
}

// TestActionReadyCancel: an action that gives up waiting for admission
// leaves the queue, and one admitted by the admission loop is delivered.
// While it waits the adapter publishes it to the residency manager
// (waitingActions, residency.Config.Waiting), and 0 once it gave up.
func TestActionReadyCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := policy.NewMachine(policy.Config{Spec: policy.Spec{Name: "admission", Admission: true, Predictor: policy.PredCurrent},
			Budget: units.GiB, Model: constPred{peak: 400 * units.MiB}, Margin: 100 * units.MiB})
		if err != nil {
			t.Fatal(err)
		}
		p := New(m, Options{})
		dom := &fakeDomain{avail: 300 * units.MiB}
		be := &tapeHost{Manual: clocktest.NewManual(time.Time{}), paused: map[string]bool{}, mem: map[string]int64{}}
		if err := p.Start(t.Context(), controller.Env{Clock: clock.Real{}, Budget: units.GiB, Domain: dom,
			Backend: be, Live: func() []controller.LiveSandbox { return nil }, Emit: func(controller.Event) {}}); err != nil {
			t.Fatal(err)
		}
		a := agent("a")
		if err := p.AgentReady(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { _, err := p.ActionReady(ctx, a, a.Action()); errc <- err }()
		time.Sleep(time.Second) // the admission loop runs every 50 ms: no headroom, no admission
		synctest.Wait()
		if w := p.waitingActions(); w != 1 {
			t.Fatalf("an action waits: %d published, want 1", w)
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled ActionReady = %v", err)
		}
		if w := p.waitingActions(); w != 0 {
			t.Fatalf("nothing waits: %d published, want 0", w)
		}
		if w := p.waiting(); w != 0 {
			t.Fatalf("%d actions still wait after the cancel", w)
		}
		dom.mu.Lock()
		dom.avail = units.GiB
		dom.mu.Unlock()
		g, err := p.ActionReady(t.Context(), a, a.Action())
		if err != nil || g.Charge <= 0 {
			t.Fatalf("with room the action got %+v, %v", g, err)
		}
		p.ActionDone(a, g, controller.Outcome{PeakBytes: 10 * units.MiB})
		p.AgentDone(a, nil)
		if err := p.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		if st := p.Stats(); st.AdmittedByMachine != 1 {
			t.Fatalf("stats %+v: want one admission by the loop", st)
		}
	})
}

// waiting is the number of actions queued for admission in the machine.
func (p *Policy) waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m.Waiting()
}

// TestHoldLifecycle: the gate arms the domain's OOM hold at Start, releases
// it to the OOM killer once tasks waited its timeout with no sandbox
// making progress, re-arms it when the domain is out of OOM, logs each
// step, and disarms it at Stop. A domain without a hold runs the gate
// without one.
func TestHoldLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := lookup(t, "gate", policy.Options{Budget: units.GiB, Params: map[string]string{"hold": "1s"}})
		dom := &fakeDomain{avail: units.GiB}
		var mu sync.Mutex
		var reasons []string
		emit := func(e controller.Event) {
			if e.Kind == controller.EventHold {
				mu.Lock()
				reasons = append(reasons, e.Reason)
				mu.Unlock()
			}
		}
		be := &tapeHost{Manual: clocktest.NewManual(time.Time{}), paused: map[string]bool{}, mem: map[string]int64{}}
		env := controller.Env{Clock: clock.Real{}, Budget: units.GiB, Domain: holdDomain{dom}, Backend: be,
			Live: func() []controller.LiveSandbox { return nil }, Emit: emit}
		if err := p.Start(t.Context(), env); err != nil {
			t.Fatal(err)
		}
		if w := dom.holdWrites(); !slices.Equal(w, []bool{true}) {
			t.Fatalf("writes after Start %v, want [true]", w)
		}
		dom.set(true)
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		if w := dom.holdWrites(); !slices.Equal(w, []bool{true, false}) {
			t.Fatalf("writes after the timeout %v, want [true false]", w)
		}
		dom.set(false)
		time.Sleep(300 * time.Millisecond)
		synctest.Wait()
		if err := p.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		if w := dom.holdWrites(); !slices.Equal(w, []bool{true, false, true, false}) {
			t.Fatalf("writes %v, want armed, released, re-armed, disarmed", w)
		}
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"began", "released to the OOM killer", "re-armed"}; !slices.Equal(reasons, want) {
			t.Fatalf("hold events %q, want %q", reasons, want)
		}

		q := lookup(t, "gate", policy.Options{Budget: units.GiB})
		env.Domain = dom // no OOMHolder
		if err := q.Start(t.Context(), env); err != nil {
			t.Fatal(err)
		}
		if q.Machine().HoldArmed() {
			t.Fatal("the hold is armed on a domain without one")
		}
		if err := q.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestStartCancelled: a Start whose context is cancelled returns the
// cancellation with nothing left running (the caller does not call Stop
// after a failed Start): the hold it armed is disarmed and the loops end,
// or the bubble would never settle.
func TestStartCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := lookup(t, "gate", policy.Options{Budget: units.GiB})
		dom := &fakeDomain{avail: units.GiB}
		be := &tapeHost{Manual: clocktest.NewManual(time.Time{}), paused: map[string]bool{}, mem: map[string]int64{}}
		env := controller.Env{Clock: clock.Real{}, Budget: units.GiB, Domain: holdDomain{dom}, Backend: be,
			Live: func() []controller.LiveSandbox { return nil }}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := p.Start(ctx, env); !errors.Is(err, context.Canceled) {
			t.Fatalf("Start with a cancelled context: %v, want context.Canceled", err)
		}
		if w := dom.holdWrites(); !slices.Equal(w, []bool{true, false}) {
			t.Fatalf("hold writes %v, want armed then disarmed", w)
		}
		p.mu.Lock()
		running := p.loopStop != nil
		p.mu.Unlock()
		if running {
			t.Fatal("loops still running after a cancelled Start")
		}
	})
}

// TestMeasuredAndSetModel: an admitted action's measurement reaches the
// Measured hook with its memory above the sandbox's level at admission,
// and SetModel swaps the machine's predictor under the adapter's lock.
func TestMeasuredAndSetModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := policy.NewMachine(policy.Config{Spec: policy.Spec{Name: "admission", Admission: true, Predictor: policy.PredCurrent},
			Budget: units.GiB, Model: constPred{peak: 100 * units.MiB}, Margin: 100 * units.MiB})
		if err != nil {
			t.Fatal(err)
		}
		var got []predict.ActionRecord
		p := New(m, Options{Measured: func(r predict.ActionRecord) { got = append(got, r) }})
		be := &tapeHost{Manual: clocktest.NewManual(time.Time{}), paused: map[string]bool{}, mem: map[string]int64{"sa": 50 * units.MiB}}
		if err := p.Start(t.Context(), controller.Env{Clock: clock.Real{}, Budget: units.GiB, Domain: &fakeDomain{avail: units.GiB},
			Backend: be, Live: func() []controller.LiveSandbox { return nil }, Emit: func(controller.Event) {}}); err != nil {
			t.Fatal(err)
		}
		a := agent("a")
		a.SandboxID = "sa"
		if err := p.AgentReady(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		a.Started = time.Now()
		g, err := p.ActionReady(t.Context(), a, a.Action())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		p.ActionDone(a, g, controller.Outcome{Index: 0, Sandbox: "sa", PeakBytes: 80 * units.MiB, AvgBytes: 60 * units.MiB, Duration: time.Second})
		if len(got) != 1 {
			t.Fatalf("Measured got %d records, want 1", len(got))
		}
		r := got[0]
		if r.PeakBytes != 30*units.MiB || r.AvgBytes != 10*units.MiB || r.Class != "bash" || r.Command != "c" ||
			r.EndS != 2 || r.StartS != 1 || r.DurationS != 1 || r.Event != predict.EventActionDone {
			t.Errorf("record %+v: want peak 30 MiB and avg 10 MiB above the 50 MiB level, from 1 s to 2 s", r)
		}
		g, err = p.ActionReady(t.Context(), a, a.Action())
		if err != nil {
			t.Fatal(err)
		}
		p.ActionDone(a, g, controller.Outcome{Err: errors.New("sandbox gone")})
		if len(got) != 1 {
			t.Errorf("a lost action was measured: %+v", got)
		}
		next := constPred{peak: 300 * units.MiB}
		if err := p.SetModel(next); err != nil {
			t.Fatal(err)
		}
		if p.Machine().Config().Model != next {
			t.Errorf("model after SetModel %v, want %v", p.Machine().Config().Model, next)
		}
		p.AgentDone(a, nil)
		if err := p.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}
