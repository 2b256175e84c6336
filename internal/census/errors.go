package census

import "errors"

// Sentinel errors.
var (
	// ErrNoPFN means pagemap reports present pages without frame numbers
	// (the caller lacks CAP_SYS_ADMIN), so anonymous pages cannot be
	// deduplicated by physical frame.
	ErrNoPFN = errors.New("census: pagemap hides page frame numbers (need CAP_SYS_ADMIN)")
	// ErrFreeze means a sibling could not be frozen before the sample; the
	// sample was not taken and every freezer was thawed.
	ErrFreeze = errors.New("census: freezing siblings")
	// ErrNoSiblings means Options named no sibling.
	ErrNoSiblings = errors.New("census: no siblings to sample")
)
