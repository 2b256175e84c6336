package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// admitPeriod is how often admission and agent pacing re-check their
// queues even without an event (physical headroom changes as memory is
// freed).
const admitPeriod = 50 * time.Millisecond

// ResidencyFactory builds the residency manager of a policy whose Spec has
// Residency, over what the machine publishes (ResidencyViews). It returns
// the manager and what to close at Stop, or an error, in which case
// sandboxes stay resident.
type ResidencyFactory func(h controller.SandboxHost, v ResidencyViews) (controller.Sandboxes, io.Closer, error)

// ResidencyViews is what a residency manager reads from the adapter.
type ResidencyViews struct {
	Pressure func() residency.Pressure // the machine's pressure
	Waiting  func() int                // actions waiting for admission (residency.Config.Waiting)
	Free     func() float64            // the domain's free share of its budget (residency.Config.Free)
	Need     func() int64              // what the pressure asks reclaim to free (residency.Config.Need)
	Sink     func(residency.Event)     // receives the manager's events
}

// Options are what the adapter needs besides the machine.
type Options struct {
	Logger *slog.Logger // nil: discard
	// Residency builds the residency manager for policies with Residency
	// (nil: sandboxes stay resident).
	Residency ResidencyFactory
	// Limits overrides how memory.high limits are put on sandboxes (tests);
	// nil detects the host's cgroup layout at Start.
	Limits Limiter
	// Measured, when set, receives every admitted action that ran (an
	// OOM-killed one too: its peak is a lower bound of its need) with its
	// memory above the sandbox's level at admission, the label a predictor
	// learns from. Only policies with admission measure that level. It is
	// called outside the adapter's lock and must not block.
	Measured func(predict.ActionRecord)
	// Pacing, when set, makes the gate pace denied sandboxes in a
	// scheduler (sched_ext) instead of freezing them; nil: the freezer.
	Pacing *Pacing
}

// Policy is a policy.Machine behind the controller.Policy interface.
type Policy struct {
	m    *policy.Machine
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	env      controller.Env
	starts   map[string]chan struct{}     // agents blocked in AgentReady
	grants   map[string]chan policy.Grant // agents blocked in ActionReady
	seq      uint64                       // grants handed out
	limited  map[string]bool              // sandboxes under a memory.high limit
	sbx      controller.SandboxStaller    // the residency manager, when it can stall sandboxes
	stats    Stats
	holder   controller.OOMHolder               // the armed hold's domain, nil when off
	holdLine controller.HoldLine                // the holder, when its hold freezes (v2); nil otherwise
	preempts map[string]context.CancelCauseFunc // running actions by agent (Preemptible)
	attempts map[string]context.CancelCauseFunc // attempts by agent (PreemptibleAttempt)
	loopStop context.CancelFunc
	loopDone chan struct{}
	gateLoop *gate.Loop
	pacer    *pacingActuator // the gate's pacing actuator, nil with the freezer
	// holdNoted is when the gate loop last logged what kept a wait under
	// the OOM hold going (noteHoldProgress); zero outside a wait. Only
	// the gate loop touches it.
	holdNoted time.Time
	kick      chan struct{}
	res       io.Closer
	views     views // read without p.mu (views.go)
}

// Stats counts what the adapter carried out.
type Stats struct {
	High, Low         int // actions granted per AgentCgroup class
	Limited           int // Low actions whose sandbox got a limit
	AdmittedByMachine int // actions admitted by the admission loop (not at once)
	// Pacing is the gate's pacing actuator's count (Options.Pacing);
	// zero with the freezer.
	Pacing PacingStats
}

var (
	_ controller.Policy                 = (*Policy)(nil)
	_ controller.SandboxManagerProvider = (*Policy)(nil)
	_ controller.Preempter              = (*Policy)(nil)
)

// New wraps m; m must not be used by anyone else.
func New(m *policy.Machine, opts Options) *Policy {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Policy{m: m, opts: opts, log: opts.Logger, starts: map[string]chan struct{}{},
		grants: map[string]chan policy.Grant{}, limited: map[string]bool{}, kick: make(chan struct{}, 1),
		preempts: map[string]context.CancelCauseFunc{}, attempts: map[string]context.CancelCauseFunc{}}
	p.publish()
	return p
}

// Build resolves a policy name (policy.Build) and wraps its machine.
func Build(name string, popts policy.Options, opts Options) (*Policy, error) {
	m, err := policy.Build(name, popts)
	if err != nil {
		return nil, err
	}
	return New(m, opts), nil
}

// Name is the policy's name.
func (p *Policy) Name() string { return p.m.Name() }

// Machine returns the decision core (read it only after Stop, or under no
// concurrent use).
func (p *Policy) Machine() *policy.Machine { return p.m }

// Stats returns the counters so far.
func (p *Policy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.stats
	if p.pacer != nil {
		st.Pacing = p.pacer.Stats()
	}
	return st
}

// Start arms the OOM hold where the domain has one, detects the cgroup
// layout for memory.high limits, and starts the gate and admission loops.
func (p *Policy) Start(ctx context.Context, env controller.Env) error {
	if env.Clock == nil {
		env.Clock = clock.Real{}
	}
	if env.Emit == nil {
		env.Emit = func(controller.Event) {}
	}
	if env.Logger != nil {
		p.log = env.Logger
	}
	cfg := p.m.Config()
	if (cfg.Gate || cfg.Admission) && env.Backend == nil {
		return fmt.Errorf("%w: %s needs a backend", policy.ErrBadOption, cfg.Name)
	}
	if cfg.Gate && env.Live == nil {
		return fmt.Errorf("%w: the gate needs a live-sandbox list", policy.ErrBadOption)
	}
	p.mu.Lock()
	p.env = env
	p.mu.Unlock()
	p.views.emit.Store(&env.Emit)
	p.armHold(env)
	if cfg.AgentCgroup && p.opts.Limits == nil {
		p.opts.Limits = detectLimiter(env.Clock, p.log)
	}
	if cfg.Gate || cfg.Admission || cfg.Residency {
		if err := p.startLoops(env); err != nil {
			return errors.Join(err, p.disarmHold())
		}
	}
	if err := ctx.Err(); err != nil {
		// Cancelled while starting (a bench interrupted between two
		// replays): a failed Start is not followed by Stop, so undo it
		// here; the loops would otherwise outlive the domain and observe
		// its removed cgroup every period.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startUndoTimeout)
		defer cancel()
		return errors.Join(err, p.Stop(sctx))
	}
	return nil
}

// startUndoTimeout bounds the Stop that undoes a cancelled Start.
const startUndoTimeout = 15 * time.Second

// Stop ends the loops, which allow every sandbox the gate denied, and
// disarms the OOM hold, lifts every memory limit and closes the residency
// manager.
func (p *Policy) Stop(ctx context.Context) error {
	var errs []error
	p.mu.Lock()
	stop, done := p.loopStop, p.loopDone
	p.loopStop = nil
	p.mu.Unlock()
	if stop != nil {
		stop()
		select {
		case <-done:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("stopping %s: %w", p.Name(), ctx.Err()))
		case <-time.After(10 * time.Second):
			errs = append(errs, fmt.Errorf("stopping %s: loops did not stop within 10s", p.Name()))
		}
	}
	errs = append(errs, p.disarmHold())
	if p.opts.Limits != nil {
		p.mu.Lock()
		ids := make([]string, 0, len(p.limited))
		for id := range p.limited {
			ids = append(ids, id)
		}
		p.mu.Unlock()
		for _, id := range ids {
			errs = append(errs, p.opts.Limits.Lift(id))
		}
		p.opts.Limits.Close()
	}
	p.mu.Lock()
	res := p.res
	p.res = nil
	p.mu.Unlock()
	if res != nil {
		errs = append(errs, res.Close())
	}
	return errors.Join(errs...)
}

// SandboxManager returns the residency manager when the policy has
// Residency and a factory was given, else the keep-resident default.
func (p *Policy) SandboxManager(h controller.SandboxHost) controller.Sandboxes {
	cfg := p.m.Config()
	if !cfg.Residency {
		return controller.NewResident(h)
	}
	if p.opts.Residency == nil {
		p.log.Warn("residency off: sandboxes stay resident", "policy", cfg.Name, "why", "no state directory for recovery records")
		return controller.NewResident(h)
	}
	mgr, closer, err := p.opts.Residency(h, ResidencyViews{Pressure: p.Pressure, Waiting: p.waitingActions, Free: p.freeShare, Need: p.reclaimNeed, Sink: p.residencyEvent})
	if err != nil {
		p.log.Warn("residency off: sandboxes stay resident", "err", err)
		return controller.NewResident(h)
	}
	p.mu.Lock()
	p.res = closer
	p.sbx, _ = mgr.(controller.SandboxStaller)
	p.mu.Unlock()
	return mgr
}

// staller is the residency manager's gate capability, nil without one.
func (p *Policy) staller() controller.SandboxStaller {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sbx
}

// AgentReady submits the attempt and blocks until the machine starts it.
func (p *Policy) AgentReady(ctx context.Context, a *controller.Agent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	obs := p.observer(ctx)
	started, err := p.m.Submit(p.env.Clock.Now(), a.ID, a.Attempt, a.Workflow, obs)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	ch := make(chan struct{})
	p.starts[a.ID] = ch
	p.startLocked(started)
	p.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	delete(p.starts, a.ID)
	p.startLocked(p.m.Withdraw(p.env.Clock.Now(), a.ID, p.observer(ctx)))
	p.mu.Unlock()
	p.poke()
	return ctx.Err()
}

// startLocked wakes the agents the machine started.
func (p *Policy) startLocked(ids []string) {
	for _, id := range ids {
		if ch := p.starts[id]; ch != nil {
			close(ch)
			delete(p.starts, id)
		}
	}
}

// AgentDone ends the attempt.
func (p *Policy) AgentDone(a *controller.Agent, _ error) {
	p.mu.Lock()
	p.startLocked(p.m.AgentEnd(p.env.Clock.Now(), a.ID, p.observer(context.Background())))
	p.mu.Unlock()
	p.poke()
}

// ActionReady blocks until the machine admits the action; a Low action of
// AgentCgroup gets its memory limit before it returns.
func (p *Policy) ActionReady(ctx context.Context, a *controller.Agent, act *trajectory.Action) (controller.Grant, error) {
	if err := ctx.Err(); err != nil {
		return controller.Grant{}, err
	}
	p.mu.Lock()
	g, ok, err := p.m.ActionReady(p.env.Clock.Now(), a.ID, a.Next, act, a.SandboxID)
	if err != nil {
		p.mu.Unlock()
		return controller.Grant{}, err
	}
	if ok {
		p.mu.Unlock()
		return p.grant(a, g), nil
	}
	ch := make(chan policy.Grant, 1)
	p.grants[a.ID] = ch
	p.publish() // one more action waits
	p.mu.Unlock()
	p.poke()
	select {
	case g := <-ch:
		return p.grant(a, g), nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	delete(p.grants, a.ID)
	p.m.CancelAction(p.env.Clock.Now(), a.ID) // waiting or admitted meanwhile: given back
	p.publish()
	p.mu.Unlock()
	p.poke()
	return controller.Grant{}, ctx.Err()
}

// grant turns the machine's grant into the driver's, applying its limit.
func (p *Policy) grant(a *controller.Agent, g policy.Grant) controller.Grant {
	p.mu.Lock()
	p.seq++
	out := controller.Grant{ID: p.seq, Charge: g.Charge, Heavy: g.Heavy, Peak: g.Peak}
	cfg := p.m.Config()
	limits := p.opts.Limits
	if cfg.AgentCgroup {
		if g.Limit > 0 {
			p.stats.Low++
		} else {
			p.stats.High++
			out.Heavy = true
		}
	}
	p.mu.Unlock()
	if g.Limit > 0 && limits != nil && a.SandboxID != "" {
		err := limits.Apply(a.SandboxID, g.Limit)
		p.mu.Lock()
		switch {
		case errors.Is(err, ErrNoLimiter): // no cgroup: classification only (logged once by the limiter)
		case err != nil:
			p.log.Warn("memory limit for a Low action", "agent", a.ID, "sandbox", a.SandboxID, "err", err)
		default:
			p.stats.Limited++
			p.limited[a.SandboxID] = true
			out.Token = limitToken(a.SandboxID)
		}
		p.mu.Unlock()
	}
	return out
}

// limitToken names the sandbox whose limit ActionDone lifts.
type limitToken string

// ActionDone ends the action: the machine releases its charge and learns
// what it measured; a memory limit is lifted.
func (p *Policy) ActionDone(a *controller.Agent, g controller.Grant, o controller.Outcome) {
	if id, ok := g.Token.(limitToken); ok && p.opts.Limits != nil {
		if err := p.opts.Limits.Lift(string(id)); err != nil {
			p.log.Warn("lifting a memory limit", "agent", a.ID, "err", err)
		}
		p.mu.Lock()
		delete(p.limited, string(id))
		p.mu.Unlock()
	}
	// What the sandbox keeps now the action ended: its floor, which agent
	// pacing counts (read before locking: it asks the backend).
	after, _ := p.observer(context.Background()).Memory(a.SandboxID)
	p.mu.Lock()
	now := p.env.Clock.Now()
	adm, measured := p.m.AdmittedIn(a.SandboxID, 0)
	err := p.m.ActionDone(now, a.ID, policy.Done{Index: o.Index, PeakBytes: o.PeakBytes,
		AvgBytes: o.AvgBytes, Duration: o.Duration, OOM: o.OOM || o.RolledBack, Lost: o.Err != nil && !o.RolledBack, AfterBytes: after})
	p.mu.Unlock()
	if err != nil {
		p.log.Warn("releasing an action", "agent", a.ID, "err", err)
	}
	if measured && o.Err == nil && p.opts.Measured != nil {
		if act := a.Action(); act != nil {
			p.opts.Measured(measurement(a, act, o, adm.Before, now))
		}
	}
	p.poke()
}

// measurement is the record of a's action act that ended at now with
// outcome o, its memory taken above before. The workflow id names the
// attempt (agent id and start time), so actions of a later attempt or a
// re-created agent of the same id form a history of their own.
func measurement(a *controller.Agent, act *trajectory.Action, o controller.Outcome, before int64, now time.Time) predict.ActionRecord {
	end := now.Sub(a.Started).Seconds()
	return predict.ActionRecord{Event: predict.EventActionDone,
		WorkflowID: a.ID + "@" + a.Started.UTC().Format(time.RFC3339Nano), Index: o.Index,
		Class: act.Class, Command: act.Command, Background: act.Hints.Background,
		PeakBytes: max(o.PeakBytes-before, 0), AvgBytes: max(o.AvgBytes-before, 0),
		DurationS: o.Duration.Seconds(), StartS: max(end-o.Duration.Seconds(), 0), EndS: end}
}

// SetModel swaps the machine's predictor (policy.Machine.SetModel) under
// the adapter's lock: actions that become ready afterwards use p.
func (p *Policy) SetModel(pred predict.Predictor) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m.SetModel(pred)
}

// SandboxUp prepares a memory limiter for the sandbox (AgentCgroup).
func (p *Policy) SandboxUp(_ *controller.Agent, info sandbox.Info) {
	if p.opts.Limits != nil && p.m.Config().AgentCgroup {
		p.opts.Limits.Add(info)
	}
}

// SandboxDown forgets the sandbox's limiter.
func (p *Policy) SandboxDown(_ *controller.Agent, id string) {
	if p.opts.Limits != nil {
		p.opts.Limits.Remove(id)
		p.mu.Lock()
		delete(p.limited, id)
		p.mu.Unlock()
	}
}

// poke wakes the admission loop.
func (p *Policy) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// AgentSlots is how many more agents the host can take now
// (policy.Machine.AgentSlots over the live domain and sandboxes): what a
// node agent publishes to a cluster scheduler. ok is false before Start
// and for a policy without agent pacing.
func (p *Policy) AgentSlots(ctx context.Context) (slots int, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.env.Clock == nil {
		return 0, false
	}
	return p.m.AgentSlots(p.env.Clock.Now(), p.observer(ctx))
}
