package census

import (
	"context"
	"errors"
	"fmt"
	"time"
)

type frozenChecker interface {
	Frozen() (bool, error)
}

// freezeAll freezes every freezer within timeout and verifies the frozen
// state where the freezer can report it. The returned thaw must always be
// called (also when freezeAll fails): it thaws every freezer that was
// touched, in reverse order, with its own timeout so that a cancelled ctx
// still thaws. A freezer already frozen when freezeAll comes to it (a
// sandbox another tenon process holds: the gate's freeze, a page-out) is
// left alone, sampled as it is and not thawed after: thawing it would undo
// the other process's hold. One frozen by another process while the census
// holds it is thawed with the rest; the window is the sample's.
func freezeAll(ctx context.Context, fs []Freezer, timeout time.Duration) (thaw func() error, err error) {
	var touched []Freezer
	thaw = func() error {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		var errs []error
		for i := len(touched) - 1; i >= 0; i-- {
			if err := touched[i].Thaw(tctx); err != nil {
				errs = append(errs, fmt.Errorf("thawing sibling %d: %w", i, err))
			}
		}
		touched = nil
		return errors.Join(errs...)
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for i, f := range fs {
		if fc, ok := f.(frozenChecker); ok {
			if frozen, err := fc.Frozen(); err == nil && frozen {
				continue
			}
		}
		touched = append(touched, f)
		if err := f.Freeze(fctx); err != nil {
			return thaw, fmt.Errorf("%w: sibling %d: %w", ErrFreeze, i, err)
		}
		if fc, ok := f.(frozenChecker); ok {
			frozen, err := fc.Frozen()
			if err != nil {
				return thaw, fmt.Errorf("%w: checking sibling %d: %w", ErrFreeze, i, err)
			}
			if !frozen {
				return thaw, fmt.Errorf("%w: sibling %d reports not frozen", ErrFreeze, i)
			}
		}
	}
	return thaw, nil
}
