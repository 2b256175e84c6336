package workload

import "errors"

// ErrUnknownKind means Generate was asked for a kind other than swe, science or rl.
var ErrUnknownKind = errors.New("workload: unknown kind (want swe, science or rl, optionally with -real)")

// ErrBadOptions means the Options cannot produce a workload (negative scales,
// MinActions > MaxActions, no workflows asked for).
var ErrBadOptions = errors.New("workload: invalid options")

// ErrEmptyCalibration means a Calibration holds no classes or no actions.
var ErrEmptyCalibration = errors.New("workload: calibration holds no actions")
