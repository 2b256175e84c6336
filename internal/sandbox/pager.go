package sandbox

import (
	"context"
	"errors"
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

// ErrPageInIncomplete means PageInWhole could not fault all of a
// sandbox's paged-out memory back (the kernel could not charge it: the
// workload domain at its budget under the v1 OOM hold); the sandbox stays
// frozen.
var ErrPageInIncomplete = errors.New("sandbox: paged-out memory could not all be faulted back; the sandbox stays frozen")

// WholePager is an optional capability of a Pager. PageInWhole is PageIn
// that thaws the sandbox only when all of its paged-out memory came back;
// otherwise it stays frozen and the error wraps ErrPageInIncomplete.
// Thawing a process whose memory is still swapped out while the domain
// sits at its budget under the v1 hold can kill it: a page the kernel must
// fault in for it (a signal frame, its rseq area) cannot be charged there,
// and the process gets SIGSEGV.
type WholePager interface {
	PageInWhole(ctx context.Context, id string) (PageStats, error)
}
