package memtool

import "errors"

// Sentinel errors. Callers test them with errors.Is; the text is meant for people.
var (
	// ErrInvalidProfile means a memory profile or a `tenon tool mem` flag has a
	// value the tool cannot run: negative, not a number, or retain above peak.
	ErrInvalidProfile = errors.New("memtool: invalid memory profile")

	// ErrInterrupted means Run was stopped by its context or by SIGTERM/SIGINT
	// before the profile finished. The memory was released before returning.
	ErrInterrupted = errors.New("memtool: interrupted")

	// ErrUnsupported means the platform cannot map anonymous memory the way
	// the tool needs (non-Linux builds).
	ErrUnsupported = errors.New("memtool: unsupported platform")
)
