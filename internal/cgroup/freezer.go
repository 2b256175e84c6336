package cgroup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// v1 freezer.state values.
const (
	stateFrozen   = "FROZEN"
	stateFreezing = "FREEZING"
	stateThawed   = "THAWED"
)

// pollMin and pollMax bound the interval between freezer state reads.
const (
	pollMin = time.Millisecond
	pollMax = 20 * time.Millisecond
)

// thawAfterFailure bounds the thaw that undoes a failed Freeze.
const thawAfterFailure = 5 * time.Second

// Freeze stops every task of the group and returns once the kernel reports
// it frozen. If ctx ends first, it thaws the group again and returns an
// error wrapping ErrFreezeTimeout: a group is never left half-frozen.
//
// One exception on v1: a task sleeping in the kernel's OOM wait (its domain
// is under an OOM hold, see Domain.SetOOMHold) cannot freeze until it gets
// its memory, so the group would stay FREEZING for as long as the hold
// lasts. While the group's memory controller reports under_oom, Freeze
// accepts FREEZING: no task of a FREEZING group returns to user space
// without freezing, so the group makes no progress either way.
func (g *group) Freeze(ctx context.Context) error {
	err := g.setFrozen(ctx, true)
	if err == nil {
		return nil
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), thawAfterFailure)
	defer cancel()
	if terr := g.setFrozen(tctx, false); terr != nil {
		return fmt.Errorf("freezing %s: %w (thawing back also failed: %v)", g.path, err, terr)
	}
	return fmt.Errorf("freezing %s: %w", g.path, err)
}

// Thaw resumes the group's tasks and waits for the kernel to report it thawed.
func (g *group) Thaw(ctx context.Context) error {
	if err := g.setFrozen(ctx, false); err != nil {
		return fmt.Errorf("thawing %s: %w", g.path, err)
	}
	return nil
}

// Frozen reports whether the kernel considers the group frozen (a v1 group
// still FREEZING is not).
func (g *group) Frozen() (bool, error) {
	d, v, err := g.dir(Freezer)
	if err != nil {
		return false, err
	}
	ok, err := isFrozen(g.hot(), d, v)
	if err != nil {
		return false, fmt.Errorf("reading freezer state of %s: %w", g.path, err)
	}
	return ok, nil
}

// isFrozen reads the freezer state in d with read (readControl, or a
// group's hot read).
func isFrozen(read reader, d string, v Version) (bool, error) {
	if v == V1 {
		s, err := read.str(filepath.Join(d, "freezer.state"))
		return s == stateFrozen, err
	}
	ev, err := read.flatKeyed(filepath.Join(d, "cgroup.events"))
	return ev["frozen"] == 1, err
}

// reached reports whether the freezer reached the wanted state. On v1 a
// group in FREEZING is neither frozen nor thawed.
func reached(d string, v Version, frozen bool) (bool, error) {
	if v == V1 {
		s, err := readString(filepath.Join(d, "freezer.state"))
		if frozen {
			return s == stateFrozen, err
		}
		return s == stateThawed, err
	}
	f, err := isFrozen(readControl, d, v)
	return f == frozen, err
}

// setFrozen asks for the frozen or thawed state and polls until the kernel
// reports it. On v1 the request is rewritten on every poll: a write of
// FROZEN while the state is FREEZING retries freezing the tasks that were
// not yet stopped.
func (g *group) setFrozen(ctx context.Context, frozen bool) error {
	d, v, err := g.dir(Freezer)
	if err != nil {
		return err
	}
	file, val := filepath.Join(d, "freezer.state"), stateThawed
	if frozen {
		val = stateFrozen
	}
	if v == V2 {
		file, val = filepath.Join(d, "cgroup.freeze"), "0"
		if frozen {
			val = "1"
		}
	}
	wait := pollMin
	for first := true; ; first = false {
		if v == V1 || first {
			if err := g.write(file, val); err != nil {
				return fmt.Errorf("writing %s to %s: %w", val, file, err)
			}
		}
		done, err := reached(d, v, frozen)
		if err != nil {
			return err
		}
		if done || frozen && v == V1 && g.heldByOOM() {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %w", ErrFreezeTimeout, ctx.Err())
		case <-t.C:
		}
		wait = min(wait*2, pollMax)
	}
}

// heldByOOM reports whether the group's v1 memory controller says it is
// under OOM (the kernel marks a held domain's descendants too). Any error
// reads as false.
func (g *group) heldByOOM() bool {
	d, v, err := g.dir(Memory)
	if err != nil || v != V1 {
		return false
	}
	oc, err := readFlatKeyed(filepath.Join(d, "memory.oom_control"))
	return err == nil && oc["under_oom"] != 0
}

// thawTree thaws every v1 freezer group at or below the group's freezer
// directory (frozen v1 tasks do not act on SIGKILL). It is a no-op on v2,
// where fatal signals reach frozen tasks.
func (g *group) thawTree(ctx context.Context) error {
	d, v, err := g.dir(Freezer)
	if err != nil || v != V1 {
		return nil
	}
	subs, err := subdirs(d)
	if err != nil {
		return err
	}
	subs = append(subs, d)
	var errs []error
	for i := len(subs) - 1; i >= 0; i-- { // parents first
		s, err := readString(filepath.Join(subs[i], "freezer.state"))
		if err != nil || s == stateThawed {
			continue
		}
		sub := &group{layout: g.layout, path: g.path, dirs: map[string]string{Freezer: subs[i]}, write: g.write, rmdir: g.rmdir, kill: g.kill}
		if err := sub.setFrozen(ctx, false); err != nil {
			errs = append(errs, fmt.Errorf("thawing %s: %w", subs[i], err))
		}
	}
	return errors.Join(errs...)
}
