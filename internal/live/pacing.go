package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Pacer is a scheduler that paces cgroups (the sched_ext gate scheduler,
// internal/schedext, injected by the composition root).
type Pacer interface {
	// Deny paces the tasks of the cgroup with id cgid at rate of one CPU.
	Deny(cgid uint64, rate float64) error
	// Allow stops pacing the cgroup.
	Allow(cgid uint64) error
	// Enabled reports whether the scheduler still runs (the kernel may
	// have unloaded it).
	Enabled() bool
}

// Defaults of Pacing.
const (
	DefaultPaceRate = 0.05            // of one CPU
	DefaultHandover = 5 * time.Second // a denial this long is frozen
)

// Pacing makes the gate pace denied sandboxes in a scheduler instead of
// freezing them: a paced sandbox keeps running slowly (and so allocates
// slowly) where a frozen one makes no progress at all and looks hung to
// its harness. A denial longer than Handover is handed over to the
// freezer: a long hold is the freezer's job (it bounds growth to zero, and
// a frozen task is not runnable, so the scheduler's watchdog ignores it).
type Pacing struct {
	Pacer Pacer
	// CgroupID maps a sandbox's cgroup path (sandbox.Info.CgroupPath) to
	// the id the pacer keys on.
	CgroupID func(cgroupPath string) (uint64, error)
	Rate     float64       // a denied sandbox's share of one CPU; 0: DefaultPaceRate
	Handover time.Duration // 0: DefaultHandover; < 0: never
}

// pacingActuator is the gate's actuator with a Pacing: Deny paces the
// sandbox's cgroup, Allow releases it (and thaws it if it was handed over
// to the freezer). When the pacer is gone (the kernel unloaded the
// scheduler) or a sandbox's cgroup cannot be named, it freezes instead.
type pacingActuator struct {
	p       Pacing
	b       sandbox.Backend
	freezer backendActuator
	now     func() time.Time
	log     *slog.Logger

	mu     sync.Mutex
	paced  map[string]*pacedBox
	warned bool // the pacer was found gone (logged once)
}

type pacedBox struct {
	cgid   uint64 // 0: not in the pacer (frozen from the start)
	since  time.Time
	frozen bool
}

func newPacingActuator(p Pacing, b sandbox.Backend, freezer backendActuator, now func() time.Time, log *slog.Logger) *pacingActuator {
	if p.Rate == 0 {
		p.Rate = DefaultPaceRate
	}
	if p.Handover == 0 {
		p.Handover = DefaultHandover
	}
	return &pacingActuator{p: p, b: b, freezer: freezer, now: now, log: log, paced: map[string]*pacedBox{}}
}

func (a *pacingActuator) Name() string { return "schedext" }

func (a *pacingActuator) Deny(ctx context.Context, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := a.paced[id]; e != nil {
		return nil // already denied (paced or handed over)
	}
	if !a.enabledLocked() {
		return a.freezeLocked(ctx, id, &pacedBox{since: a.now()})
	}
	info, err := a.b.Info(ctx, id)
	if errors.Is(err, sandbox.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	cgid, err := a.p.CgroupID(info.CgroupPath)
	if err != nil {
		a.log.Warn("gate: pacing impossible, freezing instead", "sandbox", id, "err", err)
		return a.freezeLocked(ctx, id, &pacedBox{since: a.now()})
	}
	if err := a.p.Pacer.Deny(cgid, a.p.Rate); err != nil {
		return fmt.Errorf("pacing sandbox %s: %w", id, err)
	}
	a.paced[id] = &pacedBox{cgid: cgid, since: a.now()}
	return nil
}

func (a *pacingActuator) Allow(ctx context.Context, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.paced[id]
	if e == nil {
		// Never denied here: resume it all the same, as the freezer's
		// Allow does, so a sandbox left paused by anyone runs.
		return a.freezer.Allow(ctx, id)
	}
	if e.frozen {
		if err := a.freezer.Allow(ctx, id); err != nil {
			return err
		}
		e.frozen = false
	}
	if e.cgid != 0 && a.p.Pacer.Enabled() {
		if err := a.p.Pacer.Allow(e.cgid); err != nil {
			return fmt.Errorf("releasing sandbox %s: %w", id, err)
		}
	}
	delete(a.paced, id)
	return nil
}

// handover freezes the paced sandboxes denied for Handover or longer, and
// every paced one when the pacer is gone. The gate loop calls it every
// period.
func (a *pacingActuator) handover(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.paced) == 0 {
		return
	}
	lost := !a.enabledLocked()
	now := a.now()
	for id, e := range a.paced {
		if e.frozen || (!lost && (a.p.Handover < 0 || now.Sub(e.since) < a.p.Handover)) {
			continue
		}
		if err := a.freezer.Deny(ctx, id); err != nil {
			a.log.Warn("gate: handing a paced sandbox over to the freezer failed", "sandbox", id, "err", err)
			continue
		}
		e.frozen = true
		a.log.Debug("gate: paced sandbox handed over to the freezer", "sandbox", id, "denied_for", now.Sub(e.since), "pacer_gone", lost)
	}
}

func (a *pacingActuator) freezeLocked(ctx context.Context, id string, e *pacedBox) error {
	if err := a.freezer.Deny(ctx, id); err != nil {
		return err
	}
	e.frozen = true
	a.paced[id] = e
	return nil
}

// enabledLocked reports whether the pacer still runs, logging once when
// it is found gone.
func (a *pacingActuator) enabledLocked() bool {
	if a.p.Pacer.Enabled() {
		return true
	}
	if !a.warned {
		a.warned = true
		a.log.Warn("gate: the sched_ext scheduler is gone (unloaded by the kernel?): denied sandboxes are frozen from now on")
	}
	return false
}
