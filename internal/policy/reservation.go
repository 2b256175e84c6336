package policy

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// Reservation is the agent-level peak-reservation baseline of seed 000 §5.1,
// after the reservation-based admission of ThunderAgent: every agent
// reserves its offline-profiled lifetime peak (Workflow.ProfiledPeakMiB of
// its own workflow, plus a fixed margin) for the whole attempt. AgentReady
// blocks until the reservations of the running agents plus the agent's own
// fit in the budget; AgentDone releases it. Waiting agents are served in
// strict arrival order (no backfilling), so a large agent is not starved by
// smaller ones behind it; an agent whose reservation alone exceeds the
// budget runs once nothing else does.
type Reservation struct {
	controller.Nop
	margin int64
	logger *slog.Logger

	mu       sync.Mutex
	budget   int64
	reserved int64            // sum of the running agents' reservations
	held     map[string]int64 // agent id -> its reservation
	queue    []*resWaiter     // waiting agents, arrival order
}

// resWaiter is one agent waiting in AgentReady; ready is closed once its
// reservation is taken.
type resWaiter struct {
	id    string
	need  int64
	ready chan struct{}
}

var _ controller.Policy = (*Reservation)(nil)

// NewReservation returns the policy for a budget in bytes (0 means the
// budget Start is given) and a margin in bytes added to every reservation.
func NewReservation(budget, margin int64, logger *slog.Logger) (*Reservation, error) {
	if budget < 0 || margin < 0 {
		return nil, fmt.Errorf("%w: agent-reservation needs a non-negative budget and margin, got %d and %d", ErrBadOption, budget, margin)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Reservation{margin: margin, logger: logger, budget: budget, held: map[string]int64{}}, nil
}

// Name returns "agent-reservation".
func (*Reservation) Name() string { return "agent-reservation" }

// Start takes the environment's budget when it has one.
func (r *Reservation) Start(ctx context.Context, env controller.Env) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if env.Budget > 0 {
		r.budget = env.Budget
	}
	if r.budget <= 0 {
		return fmt.Errorf("%w: agent-reservation needs a memory budget", ErrBadOption)
	}
	return ctx.Err()
}

// Need is what agent a reserves: its workflow's profiled lifetime peak
// plus the margin, in bytes.
func (r *Reservation) Need(a *controller.Agent) int64 {
	return reservationNeed(a.Workflow, r.margin)
}

func reservationNeed(w *trajectory.Workflow, margin int64) int64 {
	if w == nil {
		return margin
	}
	return int64(math.Ceil(w.ProfiledPeakMiB()*float64(units.MiB))) + margin
}

// Reserved is the sum of the running agents' reservations in bytes.
func (r *Reservation) Reserved() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reserved
}

// AgentReady queues the agent and blocks until its reservation is taken or
// ctx is done; a cancelled wait leaves no reservation behind.
func (r *Reservation) AgentReady(ctx context.Context, a *controller.Agent) error {
	w := &resWaiter{id: a.ID, need: r.Need(a), ready: make(chan struct{})}
	r.mu.Lock()
	if _, dup := r.held[a.ID]; dup {
		r.mu.Unlock()
		return fmt.Errorf("%w: agent-reservation: agent %s is already running", ErrBadOption, a.ID)
	}
	r.queue = append(r.queue, w)
	r.admitLocked()
	r.mu.Unlock()

	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-w.ready: // admitted while we were cancelled: give it back
		r.releaseLocked(w.id)
	default:
		for i, q := range r.queue {
			if q == w {
				r.queue = append(r.queue[:i], r.queue[i+1:]...)
				break
			}
		}
		r.admitLocked() // the head may have changed
	}
	return ctx.Err()
}

// AgentDone releases the agent's reservation.
func (r *Reservation) AgentDone(a *controller.Agent, _ error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.held[a.ID]; !ok {
		r.logger.Warn("agent-reservation: AgentDone without a reservation", "agent", a.ID)
		return
	}
	r.releaseLocked(a.ID)
}

// releaseLocked drops id's reservation and admits whoever now fits.
func (r *Reservation) releaseLocked(id string) {
	r.reserved -= r.held[id]
	delete(r.held, id)
	r.admitLocked()
}

// admitLocked takes reservations for the head of the queue while it fits,
// or while nothing runs (an oversized agent runs alone).
func (r *Reservation) admitLocked() {
	for len(r.queue) > 0 {
		w := r.queue[0]
		if len(r.held) > 0 && r.reserved+w.need > r.budget {
			return
		}
		r.queue = r.queue[1:]
		r.held[w.id] = w.need
		r.reserved += w.need
		close(w.ready)
	}
}

func init() {
	Register(Entry{
		Name: "agent-reservation",
		Help: "agent-level peak reservation (after ThunderAgent): each agent holds its profiled lifetime peak for its whole life; margin=SIZE",
		New: func(_ string, opts Options) (controller.Policy, error) {
			var margin int64
			for k, v := range opts.Params {
				switch k {
				case "margin":
					n, err := units.ParseSize(v)
					if err != nil || n < 0 {
						return nil, fmt.Errorf("%w: margin=%q: want a size such as 64MiB", ErrBadOption, v)
					}
					margin = n
				default:
					return nil, fmt.Errorf("%w: unknown parameter %q (agent-reservation takes margin=)", ErrBadOption, k)
				}
			}
			return NewReservation(opts.Budget, margin, opts.Logger)
		},
	})
}
