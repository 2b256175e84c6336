package store

import "errors"

var (
	// ErrNotFound means the agent or record does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrUnknownVersion means a stored value was written by a newer (or
	// foreign) encoding this build cannot read.
	ErrUnknownVersion = errors.New("store: unknown value version")
	// ErrStaleGeneration means a record's generation is not greater than
	// the agent's latest committed generation.
	ErrStaleGeneration = errors.New("store: stale generation")
	// ErrInvalid means a value lacks a required field (agent id).
	ErrInvalid = errors.New("store: invalid value")
	// ErrClosed means the store was used after Close.
	ErrClosed = errors.New("store: closed")
)
