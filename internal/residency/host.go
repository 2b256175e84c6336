package residency

import (
	"context"

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
