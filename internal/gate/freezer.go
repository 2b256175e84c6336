package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// DefaultFreezeTimeout bounds one freeze or thaw; a freeze that takes longer
// is undone and retried at the next control iteration.
const DefaultFreezeTimeout = 500 * time.Millisecond

// Freezer denies a sandbox by freezing its cgroup (the default actuator on
// hosts without sched_ext). It remembers every group it froze so that Close
// can thaw them all.
type Freezer struct {
	timeout time.Duration
	frozen  denied // frozen, or possibly frozen after a failure
}

var _ Actuator = (*Freezer)(nil)

// NewFreezer returns a freezer actuator; timeout <= 0 means DefaultFreezeTimeout.
func NewFreezer(resolve Resolver, timeout time.Duration) *Freezer {
	if timeout <= 0 {
		timeout = DefaultFreezeTimeout
	}
	return &Freezer{timeout: timeout, frozen: newDenied(resolve)}
}

// Name implements Actuator.
func (f *Freezer) Name() string { return "freezer" }

// Deny freezes the sandbox's group and verifies that the kernel reports it
// frozen. On any failure it thaws the group again and returns the error.
func (f *Freezer) Deny(ctx context.Context, id string) error {
	g, err := f.frozen.add(id)
	if err != nil {
		return err
	}
	fctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	err = g.Freeze(fctx)
	if err == nil {
		var ok bool
		ok, err = g.Frozen()
		if err == nil && !ok {
			err = ErrNotVerified
		}
	}
	if err != nil {
		undo := f.thaw(context.WithoutCancel(ctx), id, g)
		return errors.Join(fmt.Errorf("freezing sandbox %s: %w", id, err), undo)
	}
	return nil
}

// Allow thaws the sandbox's group.
func (f *Freezer) Allow(ctx context.Context, id string) error {
	g, err := f.frozen.lookup(id)
	if err != nil {
		return err
	}
	return f.thaw(ctx, id, g)
}

func (f *Freezer) thaw(ctx context.Context, id string, g cgroup.Group) error {
	tctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	if err := g.Thaw(tctx); err != nil {
		return fmt.Errorf("thawing sandbox %s: %w", id, err)
	}
	f.frozen.remove(id)
	return nil
}

// Close thaws every group this actuator froze and has not thawed since.
func (f *Freezer) Close(ctx context.Context) error {
	return f.frozen.undoAll(func(id string, g cgroup.Group) error { return f.thaw(ctx, id, g) })
}

// ThawStale thaws every group in groups that the kernel reports frozen. Run
// it at start-up over the workload domain's sandboxes so that none is left
// frozen by a controller that died while it was denied.
func ThawStale(ctx context.Context, groups []cgroup.Group) error {
	var errs []error
	for _, g := range groups {
		frozen, err := g.Frozen()
		if err != nil {
			errs = append(errs, fmt.Errorf("reading freezer state of %s: %w", g.Path(), err))
			continue
		}
		if !frozen {
			continue
		}
		if err := g.Thaw(ctx); err != nil {
			errs = append(errs, fmt.Errorf("thawing stale %s: %w", g.Path(), err))
		}
	}
	return errors.Join(errs...)
}
