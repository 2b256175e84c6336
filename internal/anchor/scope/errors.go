package scope

import "errors"

// Sentinel errors.
var (
	// ErrEmptyCommand means a Request had no argv.
	ErrEmptyCommand = errors.New("scope: empty command")
)
