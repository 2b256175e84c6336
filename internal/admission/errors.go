package admission

import "errors"

// Sentinel errors.
var (
	// ErrNotAdmitted means Release was called for a ticket that was never
	// admitted (it is still waiting or was cancelled).
	ErrNotAdmitted = errors.New("admission: ticket was not admitted")

	// ErrReleased means Release was called twice for one ticket; the second
	// call changes nothing.
	ErrReleased = errors.New("admission: ticket already released")

	// ErrCancelled means the ticket was cancelled before it was admitted.
	ErrCancelled = errors.New("admission: ticket cancelled")
)
