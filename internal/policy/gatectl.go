package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// gateRunner runs the runtime execution gate (seed 000 Algorithm 1) over the
// live sandboxes of a replay or daemon: every control period it reads each
// sandbox's footprint and CPU time through the backend, steps the gate
// controller, and pauses or resumes sandboxes through the backend's freezer.
// It is backend-agnostic: Backend.Stats and Backend.Pause/Resume are the
// observation and the actuator.
type gateRunner struct {
	cfg gate.Config
	// holdTimeout, when > 0, arms the domain's OOM hold (hold.go) if the
	// domain supports one.
	holdTimeout time.Duration

	mu       sync.Mutex
	loop     *gate.Loop
	cancel   context.CancelFunc
	done     chan struct{}
	pressure gate.Pressure
	holder   controller.OOMHolder // the armed hold's domain, nil when off
	hold     *OOMHold
	lastCPU  map[string]cpuSeen // each sandbox's CPU time at the previous observation
}

func newGateRunner(cfg gate.Config) (*gateRunner, error) {
	if err := cfg.WithDefaults().Validate(); err != nil {
		return nil, fmt.Errorf("%w: gate: %v", ErrBadOption, err)
	}
	return &gateRunner{cfg: cfg}, nil
}

// GateConfigFor fills the safety margin S for a budget: Table 5's 256 MiB
// was set for 8–16 GiB hosts; on smaller budgets it would reserve a large
// share of memory, so S is min(256 MiB, budget/8) unless configured.
func GateConfigFor(cfg gate.Config, budget int64) gate.Config {
	if cfg.SafetyMargin == 0 && budget > 0 {
		cfg.SafetyMargin = min(256*gate.MiB, budget/8)
	}
	return cfg.WithDefaults()
}

// minScaledPeriod bounds the control period of a compressed replay.
const minScaledPeriod = 20 * time.Millisecond

// scaledGate puts the gate on the replay's clock: a replay at time scale s
// runs model waits and tool curves s times as long (0.2: five times
// faster), so a tool ramps 1/s times as fast. Table 5's constants are set
// for tools running in real time; left as they are, a compressed replay
// would give the gate a period five times too coarse for the ramps and
// make every denial (Dmin, Dmax) five times as long relative to the work.
// The period, horizon, Dmin, Dmax and T_stable are multiplied by s (the
// period no shorter than 20 ms) and the resident band, a rate, divided by
// it; byte quantities stay. Scale 0 or 1 leaves cfg unchanged.
func scaledGate(cfg gate.Config, scale float64) gate.Config {
	if scale <= 0 || scale == 1 {
		return cfg
	}
	d := gate.DefaultConfig()
	dur := func(v, def time.Duration) time.Duration {
		if v == 0 {
			v = def
		}
		return time.Duration(float64(v) * scale)
	}
	cfg.Period = max(dur(cfg.Period, d.Period), minScaledPeriod)
	cfg.Horizon = dur(cfg.Horizon, d.Horizon)
	cfg.DMin = dur(cfg.DMin, d.DMin)
	cfg.DMax = dur(cfg.DMax, d.DMax)
	cfg.StableInterval = dur(cfg.StableInterval, d.StableInterval)
	if cfg.ResidentBand == 0 {
		cfg.ResidentBand = d.ResidentBand
	}
	cfg.ResidentBand /= scale
	return cfg
}

// backendActuator pauses and resumes sandboxes through the backend (the
// process backend's Pause is a verified cgroup freeze).
type backendActuator struct{ b sandbox.Backend }

func (a backendActuator) Name() string { return "freezer" }

func (a backendActuator) Allow(ctx context.Context, id string) error {
	err := a.b.Resume(ctx, id)
	if errors.Is(err, sandbox.ErrNotFound) {
		return nil
	}
	return err
}

func (a backendActuator) Deny(ctx context.Context, id string) error {
	err := a.b.Pause(ctx, id)
	if errors.Is(err, sandbox.ErrNotFound) {
		return nil
	}
	return err
}

// start launches the loop. needs, when not nil, gives per sandbox running
// an admitted action its memory at admission and predicted peak; the gate
// then caps each sandbox's demand at the growth still predicted (at least
// the bootstrap demand; 0 for sandboxes running no action).
func (g *gateRunner) start(env controller.Env, policyName string, needs func() map[string][2]int64) error {
	if env.Backend == nil || env.Live == nil {
		return fmt.Errorf("%w: the gate needs a backend and a live-sandbox list", ErrBadOption)
	}
	budget := env.Budget
	held := g.armHold(env)
	gc := GateConfigFor(g.cfg, budget)
	observer := func(ctx context.Context) (gate.Observation, error) {
		obs := gate.Observation{Budget: budget}
		if env.Domain != nil {
			avail, err := env.Domain.Available()
			if err != nil {
				return obs, fmt.Errorf("reading domain memory: %w", err)
			}
			obs.Available = avail
		} else {
			obs.Available = budget
		}
		var running map[string][2]int64
		if needs != nil {
			running = needs()
		}
		for _, ls := range env.Live() {
			st, err := env.Backend.Stats(ctx, ls.Info.ID)
			if err != nil {
				continue // gone between listing and reading: the gate drops it
			}
			smp := gate.Sample{ID: ls.Info.ID, Footprint: st.Memory, CPU: st.CPU}
			if needs != nil {
				// A sandbox running no admitted action has nothing left to
				// grow for (cap 0). One whose action is still below its
				// predicted peak may grow by the rest (at least the
				// bootstrap demand). One that outgrew its prediction gets
				// no cap: the prediction was wrong, the estimate rules.
				var adm *Admitted
				if n, ok := running[ls.Info.ID]; ok {
					adm = &Admitted{Before: n[0], Memory: st.Memory, Peak: n[1]}
				}
				smp.DemandCap, smp.HasCap = DemandCap(adm, gc.BootstrapDemand)
			}
			obs.Sandboxes = append(obs.Sandboxes, smp)
		}
		if held {
			g.stepHold(env, policyName, g.progressed(obs.Sandboxes, gc.Period/20))
		}
		return obs, nil
	}
	var last gate.Event // the last iteration written to the event log
	sink := func(e gate.Event) {
		switch e.Kind {
		case gate.EventIteration:
			if e.Pressure == last.Pressure && e.B == last.B && slices.Equal(e.Permitted, last.Permitted) && slices.Equal(e.Denied, last.Denied) && last.Kind != "" {
				return
			}
			last = e
			env.Emit(controller.Event{Kind: controller.EventGate, Policy: policyName, Pressure: e.Pressure.String(), B: e.B,
				Permitted: slices.Clone(e.Permitted), Denied: slices.Clone(e.Denied)})
		case gate.EventDeny:
			env.Emit(controller.Event{Kind: controller.EventPause, Policy: policyName, Sandbox: e.Sandbox, Reason: "gate deny (" + e.Pressure.String() + ")"})
		case gate.EventAllow:
			env.Emit(controller.Event{Kind: controller.EventResume, Policy: policyName, Sandbox: e.Sandbox, Reason: "gate allow (" + e.Pressure.String() + ")"})
		case gate.EventPressure:
			env.Emit(controller.Event{Kind: "pressure", Policy: policyName, Reason: e.From + "->" + e.To})
			g.mu.Lock()
			g.pressure = e.Pressure
			g.mu.Unlock()
		case gate.EventBudget:
			env.Emit(controller.Event{Kind: "gate_budget", Policy: policyName, Reason: e.From + "->" + e.To})
		case gate.EventObserveError, gate.EventActuatorError:
			msg := ""
			if e.Err != nil {
				msg = e.Err.Error()
			}
			env.Emit(controller.Event{Kind: controller.EventError, Policy: policyName, Sandbox: e.Sandbox, Error: "gate: " + msg})
		}
	}
	loop, err := gate.NewLoop(gate.LoopOptions{
		Controller: gate.New(gc),
		Observer:   observer,
		Actuator:   backendActuator{b: env.Backend},
		Sink:       sink,
		Logger:     env.Logger,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.mu.Lock()
	g.loop, g.cancel, g.done = loop, cancel, make(chan struct{})
	done := g.done
	g.mu.Unlock()
	go func() {
		defer close(done)
		loop.Run(ctx)
	}()
	return nil
}

// stop ends the loop; Loop.Run allows (resumes) every sandbox before returning.
func (g *gateRunner) stop(ctx context.Context) error {
	g.mu.Lock()
	cancel, done := g.cancel, g.done
	g.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("stopping the gate: %w", ctx.Err())
	case <-time.After(10 * time.Second):
		err = errors.New("stopping the gate: loop did not stop within 10s")
	}
	return errors.Join(err, g.disarmHold())
}

// currentPressure is the last pressure the gate published (green before the first).
func (g *gateRunner) currentPressure() gate.Pressure {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pressure
}

// stats returns the loop's counters.
func (g *gateRunner) stats() gate.Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.loop == nil {
		return gate.Stats{}
	}
	return g.loop.Stats()
}

// armHold arms the domain's OOM hold when it is configured and the domain
// has one; a domain without it (cgroup v2, the fake backend) runs the gate
// alone, with a warning for a cgroup domain. It reports whether it armed.
func (g *gateRunner) armHold(env controller.Env) bool {
	h, ok := env.Domain.(controller.OOMHolder)
	if g.holdTimeout <= 0 || !ok {
		return false
	}
	if err := h.SetOOMHold(true); err != nil {
		if env.Logger != nil {
			env.Logger.Warn("OOM hold off: the gate runs without it", "err", err)
		}
		return false
	}
	g.mu.Lock()
	g.holder, g.hold = h, &OOMHold{Timeout: g.holdTimeout, MaxWait: HoldMaxWait(g.holdTimeout)}
	g.mu.Unlock()
	return true
}

// progressed reports whether any sandbox used at least min CPU time since
// the previous observation (a sandbox seen for the first time counts from
// zero), and remembers this observation's CPU times. A sandbox missing from
// one observation (its stats read failed) keeps its previous time for the
// next. min filters the odd wakeup of an idle process or of a task retrying
// reclaim at the budget; a running tool uses far more.
func (g *gateRunner) progressed(smp []gate.Sample, min time.Duration) bool {
	prev := g.lastCPU
	g.lastCPU = make(map[string]cpuSeen, len(smp))
	moved := false
	for _, s := range smp {
		g.lastCPU[s.ID] = cpuSeen{cpu: s.CPU}
		if s.CPU-prev[s.ID].cpu >= max(min, 1) {
			moved = true
		}
	}
	for id, p := range prev {
		if _, ok := g.lastCPU[id]; !ok && !p.missed {
			g.lastCPU[id] = cpuSeen{cpu: p.cpu, missed: true}
		}
	}
	return moved
}

// cpuSeen is a sandbox's CPU time at the last observation that had it.
type cpuSeen struct {
	cpu    time.Duration
	missed bool // absent from the latest observation (kept for one more)
}

// stepHold reads the domain's under_oom flag once per gate iteration and
// acts on the hold's decision; progress says some sandbox used CPU since
// the previous iteration.
func (g *gateRunner) stepHold(env controller.Env, policyName string, progress bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holder == nil {
		return
	}
	under, err := g.holder.UnderOOM()
	if err != nil {
		env.Emit(controller.Event{Kind: controller.EventError, Policy: policyName, Error: "OOM hold: " + err.Error()})
		return
	}
	now := time.Now()
	if env.Clock != nil {
		now = env.Clock.Now()
	}
	since := g.hold.since
	ev := controller.Event{Kind: controller.EventHold, Policy: policyName, DurationS: now.Sub(since).Seconds()}
	switch g.hold.Step(now, under, progress) {
	case HoldBegan:
		ev.Reason, ev.DurationS = "began", 0
	case HoldResolved:
		ev.Reason = "resolved: memory freed, no kill"
	case HoldRelease:
		ev.Reason = "released to the OOM killer"
		if err := g.holder.SetOOMHold(false); err != nil {
			ev.Error = err.Error()
		}
	case HoldRearm:
		ev.Reason = "re-armed"
		if err := g.holder.SetOOMHold(true); err != nil {
			ev.Error = err.Error()
		}
	default:
		return
	}
	env.Emit(ev)
}

// disarmHold restores the kernel's OOM killer once the loop has stopped:
// tenon never leaves a domain holding allocations with nobody watching.
func (g *gateRunner) disarmHold() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holder == nil {
		return nil
	}
	err := g.holder.SetOOMHold(false)
	g.holder = nil
	if err != nil {
		return fmt.Errorf("releasing the OOM hold: %w", err)
	}
	return nil
}
