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

// Pacer slows the tasks of a sandbox's cgroup down to a share of one CPU:
// the sched_ext gate scheduler (internal/schedext) or the cgroup's CPU
// bandwidth limit (CPUPacer), chosen and injected by the composition root.
type Pacer interface {
	// Deny paces the tasks of the cgroup at cgroupPath (relative to the
	// hierarchy roots, as sandbox.Info.CgroupPath) at rate of one CPU.
	Deny(cgroupPath string, rate float64) error
	// Allow stops pacing the cgroup.
	Allow(cgroupPath string) error
	// Enabled reports whether the pacer still works (the kernel may have
	// unloaded the scheduler).
	Enabled() bool
	// Name identifies the mechanism, e.g. "schedext" or "cpu".
	Name() string
}

// Defaults of Pacing.
const (
	DefaultPaceRate = 0.05            // of one CPU
	DefaultHandover = 5 * time.Second // a denial this long is frozen
)

// Pacing makes the gate pace denied sandboxes instead of freezing them: a
// paced sandbox keeps running slowly (and so allocates slowly) where a
// frozen one makes no progress at all and looks hung to its harness. A
// denial longer than Handover is handed over to the freezer: a long hold
// is the freezer's job (it bounds growth to zero, and a frozen task is not
// runnable, so the sched_ext scheduler's watchdog ignores it). The
// handover applies to every pacer, the CPU limit included (which has no
// watchdog), so that a long denial means the same whatever paces it.
type Pacing struct {
	Pacer    Pacer
	Rate     float64       // a denied sandbox's share of one CPU; 0: DefaultPaceRate
	Handover time.Duration // 0: DefaultHandover; < 0: never
}

// pacingActuator is the gate's actuator with a Pacing: Deny paces the
// sandbox's cgroup, Allow releases it (and thaws it if it was handed over
// to the freezer). When the pacer is gone (the kernel unloaded the
// scheduler) or cannot pace the sandbox (its cgroup has no id or no CPU
// controller, a map update failed), it freezes instead: the denial holds
// either way.
type pacingActuator struct {
	p       Pacing
	b       sandbox.Backend
	freezer backendActuator
	now     func() time.Time
	log     *slog.Logger

	mu     sync.Mutex
	paced  map[string]*pacedBox
	warned bool // the pacer was found gone (logged once)
	stats  PacingStats
}

type pacedBox struct {
	path    string    // the cgroup in the pacer; "": frozen from the start
	since   time.Time // denied (paced, or frozen from the start)
	frozen  bool
	frozeAt time.Time // handed over to the freezer (frozen)
}

// PacingStats counts what the pacing actuator did, denials ended by an
// allow (the time of one still denied is not in it yet).
type PacingStats struct {
	Denials    int           // denials, paced or frozen
	HandedOver int           // paced denials handed over to the freezer
	FrozenOnly int           // denials frozen from the start (the pacer gone or unable)
	Paced      time.Duration // time sandboxes spent paced
	Frozen     time.Duration // time they spent frozen
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

func (a *pacingActuator) Name() string { return a.p.Pacer.Name() }

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
	if err := a.p.Pacer.Deny(info.CgroupPath, a.p.Rate); err != nil {
		a.log.Warn("gate: pacing impossible, freezing instead", "sandbox", id, "pacer", a.p.Pacer.Name(), "err", err)
		return a.freezeLocked(ctx, id, &pacedBox{since: a.now()})
	}
	a.paced[id] = &pacedBox{path: info.CgroupPath, since: a.now()}
	a.stats.Denials++
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
	now := a.now()
	if e.frozen {
		if err := a.freezer.Allow(ctx, id); err != nil {
			return err
		}
		e.frozen = false
		a.stats.Frozen += now.Sub(e.frozeAt)
	}
	if e.path != "" && a.p.Pacer.Enabled() {
		if err := a.p.Pacer.Allow(e.path); err != nil {
			return fmt.Errorf("releasing sandbox %s: %w", id, err)
		}
	}
	if e.path != "" { // paced from since until the handover or now
		end := now
		if !e.frozeAt.IsZero() {
			end = e.frozeAt
		}
		a.stats.Paced += end.Sub(e.since)
	}
	delete(a.paced, id)
	return nil
}

// Stats returns the counts so far.
func (a *pacingActuator) Stats() PacingStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
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
		e.frozen, e.frozeAt = true, now
		a.stats.HandedOver++
		a.log.Debug("gate: paced sandbox handed over to the freezer", "sandbox", id, "denied_for", now.Sub(e.since), "pacer_gone", lost)
	}
}

func (a *pacingActuator) freezeLocked(ctx context.Context, id string, e *pacedBox) error {
	if err := a.freezer.Deny(ctx, id); err != nil {
		return err
	}
	e.frozen, e.frozeAt = true, e.since
	a.paced[id] = e
	a.stats.Denials++
	a.stats.FrozenOnly++
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
		a.log.Warn("gate: the pacer is gone (the sched_ext scheduler unloaded by the kernel?): denied sandboxes are frozen from now on", "pacer", a.p.Pacer.Name())
	}
	return false
}
