package admission

import (
	"time"

	"github.com/tenon-dev/tenon/internal/predict"
)

// Request asks to run one action.
type Request struct {
	ID         string // the caller's name for the action, e.g. "wf-12/7"
	Descriptor predict.Descriptor
	Enqueued   time.Time // when the action became ready; zero means now
}

// State is where a ticket is in its life.
type State int

// Ticket states.
const (
	Waiting   State = iota // queued, holds no charge
	Admitted               // running, holds its charge
	Released               // completed, charge returned
	Cancelled              // withdrawn before admission
)

func (s State) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Admitted:
		return "admitted"
	case Released:
		return "released"
	case Cancelled:
		return "cancelled"
	}
	return "unknown"
}

// Ticket is one request's place in admission. Its fields change under the
// Admitter's lock; read them through the methods.
type Ticket struct {
	a        *Admitter
	req      Request
	heavy    bool
	state    State
	charge   int64
	admitted time.Time
	ready    chan struct{} // closed on admission or cancellation
}

// Request returns the request the ticket was created for.
func (t *Ticket) Request() Request { return t.req }

// Heavy reports whether the ticket is in the heavy queue.
func (t *Ticket) Heavy() bool { return t.heavy }

// State returns the ticket's state.
func (t *Ticket) State() State {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return t.state
}

// Charge returns the logical charge fixed at admission (0 before).
func (t *Ticket) Charge() int64 {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return t.charge
}

// AdmittedAt returns when the ticket was admitted (zero before).
func (t *Ticket) AdmittedAt() time.Time {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return t.admitted
}

// Ready is closed when the ticket is admitted or cancelled.
func (t *Ticket) Ready() <-chan struct{} { return t.ready }
