package live

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// observer reads the live domain for the machine: the domain's available
// memory (the budget when there is no domain or it cannot be read) and a
// sandbox's memory through the backend.
type observer struct {
	ctx context.Context
	env controller.Env
}

func (o observer) Available() int64 {
	if o.env.Domain != nil {
		if v, err := o.env.Domain.Available(); err == nil {
			return v
		}
	}
	return o.env.Budget
}

func (o observer) Memory(id string) (int64, bool) {
	if id == "" || o.env.Backend == nil {
		return 0, false
	}
	if r, ok := o.env.Backend.(sandbox.MemoryReader); ok {
		v, err := r.Memory(o.ctx, id)
		return v, err == nil
	}
	st, err := o.env.Backend.Stats(o.ctx, id)
	if err != nil {
		return 0, false
	}
	return st.Memory, true
}

func (p *Policy) observer(ctx context.Context) policy.Observer { return observer{ctx: ctx, env: p.env} }

// startLoops starts the gate loop (every control period: observe, step
// the machine, actuate) and the admission loop (every admitPeriod or when
// poked: the machine's Tick).
func (p *Policy) startLoops(env controller.Env) error {
	loop, err := p.newGateLoop(env)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p.mu.Lock()
	p.gateLoop, p.loopStop, p.loopDone = loop, cancel, done
	p.mu.Unlock()
	gateDone := make(chan struct{})
	go func() {
		defer close(gateDone)
		_ = loop.Run(ctx) // release errors are reported through the sink
	}()
	go func() {
		defer close(done)
		p.admitLoop(ctx, env)
		<-gateDone
	}()
	return nil
}

// newGateLoop is the gate loop over env: it observes the domain and every
// live sandbox, steps the machine (policy.Machine.Sample), acts on the OOM
// hold's decision and pauses or resumes sandboxes as the gate decided.
func (p *Policy) newGateLoop(env controller.Env) (*gate.Loop, error) {
	cfg := p.m.Config()
	act, pacer := p.actuator(env)
	p.mu.Lock()
	p.pacer = pacer
	p.mu.Unlock()
	var underOOM, above bool       // read by the observer, used by step; both run on the gate loop's goroutine
	var last map[string]lastSample // each sandbox's last sample, the observer's alone
	observe := func(ctx context.Context) (gate.Observation, error) {
		if pacer != nil {
			pacer.handover(ctx)
		}
		obs := gate.Observation{Budget: env.Budget, Available: env.Budget}
		if env.Domain != nil {
			avail, err := env.Domain.Available()
			if err != nil {
				return obs, fmt.Errorf("reading domain memory: %w", err)
			}
			obs.Available = avail
		}
		underOOM, above = false, false
		p.mu.Lock()
		holder, line := p.holder, p.holdLine
		p.mu.Unlock()
		if holder != nil {
			under, err := holder.UnderOOM()
			if err != nil {
				env.Emit(controller.Event{Kind: controller.EventError, Policy: cfg.Name, Error: "OOM hold: " + err.Error()})
			}
			underOOM = under
		}
		if line != nil {
			a, err := line.AboveHoldLine()
			if err != nil {
				// Unknown: keep what the hold froze frozen this period.
				a = true
				env.Emit(controller.Event{Kind: controller.EventError, Policy: cfg.Name, Error: "OOM hold: " + err.Error()})
			}
			above = a
		}
		// Only the gate and the OOM hold look at the sandboxes; without
		// them the period samples the domain's available memory alone.
		// Their threads' states are read only where the hold waits or may
		// begin to (policy.Machine.WantsThreads).
		if (cfg.Gate || p.m.HoldArmed()) && env.Live != nil && env.Backend != nil {
			p.mu.Lock()
			threads := p.m.WantsThreads(underOOM, above)
			p.mu.Unlock()
			read := env.Backend.Stats
			if sm, ok := env.Backend.(sandbox.Sampler); ok {
				read = func(ctx context.Context, id string) (sandbox.Stats, error) { return sm.Sample(ctx, id, threads) }
			}
			seen := make(map[string]lastSample, len(last))
			for _, ls := range env.Live() {
				id := ls.Info.ID
				st, err := read(ctx, id)
				if err != nil {
					if s, keep := carrySample(last[id], err); keep {
						if s.misses == 1 {
							env.Emit(controller.Event{Kind: controller.EventError, Policy: cfg.Name, Sandbox: id,
								Error: "gate: reading the sandbox failed, its last sample stands in: " + err.Error()})
						}
						seen[id] = s
						obs.Sandboxes = append(obs.Sandboxes, s.s)
					}
					continue
				}
				s := gate.Sample{ID: id, Footprint: st.Memory, CPU: st.CPU, MemStall: st.MemStall, Blocked: st.Blocked, Frozen: st.Frozen, Procs: st.Procs}
				seen[id] = lastSample{s: s}
				obs.Sandboxes = append(obs.Sandboxes, s)
			}
			last = seen
		}
		return obs, nil
	}
	step := func(now time.Time, obs gate.Observation) gate.Decision {
		p.mu.Lock()
		st := p.m.Sample(now, policy.Observation{Available: obs.Available, Sandboxes: obs.Sandboxes, UnderOOM: underOOM, AboveHoldLine: above})
		p.publish()
		p.mu.Unlock()
		p.applyHold(env, st)
		return st.Gate
	}
	period := cfg.GateConfig.Period
	loop, err := gate.NewLoop(gate.LoopOptions{Step: step, Period: period, Observer: observe,
		Actuator: act, Sink: p.gateSink(env), Logger: p.log, Clock: env.Clock})
	return loop, err
}

// staleReads is how many periods in a row a sandbox whose reads fail keeps
// its last sample before the gate drops it (a second at the default
// period).
const staleReads = 10

// lastSample is a sandbox's last sample and how many reads in a row have
// failed since.
type lastSample struct {
	s      gate.Sample
	misses int
}

// carrySample decides what stands in for a sandbox whose read failed with
// err, given its last sample (zero if none): a sandbox that is gone
// (sandbox.ErrNotFound, or its files removed) or never read, or whose
// reads failed staleReads periods in a row, is dropped (keep false: the
// gate forgets it and thaws it if it held it back); otherwise its last
// sample stands in, so that one failed read of a live sandbox neither
// thaws it nor resets its growth budget.
func carrySample(prev lastSample, err error) (lastSample, bool) {
	if errors.Is(err, sandbox.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || prev.s.ID == "" || prev.misses >= staleReads-1 {
		return lastSample{}, false
	}
	prev.misses++
	return prev, true
}

// actuator is the gate's actuator: the freezer, or with Options.Pacing the
// pacing actuator (which hands long denials over to the freezer), returned
// also as itself for the loop's handover.
func (p *Policy) actuator(env controller.Env) (gate.Actuator, *pacingActuator) {
	freezer := backendActuator{b: env.Backend, staller: p.staller}
	if p.opts.Pacing == nil || env.Backend == nil {
		return freezer, nil
	}
	a := newPacingActuator(*p.opts.Pacing, env.Backend, freezer, env.Clock.Now, p.log)
	return a, a
}

// admitLoop runs the machine's Tick every admitPeriod and when poked.
func (p *Policy) admitLoop(ctx context.Context, env controller.Env) {
	for {
		p.schedule(ctx)
		p.pace(ctx)
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		case <-env.Clock.After(admitPeriod):
		}
	}
}

// schedule runs admission (policy.Machine.Schedule) and wakes the actions
// it admitted.
func (p *Policy) schedule(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	grants := p.m.Schedule(p.env.Clock.Now(), p.observer(ctx))
	if len(grants) > 0 {
		p.publish() // fewer actions wait
	}
	for _, g := range grants {
		if ch := p.grants[g.Agent]; ch != nil {
			ch <- g
			delete(p.grants, g.Agent)
		}
	}
	p.stats.AdmittedByMachine += len(grants)
}

// pace runs agent pacing (policy.Machine.Pace) and wakes the agents it
// started.
func (p *Policy) pace(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.startLocked(p.m.Pace(p.env.Clock.Now(), p.observer(ctx)))
}

// gateSink writes the gate loop's events to the run's event log: an
// iteration only when its decision changed. Without a gate the loop only
// samples the domain for the machine's pressure: only its errors are
// written.
func (p *Policy) gateSink(env controller.Env) func(gate.Event) {
	name := p.Name()
	hasGate := p.m.Config().Gate
	var last gate.Event
	return func(e gate.Event) {
		if !hasGate && e.Kind != gate.EventObserveError && e.Kind != gate.EventActuatorError {
			return
		}
		switch e.Kind {
		case gate.EventIteration:
			if e.Pressure == last.Pressure && e.B == last.B && slices.Equal(e.Permitted, last.Permitted) && slices.Equal(e.Denied, last.Denied) && last.Kind != "" {
				return
			}
			last = e
			env.Emit(controller.Event{Kind: controller.EventGate, Policy: name, Pressure: e.Pressure.String(), B: e.B,
				Permitted: slices.Clone(e.Permitted), Denied: slices.Clone(e.Denied)})
		case gate.EventDeny:
			env.Emit(controller.Event{Kind: controller.EventPause, Policy: name, Sandbox: e.Sandbox, Reason: "gate deny (" + e.Pressure.String() + ")"})
		case gate.EventAllow:
			env.Emit(controller.Event{Kind: controller.EventResume, Policy: name, Sandbox: e.Sandbox, Reason: "gate allow (" + e.Pressure.String() + ")"})
		case gate.EventPressure:
			env.Emit(controller.Event{Kind: "pressure", Policy: name, Reason: e.From + "->" + e.To})
		case gate.EventBudget:
			env.Emit(controller.Event{Kind: "gate_budget", Policy: name, Reason: e.From + "->" + e.To})
		case gate.EventObserveError, gate.EventActuatorError:
			if errors.Is(e.Err, residency.ErrThawDeferred) {
				return // not a failure: the gate asks again next iteration
			}
			msg := ""
			if e.Err != nil {
				msg = e.Err.Error()
			}
			env.Emit(controller.Event{Kind: controller.EventError, Policy: name, Sandbox: e.Sandbox, Error: "gate: " + msg})
		}
	}
}

// backendActuator pauses and resumes sandboxes through the backend (the
// process backend's Pause is a verified cgroup freeze). A sandbox that is
// gone needs nothing. With a residency manager that can (staller), a
// denied sandbox is stalled, so that red may page it out while it stays
// frozen, and an allowed one that was paged out meanwhile is paged back in
// (which thaws it) instead of resumed, or left frozen until its memory
// can come back (Allow then fails with residency.ErrThawDeferred and the
// gate asks again next iteration).
type backendActuator struct {
	b       sandbox.Backend
	staller func() controller.SandboxStaller // nil, or returns nil: none
}

func (a backendActuator) Name() string { return "freezer" }

func (a backendActuator) Allow(ctx context.Context, id string) error {
	if st := a.stallerNow(); st != nil {
		if paged, err := st.UnstallSandbox(ctx, id); paged {
			return err
		}
	}
	if err := a.b.Resume(ctx, id); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
		return err
	}
	return nil
}

func (a backendActuator) Deny(ctx context.Context, id string) error {
	if err := a.b.Pause(ctx, id); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
		return err
	}
	if st := a.stallerNow(); st != nil {
		st.StallSandbox(id)
	}
	return nil
}

func (a backendActuator) stallerNow() controller.SandboxStaller {
	if a.staller == nil {
		return nil
	}
	return a.staller()
}

// armHold arms the domain's OOM hold when the machine runs one and the
// domain has it; otherwise the machine runs without it (with a warning
// when arming failed).
func (p *Policy) armHold(env controller.Env) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.m.HoldArmed() {
		return
	}
	h, ok := env.Domain.(controller.OOMHolder)
	if !ok {
		p.log.Warn("OOM hold off: the gate runs without it", "why", "the workload domain has no OOM hold (a simulated backend)")
		p.m.DisableHold()
		return
	}
	if err := h.SetOOMHold(true); err != nil {
		p.log.Warn("OOM hold off: the gate runs without it", "err", err)
		p.m.DisableHold()
		return
	}
	p.holder = h
	if env.RestartsPreempted {
		// The driver restarts a preempted attempt: a deadlocked wait
		// preempts one action instead of releasing (policy's
		// hold_preempt.go).
		p.m.SetHoldPreempt()
		if env.PreemptsIdle {
			// It also restarts an attempt that runs no action: a
			// deadlock of idle sandboxes preempts one of them.
			p.m.SetHoldPreemptIdle()
		}
	}
	if env.RerunsRolledBack {
		// The driver runs a rolled-back action again: an action stuck far
		// past its reservation is killed and rerun (policy's
		// hold_rollback.go).
		p.m.SetHoldRollback()
	}
	if l, ok := h.(controller.HoldLine); ok && l.HoldFreezes() {
		// v2: the kernel only throttles above the line; the gate loop
		// freezes the allocators (policy's freezing hold).
		p.m.SetHoldFreeze()
		p.holdLine = l
	}
}

// applyHold acts on the hold's step: HoldRelease lets the kernel's OOM
// killer act, HoldRearm arms the hold again; every change is logged.
func (p *Policy) applyHold(env controller.Env, st policy.Step) {
	p.mu.Lock()
	h := p.holder
	p.mu.Unlock()
	if h == nil {
		return
	}
	if r := st.Rollback; r.Agent != "" {
		ev := controller.Event{Kind: controller.EventHold, Policy: p.Name(), Workflow: r.Agent, Sandbox: r.Sandbox,
			Reason: "past its reservation: rolled back"}
		if !p.kill(r.Agent, controller.ErrRolledBack) {
			ev.Error = "the rolled-back action had already ended"
		}
		env.Emit(ev)
	}
	if st.Hold == policy.HoldNone {
		p.noteHoldProgress(env, st.HoldProgress)
		return
	}
	p.holdNoted = time.Time{}
	ev := controller.Event{Kind: controller.EventHold, Policy: p.Name(), DurationS: st.Held.Seconds()}
	switch st.Hold {
	case policy.HoldBegan:
		ev.Reason = "began"
	case policy.HoldResolved:
		ev.Reason = "resolved: memory freed, no kill"
	case policy.HoldRelease:
		ev.Reason = "released to the OOM killer"
		if err := h.SetOOMHold(false); err != nil {
			ev.Error = err.Error()
		}
	case policy.HoldRearm:
		ev.Reason = "re-armed"
		if err := h.SetOOMHold(true); err != nil {
			ev.Error = err.Error()
		}
	case policy.HoldPreempt:
		ev.Reason, ev.Workflow, ev.Sandbox = "deadlock: preempted", st.Preempt.Agent, st.Preempt.Sandbox
		switch {
		case st.Preempt.Idle:
			ev.Reason = "deadlock: preempted an idle attempt"
			if !p.cancel(p.attempts, st.Preempt.Agent, controller.ErrPreempted) {
				ev.Error = "the preempted attempt had already ended"
			}
		case !p.kill(st.Preempt.Agent, controller.ErrPreempted):
			ev.Error = "the preempted action had already ended"
		}
	}
	env.Emit(ev)
}

// holdNoteEvery is how often a long wait under the OOM hold logs what
// keeps it from timing out.
const holdNoteEvery = 10 * time.Second

// noteHoldProgress logs, once per holdNoteEvery of a wait under the hold,
// what counted as progress (policy.Step.HoldProgress): a wait that lasts
// far beyond the hold's timeout names the sandbox that keeps it going.
// Called from the gate loop only.
func (p *Policy) noteHoldProgress(env controller.Env, by string) {
	if by == "" {
		return
	}
	now := env.Clock.Now()
	if p.holdNoted.IsZero() {
		p.holdNoted = now // the wait's first progress: log from holdNoteEvery on
		return
	}
	if now.Sub(p.holdNoted) < holdNoteEvery {
		return
	}
	p.holdNoted = now
	sb := by[strings.IndexByte(by, ' ')+1:]
	env.Emit(controller.Event{Kind: controller.EventHold, Policy: p.Name(), Sandbox: sb,
		Reason: "waiting: progress by " + by})
}

// Preemptible runs a's action under a context the OOM hold's preemption
// cancels (controller.Preempter).
func (p *Policy) Preemptible(ctx context.Context, a *controller.Agent) (context.Context, func()) {
	return p.cancellable(ctx, p.preempts, a.ID)
}

// PreemptibleAttempt runs a's attempt under a context the OOM hold's idle
// preemption cancels (controller.AttemptPreempter).
func (p *Policy) PreemptibleAttempt(ctx context.Context, a *controller.Agent) (context.Context, func()) {
	return p.cancellable(ctx, p.attempts, a.ID)
}

// cancellable returns a context under ctx that cancel(m, id, cause)
// cancels until the returned func is called.
func (p *Policy) cancellable(ctx context.Context, m map[string]context.CancelCauseFunc, id string) (context.Context, func()) {
	actx, cancel := context.WithCancelCause(ctx)
	p.mu.Lock()
	m[id] = cancel
	p.mu.Unlock()
	return actx, func() {
		p.mu.Lock()
		delete(m, id)
		p.mu.Unlock()
		cancel(nil)
	}
}

// kill kills agent id's running action with cause (controller.
// ErrPreempted or ErrRolledBack); false when none runs.
func (p *Policy) kill(id string, cause error) bool { return p.cancel(p.preempts, id, cause) }

// cancel cancels agent id's context in m (p.preempts or p.attempts) with
// cause; false when it has none.
func (p *Policy) cancel(m map[string]context.CancelCauseFunc, id string, cause error) bool {
	p.mu.Lock()
	cancel := m[id]
	p.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel(cause)
	return true
}

// disarmHold restores the kernel's OOM killer once the loops have
// stopped: tenon never leaves a domain holding allocations with nobody
// watching.
func (p *Policy) disarmHold() error {
	p.mu.Lock()
	h := p.holder
	p.holder, p.holdLine = nil, nil
	p.mu.Unlock()
	if h == nil {
		return nil
	}
	if err := h.SetOOMHold(false); err != nil {
		return fmt.Errorf("releasing the OOM hold: %w", err)
	}
	return nil
}
