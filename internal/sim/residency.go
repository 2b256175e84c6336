package sim

import (
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
)

// Boundary is what the residency policy sees when an action completes.
type Boundary struct {
	Pressure    gate.Pressure
	Restartable bool          // no background process alive (residency.Check's contract)
	PredWait    time.Duration // the predicted model wait (mean of the attempt's waits so far)
	Cost        time.Duration // teardown + rematerialization
	Resident    int64         // the sandbox's memory, bytes
}

// Residency decides what happens to idle sandboxes (seed 000 §3.4, Table 1).
// PressureResidency delegates to the decision core's residency rules (internal/policy residency.go); tests
// may substitute their own.
type Residency interface {
	// AtBoundary reports whether to tear the sandbox down now.
	AtBoundary(b Boundary) bool
	// ReclaimIdle reports whether idle restartable sandboxes should be
	// reclaimed (largest first) at this pressure.
	ReclaimIdle(p gate.Pressure) bool
	// MayRematerialize reports whether a demand-driven rematerialization may
	// start at this pressure.
	MayRematerialize(p gate.Pressure) bool
}

// PressureResidency is Table 1 through the decision core's residency rules (internal/policy residency.go)
// (policy.DecideReclaim and policy.MayRematerialize): under green retain idle
// sandboxes unless the predicted wait amortizes the lifecycle cost Amortize
// times over (0: residency's default); under yellow or red reclaim
// restartable ones, largest first; no rematerialization starts under red.
type PressureResidency struct {
	Amortize float64
}

var _ Residency = PressureResidency{}

// AtBoundary implements Residency with policy.DecideReclaim over the one
// sandbox that just went idle.
func (r PressureResidency) AtBoundary(b Boundary) bool {
	idle := []policy.IdleSandbox{{ID: "boundary", WorkingSet: b.Resident, Restartable: b.Restartable,
		IdleSince: epoch, PredictedWait: b.PredWait, TeardownCost: b.Cost}}
	return len(policy.DecideReclaim(epoch, b.Pressure, idle, policy.ResidencyConfig{GreenAmortize: r.Amortize})) > 0
}

// ReclaimIdle implements Residency: policy.DecideReclaim reclaims every
// restartable idle sandbox outside green.
func (PressureResidency) ReclaimIdle(p gate.Pressure) bool { return p != gate.Green }

// MayRematerialize implements Residency (demand-driven rematerialization).
func (PressureResidency) MayRematerialize(p gate.Pressure) bool {
	return policy.MayRematerialize(p, false)
}
