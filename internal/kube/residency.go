package kube

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/kube/suspend"
	"github.com/tenon-dev/tenon/internal/residency"
)

// Sandboxes is how Residency reaches agent-sandbox's Sandboxes; *Client is
// one.
type Sandboxes interface {
	// SetSandboxMode sets spec.operatingMode to ModeRunning or ModeSuspended.
	SetSandboxMode(ctx context.Context, ref SandboxRef, mode string) error
	// WatchSandboxes delivers every Sandbox, then their changes, until ctx
	// ends or the watch fails.
	WatchSandboxes(ctx context.Context, fn func(SandboxEvent)) error
}

var _ Sandboxes = (*Client)(nil)

// ResidencyConfig configures a Residency. Zero values take the documented
// defaults.
type ResidencyConfig struct {
	Node      string    // the node's name; Sandboxes whose pod runs elsewhere are not tenon's here. Required.
	Sandboxes Sandboxes // required
	// Pressure is the node's memory pressure (the gate's Q(t)); required.
	Pressure func() gate.Pressure
	// Machine tunes the decisions (the residency policy's parameters).
	Machine suspend.Config
	// Period is how often the policy runs besides every resume request;
	// default 100 ms (residency.Config.PressurePoll's).
	Period time.Duration
	// RetryWatch is the wait before watching again after a failed watch;
	// default 1 s.
	RetryWatch time.Duration
	Clock      clock.Clock // default clock.Real
	Log        *slog.Logger
}

// Residency suspends the node's idle, restart-safe agents' Sandboxes when
// the residency policy tears them down, and resumes them when they are
// needed again. Its methods are safe for concurrent use.
type Residency struct {
	cfg  ResidencyConfig
	kick chan struct{}

	mu      sync.Mutex
	m       *suspend.Machine
	tracked map[SandboxRef]*tracked
	stats   ResidencyStats
}

type tracked struct {
	restartSafe bool   // the Sandbox's annotation
	claim       string // controlling SandboxClaim's uid when last seen
}

// ResidencyStats counts what Residency did.
type ResidencyStats struct {
	Tracked, Suspends, Resumes, Failures int
	// SuspendCost and ResumeCost are the policy's current estimates: a
	// suspend's patch, a resume until the Sandbox is Ready.
	SuspendCost, ResumeCost time.Duration
}

// NewResidency returns a Residency; Run drives it.
func NewResidency(cfg ResidencyConfig) (*Residency, error) {
	if cfg.Node == "" || cfg.Sandboxes == nil || cfg.Pressure == nil {
		return nil, errors.New("kube: a Residency needs the node's name, a Sandboxes client and a pressure source")
	}
	if cfg.Period <= 0 {
		cfg.Period = 100 * time.Millisecond
	}
	if cfg.RetryWatch <= 0 {
		cfg.RetryWatch = time.Second
	}
	cfg.Clock, cfg.Log = clockAndLog(cfg.Clock, cfg.Log)
	return &Residency{
		cfg: cfg, kick: make(chan struct{}, 1),
		m: suspend.New(cfg.Machine), tracked: map[SandboxRef]*tracked{},
	}, nil
}

// Stats returns the counts so far.
func (r *Residency) Stats() ResidencyStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Tracked = len(r.tracked)
	s.SuspendCost, s.ResumeCost = r.m.Costs()
	return s
}

// Idle records an action-done boundary of the agent in ref's Sandbox
// after which it waits for its model: o is what the node agent saw (the
// restart-safe contract, residency.Check, decides the verdict; the
// Sandbox's RestartSafeAnnotation must also say "true"), workingSet the
// pod's memory, wait the predicted model wait (0 if unknown).
func (r *Residency) Idle(ref SandboxRef, o residency.Observation, workingSet int64, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tracked[ref]
	if !ok {
		return
	}
	v := residency.Check(o)
	r.m.Idle(ref.String(), r.cfg.Clock.Now(), suspend.Idle{
		WorkingSet: workingSet, Restartable: v.Restartable && t.restartSafe, PredictedWait: wait,
	})
}

// Resume is a resume request through tenon's API (or the agent's next
// action): the agent is needed, and its Sandbox, if suspended, runs again
// as soon as the pressure allows. It reports whether ref is tenon's here.
func (r *Residency) Resume(ref SandboxRef) bool {
	r.mu.Lock()
	_, ok := r.tracked[ref]
	if ok {
		r.m.Needed(ref.String())
	}
	r.mu.Unlock()
	if ok {
		r.poke()
	}
	return ok
}

// Suspended reports whether tenon suspended ref's Sandbox (or is
// suspending it) and has not decided to resume it yet.
func (r *Residency) Suspended(ref SandboxRef) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m.Suspended(ref.String())
}

func (r *Residency) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Observe takes a Sandbox event of the watch: it tracks the Sandboxes of
// this node (and keeps tracking those it suspended, whose pod is gone),
// forgets deleted ones, treats a new claim of a suspended one as a resume
// request and a Ready one as resumed.
func (r *Residency) Observe(ev SandboxEvent) {
	s := ev.Sandbox
	ref := s.Ref()
	id := ref.String()
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tracked[ref]
	mine := s.Status.NodeName == r.cfg.Node || ok && s.Status.NodeName == ""
	if ev.Type == Deleted || !mine {
		if ok {
			r.m.Forget(id)
			delete(r.tracked, ref)
		}
		return
	}
	if !ok {
		t = &tracked{claim: s.Claim()}
		r.tracked[ref] = t
		r.m.Track(id, s.Suspended())
	}
	t.restartSafe = s.RestartSafe()
	if c := s.Claim(); c != t.claim {
		t.claim = c
		if c != "" && s.Suspended() {
			r.m.Needed(id)
			r.poke()
		}
	}
	if s.Ready() && !s.Suspended() {
		r.m.Ready(id, r.cfg.Clock.Now())
	}
}

// Run watches the Sandboxes and runs the policy every Period and at every
// resume request, applying its decisions, until ctx ends.
func (r *Residency) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { r.watch(ctx) })
	defer wg.Wait()
	return every(ctx, r.cfg.Clock, r.cfg.Period, r.kick, func() { r.Step(ctx) })
}

// every runs step at once, then at every tick of period and every kick (nil:
// none), until ctx ends.
func every(ctx context.Context, c clock.Clock, period time.Duration, kick <-chan struct{}, step func()) error {
	tick, stop := c.NewTicker(period)
	defer stop()
	for {
		step()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
		case <-kick:
		}
	}
}

func (r *Residency) watch(ctx context.Context) {
	for ctx.Err() == nil {
		err := r.cfg.Sandboxes.WatchSandboxes(ctx, r.Observe)
		if ctx.Err() != nil {
			return
		}
		r.cfg.Log.Warn("watching sandboxes; watching again", "err", err, "in", r.cfg.RetryWatch)
		_ = clock.Sleep(ctx, r.cfg.Clock, r.cfg.RetryWatch)
	}
}

// Step runs the policy once at the current pressure and applies its
// decisions, one patch after another.
func (r *Residency) Step(ctx context.Context) {
	r.mu.Lock()
	ds := r.m.Tick(r.cfg.Clock.Now(), r.cfg.Pressure())
	r.mu.Unlock()
	for _, d := range ds {
		mode := ModeSuspended
		if d.Action == suspend.Resume {
			mode = ModeRunning
		}
		ref := refOf(d.ID)
		err := r.cfg.Sandboxes.SetSandboxMode(ctx, ref, mode)
		r.mu.Lock()
		r.m.Applied(d.ID, d.Action, r.cfg.Clock.Now(), err)
		switch {
		case err != nil:
			r.stats.Failures++
		case d.Action == suspend.Resume:
			r.stats.Resumes++
		default:
			r.stats.Suspends++
		}
		r.mu.Unlock()
		if err != nil {
			r.cfg.Log.Warn("setting sandbox mode", "sandbox", d.ID, "mode", mode, "err", err)
			continue
		}
		r.cfg.Log.Info("sandbox "+string(d.Action), "sandbox", d.ID, "mode", mode, "frees", d.Frees, "reason", d.Reason)
	}
}

// refOf is SandboxRef.String's inverse.
func refOf(id string) SandboxRef {
	ns, name, _ := strings.Cut(id, "/")
	return SandboxRef{Namespace: ns, Name: name}
}

// clockAndLog defaults a nil clock to clock.Real and a nil logger to one
// that discards.
func clockAndLog(c clock.Clock, l *slog.Logger) (clock.Clock, *slog.Logger) {
	if c == nil {
		c = clock.Real{}
	}
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return c, l
}
