package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
)

// Observer takes one observation snapshot of the workload domain.
type Observer func(ctx context.Context) (Observation, error)

// DefaultReleaseTimeout bounds the allow-everything pass of a stopping Loop.
const DefaultReleaseTimeout = 5 * time.Second

// DefaultActuateTimeout bounds one Allow or Deny of a running Loop. The
// loop is the only goroutine that thaws what it froze: were one freeze to
// wait for ever (a task that cannot freeze, such as a multithreaded
// process in execve waiting for its frozen threads to exit, keeps a v1
// group FREEZING), every sandbox it denied would stay frozen until its
// action's deadline. An actuation that runs out fails (the freezer thaws
// back: cgroup.Group.Freeze) and is tried again the next period. The bound
// leaves room for the slowest legitimate actuation: an Allow that pages a
// paged-out sandbox back in first (residency's UnstallSandbox) reads all
// of its memory back from zram.
const DefaultActuateTimeout = 5 * time.Second

// LoopOptions are the dependencies of a Loop. Observer, Actuator and
// either Controller or Step are required.
type LoopOptions struct {
	Controller *Controller
	// Step, when set, decides instead of Controller.Step: a policy that
	// owns the controller (policy.Machine) steps it with its own
	// extensions. Period is then the control period.
	Step           func(now time.Time, obs Observation) Decision
	Period         time.Duration
	Observer       Observer
	Actuator       Actuator
	Sink           func(Event)   // receives every event; nil drops them
	Clock          clock.Clock   // nil means clock.Real
	Logger         *slog.Logger  // nil means no logging
	ReleaseTimeout time.Duration // <= 0 means DefaultReleaseTimeout
	ActuateTimeout time.Duration // <= 0 means DefaultActuateTimeout
}

// Stats are a Loop's counters since it was created.
type Stats struct {
	Iterations     uint64 // completed control iterations
	Denials        uint64 // denial episodes begun
	Pauses         uint64 // denied Growing sandboxes relabelled PausedGrowing
	Allows         uint64 // deny→allow changes published
	ObserveErrors  uint64 // iterations skipped because the Observer failed
	ActuatorErrors uint64 // failed Allow or Deny calls
}

// Loop runs a Controller live: each control period it observes, steps the
// controller, and calls the actuator for every sandbox whose applied
// permission differs from the decision. One goroutine calls Run or Tick.
type Loop struct {
	opts    LoopOptions
	applied map[string]bool // permission last applied successfully (true = allow)

	mu   sync.Mutex
	last Decision

	iterations, denials, pauses, allows, observeErrs, actuatorErrs atomic.Uint64
}

// NewLoop checks opts and returns a Loop.
func NewLoop(opts LoopOptions) (*Loop, error) {
	if opts.Step == nil && opts.Controller != nil {
		opts.Step, opts.Period = opts.Controller.Step, opts.Controller.Config().Period
	}
	if opts.Step == nil || opts.Period <= 0 || opts.Observer == nil || opts.Actuator == nil {
		return nil, ErrLoopMisconfigured
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Sink == nil {
		opts.Sink = func(Event) {}
	}
	if opts.ReleaseTimeout <= 0 {
		opts.ReleaseTimeout = DefaultReleaseTimeout
	}
	if opts.ActuateTimeout <= 0 {
		opts.ActuateTimeout = DefaultActuateTimeout
	}
	return &Loop{opts: opts, applied: make(map[string]bool)}, nil
}

// Run ticks every control period until ctx is done, then allows every
// sandbox it knows (so none stays denied) and returns the release errors, if any.
func (l *Loop) Run(ctx context.Context) error {
	tick, stop := l.opts.Clock.NewTicker(l.opts.Period)
	defer stop()
	for {
		if ctx.Err() != nil {
			return l.release(ctx)
		}
		_, _ = l.Tick(ctx) // errors are reported through events and counters
		select {
		case <-ctx.Done():
			return l.release(ctx)
		case <-tick:
		}
	}
}

// Tick runs one control iteration: observe, Step, actuate the changes, log.
func (l *Loop) Tick(ctx context.Context) (Decision, error) {
	obs, err := l.opts.Observer(ctx)
	now := l.opts.Clock.Now()
	if err != nil {
		l.observeErrs.Add(1)
		err = fmt.Errorf("observing workload domain: %w", err)
		l.emit(Event{Time: now, Kind: EventObserveError, Err: err})
		l.opts.Logger.Warn("gate: observation failed; iteration skipped", "err", err)
		return Decision{}, err
	}
	d := l.opts.Step(now, obs)
	for _, ev := range d.Events {
		switch ev.Kind {
		case EventDeny:
			l.denials.Add(1)
		case EventPause:
			l.pauses.Add(1)
		case EventAllow:
			l.allows.Add(1)
		case EventRemoved:
			l.forget(ctx, now, ev.Sandbox)
		}
		l.emit(ev)
	}
	var errs []error
	for _, sd := range d.Sandboxes {
		if cur, ok := l.applied[sd.ID]; ok && cur == sd.Allowed {
			continue
		}
		if err := l.apply(ctx, sd.ID, sd.Allowed); err != nil {
			delete(l.applied, sd.ID) // unknown state: re-apply next iteration
			errs = append(errs, err)
			l.actuatorErrs.Add(1)
			l.emit(Event{Time: now, Kind: EventActuatorError, Sandbox: sd.ID, Pressure: d.Pressure, B: d.B, Err: err})
			continue
		}
		l.applied[sd.ID] = sd.Allowed
	}
	l.iterations.Add(1)
	l.emit(Event{Time: now, Kind: EventIteration, Pressure: d.Pressure, B: d.B, Permitted: d.Permitted, Denied: d.Denied})
	l.opts.Logger.Debug("gate: iteration", "pressure", d.Pressure.String(), "b", d.B,
		"permitted", len(d.Permitted), "denied", len(d.Denied), "available", d.Available, "r_prev", d.RPrev)
	l.mu.Lock()
	l.last = d
	l.mu.Unlock()
	return d, errors.Join(errs...)
}

func (l *Loop) apply(ctx context.Context, id string, allow bool) error {
	ctx, cancel := context.WithTimeout(ctx, l.opts.ActuateTimeout)
	defer cancel()
	if allow {
		return l.opts.Actuator.Allow(ctx, id)
	}
	return l.opts.Actuator.Deny(ctx, id)
}

// forget drops a removed sandbox; if it was denied it is allowed once, best
// effort, so a sandbox that finished while denied is not left frozen.
func (l *Loop) forget(ctx context.Context, now time.Time, id string) {
	allowed, ok := l.applied[id]
	delete(l.applied, id)
	if ok && !allowed {
		if err := l.apply(ctx, id, true); err != nil {
			l.actuatorErrs.Add(1)
			l.emit(Event{Time: now, Kind: EventActuatorError, Sandbox: id, Err: err})
		}
	}
}

// release allows every known sandbox, then lets the actuator release
// whatever else it holds.
func (l *Loop) release(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.opts.ReleaseTimeout)
	defer cancel()
	ids := make([]string, 0, len(l.applied))
	for id := range l.applied {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var errs []error
	for _, id := range ids {
		if err := l.opts.Actuator.Allow(rctx, id); err != nil {
			errs = append(errs, err)
			continue
		}
		l.applied[id] = true
	}
	if c, ok := l.opts.Actuator.(interface{ Close(context.Context) error }); ok {
		errs = append(errs, c.Close(rctx))
	}
	err := errors.Join(errs...)
	l.emit(Event{Time: l.opts.Clock.Now(), Kind: EventReleased, Permitted: ids, Err: err})
	if err != nil {
		l.opts.Logger.Error("gate: releasing sandboxes on shutdown", "err", err)
	}
	return err
}

func (l *Loop) emit(ev Event) { l.opts.Sink(ev) }

// Stats returns the counters; safe to call from any goroutine.
func (l *Loop) Stats() Stats {
	return Stats{
		Iterations: l.iterations.Load(), Denials: l.denials.Load(), Pauses: l.pauses.Load(),
		Allows: l.allows.Load(), ObserveErrors: l.observeErrs.Load(), ActuatorErrors: l.actuatorErrs.Load(),
	}
}

// Last returns the most recent decision; safe to call from any goroutine.
func (l *Loop) Last() Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}
