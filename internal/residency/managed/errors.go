package managed

import "errors"

var (
	// ErrNoWritableLayer means the backend has no WritableLayer(id) method,
	// so its sandboxes' writable state cannot be captured.
	ErrNoWritableLayer = errors.New("managed: backend cannot expose a writable layer")
	// ErrNoRestore means the backend cannot start a sandbox from a captured
	// writable layer (no SupportsRootfsFrom() returning true).
	ErrNoRestore = errors.New("managed: backend cannot restore a writable layer")
	// ErrNotReady means a new sandbox failed its readiness probe.
	ErrNotReady = errors.New("managed: sandbox not ready")
)
