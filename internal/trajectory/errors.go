package trajectory

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every validation error, so callers can tell a bad
// trajectory (fix the file) from an I/O error (errors.Is(err, ErrInvalid)).
var ErrInvalid = errors.New("trajectory: invalid")

// ErrVersion is wrapped by VersionError.
var ErrVersion = errors.New("trajectory: unsupported version")

// FieldError says which field of a workflow is wrong and why. Field is a path
// such as "actions[3].mem.peak_mib" (JSON names, zero-based indices).
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// VersionError is a workflow written in a format version this build does not read.
type VersionError struct {
	Got int
}

func (e *VersionError) Error() string {
	if e.Got == 0 {
		return fmt.Sprintf("version: missing; every line needs \"version\": %d", Version)
	}
	if e.Got > Version {
		return fmt.Sprintf("version %d is not supported by this tenon (supports %d); upgrade tenon", e.Got, Version)
	}
	return fmt.Sprintf("version %d is not supported by this tenon (supports %d); regenerate the file", e.Got, Version)
}

// Unwrap makes errors.Is(err, ErrVersion) true.
func (e *VersionError) Unwrap() error { return ErrVersion }

// LineError places an error at a line of a trajectory file (1-based).
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("trajectory line %d: %v", e.Line, e.Err) }

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// formatError is a line that is not a well-formed workflow object.
type formatError string

func (e formatError) Error() string { return string(e) }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e formatError) Unwrap() error { return ErrInvalid }

// ErrInfeasible means a workflow can never complete under a budget: its
// profiled peak (the largest memory its sandbox holds: what earlier
// actions left behind plus one action's peak) exceeds the budget, so every
// attempt would be OOM-killed whatever the policy.
var ErrInfeasible = errors.New("trajectory: workflow cannot fit the budget")
