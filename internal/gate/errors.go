package gate

import "errors"

// Sentinel errors. Callers test them with errors.Is; the text is meant for people.
var (
	// ErrInvalidConfig means a Config field is out of range; the wrapped text
	// names the field and the rule it broke.
	ErrInvalidConfig = errors.New("gate: invalid configuration")

	// ErrLoopMisconfigured means NewLoop was given a nil dependency.
	ErrLoopMisconfigured = errors.New("gate: loop needs a step (or controller) with a period, an observer and an actuator")
)
