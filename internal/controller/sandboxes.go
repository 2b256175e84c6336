package controller

import (
	"context"
	"fmt"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Sandboxes decides where an agent's sandbox lives. The driver calls Ensure
// before each action, Boundary after it, and Release when the attempt ends
// (completed or failed). Implementations must be safe for concurrent use by
// different agents; calls for one agent are sequential.
type Sandboxes interface {
	// Ensure returns the id of a live sandbox for the agent, creating or
	// rematerializing it when absent, and sets a.SandboxID.
	Ensure(ctx context.Context, a *Agent) (string, error)
	// Boundary is the action-done boundary: the manager may tear the
	// sandbox down here (fail-closed) and rematerialize it in Ensure.
	Boundary(ctx context.Context, a *Agent, o Outcome) error
	// Release destroys the agent's sandbox, if any, and clears a.SandboxID.
	Release(ctx context.Context, a *Agent) error
}

// SandboxHost is what a Sandboxes manager works with: the backend, how to
// describe a new sandbox, and whom to tell about sandboxes coming and going.
type SandboxHost struct {
	Backend sandbox.Backend
	// Spec describes the agent's next sandbox; each call must return a fresh ID.
	Spec func(a *Agent) sandbox.Spec
	// Up is called after a sandbox was created; Down after it was destroyed
	// (or found dead). Either may be nil.
	Up   func(a *Agent, info sandbox.Info)
	Down func(a *Agent, id string)
}

// Resident is the default manager: it creates the sandbox on the first
// action, keeps it resident across model waits, and destroys it at Release.
// A sandbox whose action failed (Outcome.Failure) is left for Release.
type Resident struct {
	h SandboxHost
}

// NewResident returns the default keep-resident manager.
func NewResident(h SandboxHost) *Resident { return &Resident{h: h} }

var _ Sandboxes = (*Resident)(nil)

// Ensure creates the agent's sandbox if it has none.
func (r *Resident) Ensure(ctx context.Context, a *Agent) (string, error) {
	if a.SandboxID != "" {
		return a.SandboxID, nil
	}
	spec := r.h.Spec(a)
	info, err := r.h.Backend.Create(ctx, spec)
	if err != nil {
		return "", fmt.Errorf("creating sandbox %s: %w", spec.ID, err)
	}
	if info.ID == "" {
		info.ID = spec.ID
	}
	a.SandboxID = info.ID
	if r.h.Up != nil {
		r.h.Up(a, info)
	}
	return info.ID, nil
}

// Boundary keeps the sandbox resident.
func (r *Resident) Boundary(context.Context, *Agent, Outcome) error { return nil }

// Release destroys the agent's sandbox. The sandbox counts as gone even
// when Destroy fails; the error is returned for the log.
func (r *Resident) Release(ctx context.Context, a *Agent) error {
	id := a.SandboxID
	if id == "" {
		return nil
	}
	a.SandboxID = ""
	err := r.h.Backend.Destroy(ctx, id)
	if r.h.Down != nil {
		r.h.Down(a, id)
	}
	if err != nil {
		return fmt.Errorf("destroying sandbox %s: %w", id, err)
	}
	return nil
}

// Staller is an optional capability of Sandboxes: Step calls Stall after
// Ensure, while the action waits for admission (the sandbox runs nothing
// and may be paged out under pressure), and Unstall once ActionReady
// returned (a paged-out sandbox is paged back in before the action runs).
type Staller interface {
	Stall(a *Agent)
	Unstall(ctx context.Context, a *Agent) error
}

// SandboxStaller is an optional capability of Sandboxes for the runtime
// gate: a sandbox the gate froze mid-action is stalled (under pressure it
// may be paged out while frozen) until the gate lets it run again.
type SandboxStaller interface {
	StallSandbox(id string)
	// UnstallSandbox ends it. paged reports whether the sandbox had been
	// paged out, and so needs no resume: it was then paged back in and
	// thawed (err reports a failed page-in; it is thawed anyway), or, err
	// wrapping residency.ErrThawDeferred, it stays frozen until its memory
	// can come back, and the caller asks again later.
	UnstallSandbox(ctx context.Context, id string) (paged bool, err error)
}
