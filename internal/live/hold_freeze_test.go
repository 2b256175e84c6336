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
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/units"
)

// lineDomain is a holdDomain whose hold needs the freezing (cgroup v2),
// with an above-the-line flag the test sets.
type lineDomain struct {
	holdDomain
	freezes bool
	mu      *sync.Mutex
	above   *bool
}

func (d lineDomain) HoldFreezes() bool { return d.freezes }
func (d lineDomain) AboveHoldLine() (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.above, nil
}

// holdGate is the gate with its OOM hold's timeout at hold, and a domain
// whose budget is all free.
func holdGate(t *testing.T, hold string) (*Policy, *fakeDomain) {
	return lookup(t, "gate", policy.Options{Budget: units.GiB, Params: map[string]string{"hold": hold}}), &fakeDomain{avail: units.GiB}
}

// TestFreezingHoldWiring: on a domain whose hold needs the freezing (v2),
// the gate loop reads the line, pauses the sandbox that grew while tasks
// wait, even though the gate (green) allows it, and resumes it once the
// domain is below the line; on a domain whose hold does not (v1) it does
// not pause it.
func TestFreezingHoldWiring(t *testing.T) {
	for _, freezes := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			p, dom := holdGate(t, "10s")
			var mu sync.Mutex
			above := false
			be := &tapeHost{Manual: clocktest.NewManual(time.Time{}), paused: map[string]bool{},
				mem: map[string]int64{"s": 10 * units.MiB}, cpu: map[string]time.Duration{}, live: []string{"s"}}
			env := controller.Env{Clock: clock.Real{}, Budget: units.GiB, Backend: be, Live: be.liveSandboxes, Emit: func(controller.Event) {},
				Domain: lineDomain{holdDomain: holdDomain{dom}, freezes: freezes, mu: &mu, above: &above}}
			if err := p.Start(t.Context(), env); err != nil {
				t.Fatal(err)
			}
			paused := func() bool {
				be.mu.Lock()
				defer be.mu.Unlock()
				return be.paused["s"]
			}
			time.Sleep(300 * time.Millisecond)
			synctest.Wait()
			be.mu.Lock()
			be.mem["s"] = 100 * units.MiB // grew past the line
			be.mu.Unlock()
			mu.Lock()
			above = true
			mu.Unlock()
			dom.set(true)
			time.Sleep(150 * time.Millisecond)
			synctest.Wait()
			if paused() != freezes {
				t.Fatalf("freezing hold %v: the grower paused %v", freezes, paused())
			}
			dom.set(false)
			time.Sleep(300 * time.Millisecond)
			synctest.Wait()
			if freezes && !paused() {
				t.Fatal("thawed while the domain is above the line")
			}
			mu.Lock()
			above = false
			mu.Unlock()
			time.Sleep(300 * time.Millisecond)
			synctest.Wait()
			if paused() {
				t.Fatal("still paused below the line")
			}
			if err := p.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got, want := p.Machine().HoldStats().Froze, map[bool]uint64{true: 1, false: 0}[freezes]; got != want {
				t.Errorf("froze %d, want %d", got, want)
			}
		})
	}
}

// TestHoldPreemptWiring: two actions stuck at the limit under the hold
// (a thread in D state, no CPU) with nothing progressing. A driver that
// restarts preempted attempts (Env.RestartsPreempted) gets the younger
// action's context cancelled with controller.ErrPreempted at the hold's
// timeout and the hold stays armed; any other driver gets the release to
// the OOM killer, as before, and no action is cancelled.
func TestHoldPreemptWiring(t *testing.T) {
	for _, restarts := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			p, dom := holdGate(t, "1s")
			var mu sync.Mutex
			var reasons []string
			be := &tapeHost{Manual: clocktest.NewManual(time.Time{}), paused: map[string]bool{},
				mem:    map[string]int64{"sa": 100 * units.MiB, "sb": 100 * units.MiB},
				kernel: map[string]gate.Sample{"sa": {Blocked: 1}, "sb": {Blocked: 1}}, live: []string{"sa", "sb"}}
			env := controller.Env{Clock: clock.Real{}, Budget: units.GiB, Domain: holdDomain{dom}, Backend: be,
				Live: be.liveSandboxes, RestartsPreempted: restarts, Emit: func(e controller.Event) {
					if e.Kind == controller.EventHold {
						mu.Lock()
						reasons = append(reasons, e.Reason)
						mu.Unlock()
					}
				}}
			if err := p.Start(t.Context(), env); err != nil {
				t.Fatal(err)
			}
			ctxs := map[string]context.Context{}
			for _, id := range []string{"a", "b"} {
				a := agent(id)
				a.SandboxID = "s" + id
				if err := p.AgentReady(t.Context(), a); err != nil {
					t.Fatal(err)
				}
				if _, err := p.ActionReady(t.Context(), a, a.Action()); err != nil {
					t.Fatal(err)
				}
				actx, done := p.Preemptible(t.Context(), a)
				defer done()
				ctxs[id] = actx
				time.Sleep(100 * time.Millisecond) // b starts after a
			}
			dom.set(true)
			time.Sleep(1500 * time.Millisecond)
			synctest.Wait()
			preempted := errors.Is(context.Cause(ctxs["b"]), controller.ErrPreempted)
			if preempted != restarts || ctxs["a"].Err() != nil {
				t.Errorf("restarts %v: b preempted %v (cause %v), a cancelled %v; want b preempted only when the driver restarts it, a never",
					restarts, preempted, context.Cause(ctxs["b"]), ctxs["a"].Err())
			}
			want := []bool{true, false} // armed, released
			if restarts {
				want = []bool{true} // still armed
			}
			if w := dom.holdWrites(); !slices.Equal(w, want) {
				t.Errorf("restarts %v: hold writes %v, want %v", restarts, w, want)
			}
			if err := p.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if restarts && !slices.Contains(reasons, "deadlock: preempted") {
				t.Errorf("hold events %q: no preemption", reasons)
			}
		})
	}
}

// TestHoldPreemptIdleWiring: a deadlock of idle sandboxes under the hold.
// Attempts a and b ran an action and wait with 60 MiB each; d runs one
// stuck at the limit, the only running one. A driver that restarts idle
// attempts too (Env.PreemptsIdle) gets b's attempt context cancelled with
// controller.ErrPreempted at the hold's timeout (the youngest idle one; a
// started first), and d's action goes on; a driver that restarts only
// running actions gets d's action cancelled (the deadlock is between d
// and the idle a) and no attempt context.
func TestHoldPreemptIdleWiring(t *testing.T) {
	for _, idle := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			p, dom := holdGate(t, "1s")
			be := &tapeHost{Manual: clocktest.NewManual(time.Time{}), paused: map[string]bool{},
				mem:    map[string]int64{"sa": 60 * units.MiB, "sb": 60 * units.MiB, "sd": 130 * units.MiB},
				kernel: map[string]gate.Sample{"sd": {Blocked: 1}}, live: []string{"sa", "sb", "sd"}}
			env := controller.Env{Clock: clock.Real{}, Budget: units.GiB, Domain: holdDomain{dom}, Backend: be,
				Live: be.liveSandboxes, RestartsPreempted: true, PreemptsIdle: idle, Emit: func(controller.Event) {}}
			if err := p.Start(t.Context(), env); err != nil {
				t.Fatal(err)
			}
			attempts := map[string]context.Context{}
			var action context.Context
			for _, id := range []string{"a", "b", "d"} {
				a := agent(id)
				a.Workflow.Actions = append(a.Workflow.Actions, a.Workflow.Actions[0])
				a.SandboxID = "s" + id
				if err := p.AgentReady(t.Context(), a); err != nil {
					t.Fatal(err)
				}
				actx, done := p.PreemptibleAttempt(t.Context(), a)
				defer done()
				attempts[id] = actx
				g, err := p.ActionReady(actx, a, a.Action())
				if err != nil {
					t.Fatal(err)
				}
				if id == "d" {
					c, done := p.Preemptible(actx, a)
					defer done()
					action = c
				} else {
					p.ActionDone(a, g, controller.Outcome{Sandbox: a.SandboxID, PeakBytes: 90 * units.MiB})
				}
				time.Sleep(100 * time.Millisecond) // in start order
			}
			dom.set(true)
			time.Sleep(1500 * time.Millisecond)
			synctest.Wait()
			bCut := errors.Is(context.Cause(attempts["b"]), controller.ErrPreempted)
			dCut := errors.Is(context.Cause(action), controller.ErrPreempted)
			if bCut != idle || dCut == idle || attempts["a"].Err() != nil {
				t.Errorf("idle preemption %v: b's attempt cancelled %v, d's action cancelled %v, a's attempt %v", idle, bCut, dCut, attempts["a"].Err())
			}
			if err := p.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
