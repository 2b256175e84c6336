package residency

import "errors"

var (
	// ErrResidentOnly means the boundary is not restart-safe; the sandbox
	// must stay resident (it may still be throttled, never torn down).
	ErrResidentOnly = errors.New("residency: boundary is resident_only")
	// ErrBusy means an action is in flight in the agent's sandbox.
	ErrBusy = errors.New("residency: agent has an action in flight")
	// ErrNotResident means the agent has no live sandbox to tear down.
	ErrNotResident = errors.New("residency: agent not resident")
	// ErrUnknownAgent means the manager does not know the agent.
	ErrUnknownAgent = errors.New("residency: unknown agent")
	// ErrNoRecord means an absent agent has no committed recovery record,
	// so its state is lost and its workflow must restart.
	ErrNoRecord = errors.New("residency: no recovery record")
	// ErrRematFailed means rematerialization failed on every retry; the
	// agent stays absent and its record intact, so a later Ensure retries.
	ErrRematFailed = errors.New("residency: rematerialization failed")
	// ErrClosed means the manager was closed.
	ErrClosed = errors.New("residency: manager closed")
)

var (
	// ErrNoPageOut means the host has no page-out capability (no Pager,
	// or swap is off).
	ErrNoPageOut = errors.New("residency: host cannot page out")
	// ErrPageInFailed means a paged-out sandbox could not be paged back
	// in; the agent stays paged out and the next Ensure tries again.
	ErrPageInFailed = errors.New("residency: page-in failed")
	// ErrPageInIncomplete is a WholePager's PageInWhole leaving the
	// sandbox frozen: not all of its memory could come back.
	ErrPageInIncomplete = errors.New("residency: paged-out memory could not all come back; the sandbox stays frozen")
	// ErrThawDeferred means UnstallSandbox left a paged-out sandbox
	// frozen: its memory could not all come back (WholePager), or no
	// paging slot was free to bring it back. The caller asks again.
	ErrThawDeferred = errors.New("residency: paged-out sandbox left frozen until its memory can come back")
)
