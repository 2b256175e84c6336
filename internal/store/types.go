package store

import (
	"time"

	"github.com/tenon-dev/tenon/internal/archive"
)

// Artifact names one captured part of a sandbox.
type Artifact struct {
	Name string      `json:"name"` // ArtifactUpper or ArtifactWorkspace
	Ref  archive.Ref `json:"ref"`
}

// Artifact names.
const (
	ArtifactUpper     = "upper"     // the sandbox's whole writable layer
	ArtifactWorkspace = "workspace" // the host workspace mounted at /workspace
)

// RuntimeConfig is the base environment configuration a sandbox is rebuilt with.
type RuntimeConfig struct {
	Env     []string          `json:"env,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Network bool              `json:"network,omitempty"`
}

// Record is a recovery record: everything needed to rebuild an agent's
// sandbox at an action boundary.
type Record struct {
	WorkflowID string `json:"workflow_id"`
	AgentID    string `json:"agent_id"`
	// Generation increases with each teardown of the agent's sandbox.
	Generation uint64 `json:"generation"`
	// NextAction is the index of the action to run after rebuilding.
	NextAction int        `json:"next_action"`
	Attempt    int        `json:"attempt"`
	Artifacts  []Artifact `json:"artifacts"`
	// WorkspaceKept says the workspace was not captured: the host kept it
	// in place for the next sandbox (residency.WorkspaceKeeper), so the
	// record has no ArtifactWorkspace.
	WorkspaceKept bool          `json:"workspace_kept,omitempty"`
	BaseImage     string        `json:"base_image"`
	Runtime       RuntimeConfig `json:"runtime"`
	CreatedAt     time.Time     `json:"created_at"`
}

// Artifact returns the named artifact of r.
func (r Record) Artifact(name string) (archive.Ref, bool) {
	for _, a := range r.Artifacts {
		if a.Name == name {
			return a.Ref, true
		}
	}
	return archive.Ref{}, false
}

// State is where an agent's sandbox is.
type State string

// Agent states.
const (
	StateResident State = "resident" // a live sandbox exists
	StateAbsent   State = "absent"   // torn down; rebuilt from the latest record on demand
)

// Agent is an entry of the agent registry.
type Agent struct {
	ID         string    `json:"id"`
	WorkflowID string    `json:"workflow_id,omitempty"`
	State      State     `json:"state"`
	SandboxID  string    `json:"sandbox_id,omitempty"`
	NextAction int       `json:"next_action"`
	Attempt    int       `json:"attempt"`
	Generation uint64    `json:"generation"` // latest committed record, 0 if none
	UpdatedAt  time.Time `json:"updated_at"`
}
