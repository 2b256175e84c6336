package replay

import "errors"

// Sentinel errors.
var (
	// ErrConfig means the Config is incomplete or inconsistent; the message
	// names the field to fix.
	ErrConfig = errors.New("replay: invalid config")
)
