package admission

import (
	"context"
	"fmt"
)

// Wait blocks until Schedule admits t, t is cancelled (ErrCancelled) or ctx
// ends. When ctx ends first the ticket is cancelled and ctx's error returned;
// if it was admitted in the meantime Wait returns nil and the caller owns the
// charge and must Release it.
func (a *Admitter) Wait(ctx context.Context, t *Ticket) error {
	select {
	case <-t.ready:
	case <-ctx.Done():
		a.mu.Lock()
		cancelled := a.cancelLocked(t)
		a.mu.Unlock() // not deferred: t.State below takes the same lock
		if cancelled {
			return fmt.Errorf("waiting for admission of %s: %w", t.req.ID, ctx.Err())
		}
	}
	if t.State() == Cancelled {
		return fmt.Errorf("waiting for admission of %s: %w", t.req.ID, ErrCancelled)
	}
	return nil
}
