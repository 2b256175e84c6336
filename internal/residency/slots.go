package residency

import (
	"context"
	"sync"
)

// slotPriority orders the waiters for a lifecycle slot.
type slotPriority int

const (
	// prioDemand is a page-in an action waits for (Ensure, Unstall): it
	// is on its agent's path, and for real agents' idle floors it takes
	// a few hundredths of a second.
	prioDemand slotPriority = iota
	// prioReclaim is a teardown or page-out: it frees memory.
	prioReclaim
	// prioRestore is a rematerialization or a predictive page-in
	// (Prefetch; they take memory), or a reclaim decided in green (not
	// urgent).
	prioRestore
	numPriorities
)

// slots bounds concurrent lifecycle operations of one pool
// (Config.LifecycleLimit; Manager.slotsFor) and hands a freed slot to the
// oldest waiting demand page-in, else to the oldest waiting reclaim, before
// any rematerialization or predictive page-in. With one FIFO queue, a
// burst of agent starts (90 creates of a real-trace replay) queued every
// page-out behind it: the domain sat at its budget in red for 13 s with
// idle sandboxes and no reclaim running, until the OOM hold gave up and
// the kernel killed a sandbox (bench-traces-live.md at 988a744, haiku at
// 2 GiB).
//
// A demand page-in goes before the reclaims: it starts only outside red
// (Ensure waits red out; Unstall follows an admission that counted its
// memory), and behind the page-outs red queues in bursts it kept its
// agent's action waiting. Replaying batch18 twice live at 1 GiB,
// compressed twelvefold (model waits of 0.18 s at the median), the demand
// page-ins that began after their action was due waited 94 s in sum for
// a paging slot (median 0.11 s, P90 1.1 s; each page-in itself 0.04 s);
// ahead of the reclaims, 7 s (median 0.001 s, P90 0.09 s).
type slots struct {
	mu      sync.Mutex
	free    int
	waiters [numPriorities][]chan struct{}
}

func newSlots(n int) *slots { return &slots{free: n} }

// acquire takes a slot, waiting behind every waiter of the same or a
// more urgent priority; it returns ctx's error if ctx ends first (holding
// no slot).
func (s *slots) acquire(ctx context.Context, p slotPriority) error {
	s.mu.Lock()
	if s.free > 0 && !s.waitingUpTo(p) {
		s.free--
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.waiters[p] = append(s.waiters[p], ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for i, w := range s.waiters[p] {
			if w == ch {
				s.waiters[p] = append(s.waiters[p][:i], s.waiters[p][i+1:]...)
				s.mu.Unlock()
				return ctx.Err()
			}
		}
		s.mu.Unlock()
		// Granted while ctx ended: hand the slot on.
		s.release()
		return ctx.Err()
	}
}

// tryAcquire takes a slot if one is free and nobody waits.
func (s *slots) tryAcquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.free > 0 && !s.waitingUpTo(numPriorities-1) {
		s.free--
		return true
	}
	return false
}

// release returns a slot: to the oldest waiter of the most urgent
// priority, else to the pool.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.waiters {
		if q := s.waiters[p]; len(q) > 0 {
			s.waiters[p] = q[1:]
			close(q[0])
			return
		}
	}
	s.free++
}

// waitingUpTo reports whether anyone of priority p or more urgent waits
// (s.mu held).
func (s *slots) waitingUpTo(p slotPriority) bool {
	for q := slotPriority(0); q <= p; q++ {
		if len(s.waiters[q]) > 0 {
			return true
		}
	}
	return false
}
