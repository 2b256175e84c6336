package policy

import (
	"context"
	"errors"
	"fmt"

	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/admission"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/residency/managed"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TenonConfig selects tenon's mechanisms; each can be switched off for the
// ablations of seed 000 Table 4.
type TenonConfig struct {
	Name string // policy name in reports

	Gate       bool        // runtime execution gate (Algorithm 1)
	GateConfig gate.Config // zero fields take the Table 5 defaults
	// Hold is how long the gate lets tasks wait at the budget under the
	// domain's OOM hold (hold.go) with no sandbox making progress before the
	// OOM killer acts (at most 10× that in all): 0 means the gate's DMax on
	// the replay's clock, < 0 turns the hold off.
	Hold time.Duration

	// Admission turns on water-level action admission (§3.4) with
	// Predictor's descriptors; Predictor is required when it is on.
	Admission       bool
	Predictor       predict.Predictor
	AdmissionConfig admission.Config // zero fields: defaults scaled to the budget
	// AgentReserve is the headroom a new agent must leave free beyond its
	// first action's predicted peak (room for a heavy action of the agents
	// already running); see admitter.agentReady.
	AgentReserve int64
	// Margin is the physical safety margin of admission in bytes; 0 means
	// AdmissionMargin's default (one red region of the gate, at least S:
	// 12.5 % of the budget with Table 5's regions).
	Margin int64

	// Residency tears idle restart-safe sandboxes down under pressure and
	// rematerializes them on demand (seed 000 §3.4); it needs StateDir and a
	// backend that can capture and restore writable layers, and falls back
	// to keeping sandboxes resident otherwise.
	Residency bool
	StateDir  string
	TimeScale float64
}

// Tenon is tenon's policy: the mechanisms of TenonConfig working together.
type Tenon struct {
	controller.Nop
	cfg   TenonConfig
	gate  *gateRunner
	admit *admitter

	mu   sync.Mutex
	res  io.Closer                // the residency manager, when one was made
	emit func(e controller.Event) // the run's event log, once started
	log  *slog.Logger
}

var _ controller.SandboxManagerProvider = (*Tenon)(nil)

// SandboxManager returns the residency manager when residency is on and
// the backend supports it, else the keep-resident default.
func (t *Tenon) SandboxManager(h controller.SandboxHost) controller.Sandboxes {
	if !t.cfg.Residency || t.cfg.StateDir == "" {
		return controller.NewResident(h)
	}
	cfg := managed.Config{StateDir: filepath.Join(t.cfg.StateDir, "residency"), TimeScale: t.cfg.TimeScale}
	cfg.Residency.Sink = t.residencyEvent
	m, err := managed.NewManager(cfg, h, t.residencyPressure, t.log)
	if err != nil {
		if t.log != nil {
			t.log.Warn("residency off: sandboxes stay resident", "err", err)
		}
		return controller.NewResident(h)
	}
	t.mu.Lock()
	t.res = m
	t.mu.Unlock()
	return m
}

// residencyEvent writes the residency manager's boundary, teardown and
// rematerialization events to the run's event log.
func (t *Tenon) residencyEvent(e residency.Event) {
	t.mu.Lock()
	emit := t.emit
	t.mu.Unlock()
	if emit == nil {
		return
	}
	ev := controller.Event{Policy: t.cfg.Name, Workflow: e.Agent, Sandbox: e.Sandbox, Reason: e.Reason, Error: e.Error}
	switch e.Kind {
	case residency.EventBoundary:
		ev.Kind, ev.Restartable = controller.EventBoundary, strings.HasPrefix(e.Reason, residency.LabelRestartable)
	case residency.EventTeardown:
		ev.Kind, ev.BytesCaptured, ev.StateBytes, ev.WorkingSetBytes = controller.EventTeardown, e.Bytes, e.StateBytes, e.WorkingSet
		ev.DurationS = e.Duration.Seconds()
	case residency.EventRemat:
		ev.Kind, ev.DurationS = controller.EventRemat, e.Duration.Seconds()
	case residency.EventTeardownFailed, residency.EventRematFailed, residency.EventAgentLost, residency.EventDestroyFailed:
		ev.Kind, ev.Reason = controller.EventError, "residency "+string(e.Kind)
		ev.DurationS = e.Duration.Seconds()
	default:
		return
	}
	emit(ev)
}

// residencyPressure is the gate's pressure state (green without a gate).
func (t *Tenon) residencyPressure() residency.Pressure {
	if t.gate == nil {
		return residency.Green
	}
	return t.gate.currentPressure()
}

var _ controller.Policy = (*Tenon)(nil)

// NewTenon builds the policy described by cfg.
func NewTenon(cfg TenonConfig) (*Tenon, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("%w: tenon policy needs a name", ErrBadOption)
	}
	t := &Tenon{cfg: cfg}
	if cfg.Gate {
		gc := scaledGate(cfg.GateConfig, cfg.TimeScale)
		g, err := newGateRunner(gc)
		if err != nil {
			return nil, err
		}
		g.holdTimeout = HoldTimeout(cfg.Hold, gc)
		t.gate = g
	}
	if cfg.Admission {
		if cfg.Predictor == nil {
			return nil, fmt.Errorf("%w: admission needs a predictor", ErrBadOption)
		}
		t.admit = newAdmitter(cfg.Predictor, cfg.Margin)
		t.admit.reserve = cfg.AgentReserve
		t.admit.gateCfg = cfg.GateConfig
	}
	return t, nil
}

// Name returns the configured name.
func (t *Tenon) Name() string { return t.cfg.Name }

// Start launches the gate loop when the gate is on.
func (t *Tenon) Start(ctx context.Context, env controller.Env) error {
	t.log = env.Logger
	t.mu.Lock()
	t.emit = env.Emit
	t.mu.Unlock()
	if t.gate != nil {
		var needs func() map[string][2]int64
		if t.admit != nil {
			needs = t.admit.needs
		}
		if err := t.gate.start(env, t.cfg.Name, needs); err != nil {
			return fmt.Errorf("starting the gate: %w", err)
		}
	}
	if t.admit != nil {
		t.admit.start(env, t.cfg.AdmissionConfig)
	}
	return ctx.Err()
}

// Stop stops the gate, which resumes every sandbox it paused.
func (t *Tenon) Stop(ctx context.Context) error {
	var errs []error
	if t.gate != nil {
		errs = append(errs, t.gate.stop(ctx))
	}
	if t.admit != nil {
		t.admit.close()
	}
	t.mu.Lock()
	res := t.res
	t.res = nil
	t.mu.Unlock()
	if res != nil {
		errs = append(errs, res.Close())
	}
	return errors.Join(errs...)
}

// ActionReady waits for admission when it is on.
func (t *Tenon) ActionReady(ctx context.Context, a *controller.Agent, act *trajectory.Action) (controller.Grant, error) {
	if t.admit == nil {
		return controller.Grant{}, ctx.Err()
	}
	return t.admit.ready(ctx, a, act, t.cfg.Name)
}

// ActionDone releases the action's admission charge.
func (t *Tenon) ActionDone(a *controller.Agent, g controller.Grant, o controller.Outcome) {
	if t.admit == nil {
		return
	}
	if err := t.admit.done(a, g, o); err != nil && t.admit.env.Logger != nil {
		t.admit.env.Logger.Warn("releasing admission charge", "agent", a.ID, "err", err)
	}
}

// AgentReady paces new agents when admission is on (see admitter.agentReady).
func (t *Tenon) AgentReady(ctx context.Context, a *controller.Agent) error {
	if t.admit == nil {
		return ctx.Err()
	}
	var pressure func() gate.Pressure
	if t.gate != nil {
		pressure = t.gate.currentPressure
	}
	return t.admit.agentReady(ctx, a, pressure)
}

// AgentDone forgets the attempt's prediction history.
func (t *Tenon) AgentDone(a *controller.Agent, _ error) {
	if t.admit != nil {
		t.admit.forget(a)
		t.admit.agentDone()
	}
}

// GateStats returns the gate's counters (zero when the gate is off).
func (t *Tenon) GateStats() gate.Stats {
	if t.gate == nil {
		return gate.Stats{}
	}
	return t.gate.stats()
}

// variant is one registered configuration of the tenon policy.
type variant struct {
	name, help      string
	gate, admission bool
	predictor       string
	alwaysResident  bool
}

// variants are tenon and its ablations (seed 000 Table 4).
var variants = []variant{
	{name: "tenon", help: "tenon: predicted-memory admission + growth gate (the full policy)", gate: true, admission: true, predictor: PredCurrent},
	{name: "gate", help: "runtime execution gate alone: pause fast-growing sandboxes under pressure (seed 000 Algorithm 1)", gate: true},
	{name: "admission", help: "water-level action admission alone, current predictor", admission: true, predictor: PredCurrent},
	{name: "tenon-always-resident", help: "ablation: tenon keeping every sandbox resident (no teardown)", gate: true, admission: true, predictor: PredCurrent, alwaysResident: true},
	{name: "tenon-no-admission", help: "ablation: tenon without admission control", gate: true},
	{name: "tenon-no-gate", help: "ablation: tenon without memory-growth control", admission: true, predictor: PredCurrent},
	{name: "tenon-static-pred", help: "ablation: tenon with the static predictor (class and command only)", gate: true, admission: true, predictor: PredStatic},
	{name: "tenon-history-pred", help: "ablation: tenon with the history-only predictor", gate: true, admission: true, predictor: PredHistory},
}

func (v variant) build(opts Options) (controller.Policy, error) {
	cfg := TenonConfig{Name: v.name, Gate: v.gate, Admission: v.admission,
		Residency: v.residency(), StateDir: opts.StateDir, TimeScale: opts.TimeScale}
	if err := ApplyTenonParams(&cfg, opts.Params); err != nil {
		return nil, err
	}
	if v.admission {
		cfg.AgentReserve = AgentReserve(opts.Workflows, opts.Budget)
		heavy := opts.Budget / 8
		switch {
		case opts.Predictor != nil && v.predictor == PredCurrent:
			cfg.Predictor = opts.Predictor
		default:
			p, err := TrainPredictor(v.predictor, opts.Workflows, heavy, 1)
			if err != nil {
				return nil, fmt.Errorf("policy %s: %w", v.name, err)
			}
			cfg.Predictor = p
		}
	}
	return NewTenon(cfg)
}

func init() {
	for _, v := range variants {
		Register(Entry{Name: v.name, Help: v.help, New: func(_ string, opts Options) (controller.Policy, error) { return v.build(opts) }})
	}
}

// AgentReserve is the largest recorded action peak of the training
// workflows (the heavy action a running agent may still make), at most a
// quarter of the budget.
func AgentReserve(wfs []trajectory.Workflow, budget int64) int64 {
	var peak float64
	for _, w := range wfs {
		for _, a := range w.Actions {
			if a.Recorded != nil {
				peak = max(peak, a.Recorded.PeakMiB)
			}
		}
	}
	return min(int64(peak*(1<<20)), budget/4)
}
