package pageout

import "errors"

// Sentinel errors.
var (
	// ErrNoProcessMadvise means the kernel lacks pidfd_open(2) or
	// process_madvise(2) (Linux 5.10+), or the build is not for Linux.
	ErrNoProcessMadvise = errors.New("pageout: kernel has no process_madvise (Linux 5.10+ needed)")
)
