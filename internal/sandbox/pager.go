package sandbox

import (
	"context"
	"time"
)

// Pager is the optional interface of a backend that can page an idle
// sandbox's memory out to swap and back in (the process backend does).
// Callers check for it with a type assertion.
//
// PageOut freezes the sandbox (as Pause does), pages every process's
// private anonymous memory out to swap and drops the group's clean page
// cache; the sandbox stays frozen until PageIn. PageIn faults the paged-out
// memory back into the processes and thaws the sandbox. Both are
// idempotent and tolerate processes that exit meanwhile. Without swap the
// anonymous pages stay resident: PageOut then frees only page cache.
type Pager interface {
	PageOut(ctx context.Context, id string) (PageStats, error)
	PageIn(ctx context.Context, id string) (PageStats, error)
}

// PageStats describes one PageOut or PageIn of a sandbox.
type PageStats struct {
	// MemoryBefore and MemoryAfter are the sandbox's resident memory
	// (cgroup usage, swap excluded) before and after.
	MemoryBefore, MemoryAfter int64
	// Bytes is the anonymous memory that left RAM (PageOut: the drop of
	// the processes' RssAnon) or was faulted back (PageIn), summed over the
	// sandbox's processes.
	Bytes int64
	// Procs is the number of processes paged.
	Procs    int
	Duration time.Duration
}
