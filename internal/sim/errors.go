package sim

import "errors"

// ErrUnknownPolicy is returned for a policy name sim does not implement.
var ErrUnknownPolicy = errors.New("sim: unknown policy")

// ErrBadConfig is returned for an invalid Config (no workflows, no budget,
// negative costs).
var ErrBadConfig = errors.New("sim: invalid config")
