package ksm

import "errors"

// Sentinel errors.
var (
	// ErrNotSupported means the kernel has no KSM (no sysfs directory) or
	// no PR_SET_MEMORY_MERGE.
	ErrNotSupported = errors.New("ksm: not supported by this kernel")
	// ErrTimeout means KSM did not finish the requested full scans in time.
	ErrTimeout = errors.New("ksm: timed out waiting for full scans")
)
