package gate

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers test them with errors.Is; the text is meant for people.
var (
	// ErrInvalidConfig means a Config field is out of range; the wrapped text
	// names the field and the rule it broke.
	ErrInvalidConfig = errors.New("gate: invalid configuration")

	// ErrNotVerified means the freezer actuator froze a group but the kernel
	// did not report it frozen afterwards; the group was thawed again.
	ErrNotVerified = errors.New("gate: freeze not verified")

	// ErrNoSchedExtProgram means the kernel has sched_ext but tenon carries no
	// BPF gate scheduler to load into it; use the freezer or cpu-quota actuator.
	ErrNoSchedExtProgram = errors.New("gate: sched_ext is present but tenon has no BPF gate scheduler; " +
		"use --gate-actuator=freezer or cpu-quota")

	// ErrLoopMisconfigured means NewLoop was given a nil dependency.
	ErrLoopMisconfigured = errors.New("gate: loop needs a controller, observer and actuator")
)

// UnsupportedFeatureError says a kernel feature an actuator needs is absent.
// Tests and callers use errors.As to skip or fall back to another actuator.
type UnsupportedFeatureError struct {
	Feature string // e.g. "sched_ext (CONFIG_SCHED_CLASS_EXT)"
	Path    string // the path whose absence proved it, if any
}

func (e *UnsupportedFeatureError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("gate: kernel lacks %s", e.Feature)
	}
	return fmt.Sprintf("gate: kernel lacks %s (%s does not exist)", e.Feature, e.Path)
}
