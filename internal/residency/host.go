package residency

import (
	"context"
	"time"

	"github.com/tenon-dev/tenon/internal/store"
)

// Spec describes a sandbox to create. See the package documentation for
// the Host contract around UpperFrom and WorkspaceFrom.
type Spec struct {
	AgentID    string
	WorkflowID string
	Attempt    int
	Generation uint64 // record being restored; 0 for a fresh sandbox
	BaseImage  string
	Runtime    store.RuntimeConfig
	// UpperFrom and WorkspaceFrom are restored directories to adopt as the
	// writable layer and the workspace; "" for a fresh sandbox.
	UpperFrom     string
	WorkspaceFrom string
}

// Host is the sandbox backend as the manager needs it. Implementations
// must be safe for concurrent use.
type Host interface {
	// Create makes a sandbox and returns its new id.
	Create(ctx context.Context, spec Spec) (string, error)
	// Ready returns nil once an action can be dispatched to the sandbox.
	Ready(ctx context.Context, id string) error
	// Paths returns the host directories of the writable layer and workspace.
	Paths(ctx context.Context, id string) (upperDir, workspaceDir string, err error)
	// Procs lists the sandbox's live processes, its init excluded.
	Procs(ctx context.Context, id string) ([]ProcInfo, error)
	// WorkingSet returns the sandbox's current working-set bytes.
	WorkingSet(ctx context.Context, id string) (int64, error)
	// Destroy removes the sandbox and everything it holds.
	Destroy(ctx context.Context, id string) error
	// List returns the ids of every live sandbox of this host.
	List(ctx context.Context) ([]string, error)
}

// WorkspaceKeeper is the optional Host capability of a host that keeps a
// sandbox's workspace in place when it destroys the sandbox and builds the
// agent's next sandbox over it (the daemon's agent workspaces, which it
// owns, may be size-limited mounts and are read and written through its
// files API while the agent has no sandbox). For a sandbox whose
// KeepsWorkspace is true, a teardown captures and parks only the writable
// layer, its record says WorkspaceKept, and the rematerialization passes
// no WorkspaceFrom.
type WorkspaceKeeper interface {
	KeepsWorkspace(id string) bool
}

// Pager is the optional Host capability behind the page-out tier: a host
// whose idle sandboxes can be frozen with their memory paged out to
// compressed swap, and faulted back and thawed before the next action. A
// host that implements it is one that can page and has swap on; the
// manager pages out only when Config.Policy.PageOut is set too.
type Pager interface {
	// PageOut freezes the sandbox and pages its anonymous memory out and
	// its clean page cache away. On error the sandbox may be left frozen:
	// the manager calls PageIn to thaw it.
	PageOut(ctx context.Context, id string) (PageStats, error)
	// PageIn faults the paged-out memory back in and thaws the sandbox;
	// it thaws also when the page-in fails. Both are idempotent.
	PageIn(ctx context.Context, id string) (PageStats, error)
	// CompressionRatio is what the compressed copy costs per byte paged
	// out (zram's mem_used_total / orig_data_size); ok is false while
	// unknown (nothing stored yet).
	CompressionRatio() (ratio float64, ok bool)
}

// WholePager is an optional capability of a Pager: PageInWhole is PageIn
// that leaves the sandbox frozen, with an error wrapping
// ErrPageInIncomplete, unless all of its memory came back (sandbox.WholePager says why: thawing a process with memory
// still swapped out, at the budget under the v1 OOM hold, can kill it).
type WholePager interface {
	PageInWhole(ctx context.Context, id string) (PageStats, error)
}

// PageStats describes one PageOut or PageIn.
type PageStats struct {
	// MemoryBefore and MemoryAfter are the sandbox's resident memory.
	MemoryBefore, MemoryAfter int64
	// Bytes is the anonymous memory paged out, or faulted back in.
	Bytes    int64
	Duration time.Duration
}
