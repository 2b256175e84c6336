package gate

import "context"

// Actuator enforces published permissions on one sandbox at a time. Allow
// and Deny are idempotent; a failed call leaves the sandbox as it was as far
// as the actuator can tell, and the Loop retries it next iteration.
type Actuator interface {
	// Allow lets the sandbox run at full speed.
	Allow(ctx context.Context, id string) error
	// Deny stops (or nearly stops) the sandbox from receiving CPU time.
	Deny(ctx context.Context, id string) error
	// Name identifies the mechanism in logs, e.g. "freezer".
	Name() string
}
