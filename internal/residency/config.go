package residency

import (
	"time"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/policy"
)

// Config tunes a Manager. Zero values take the documented defaults.
type Config struct {
	// StateDir holds blobs (StateDir/blobs) and staging directories
	// (StateDir/staging). Required.
	StateDir string
	// LifecycleLimit bounds concurrent teardowns and rematerializations,
	// and apart from them concurrent page-outs and page-ins (a page-in
	// does not wait behind teardowns: Manager.slotsFor); default 2 each
	// (seed 000 Figure 16). First sandboxes (creates) take no slot.
	LifecycleLimit int
	// MaxRematAttempts bounds rematerialization tries per Ensure; default 4.
	MaxRematAttempts int
	// RematBackoff is the wait before the second try, doubled per try up
	// to RematBackoffMax; defaults 100 ms and 2 s.
	RematBackoff, RematBackoffMax time.Duration
	// Pressure returns the current pressure state; default always Green.
	Pressure func() Pressure
	// Waiting returns the number of actions waiting for admission; idle
	// sandboxes are reclaimed at policy.ReclaimPressure over Pressure and
	// it (red where Pressure is yellow while actions wait, with the
	// page-out tier on). Default always 0. Rematerializations and
	// page-ins go by Pressure.
	Waiting func() int
	// Free returns the domain's free memory as a share of its budget at
	// the last observation, for the policy's plentiful rule
	// (policy.DecideReclaim); default always -1 (unknown: never plentiful).
	Free func() float64
	// Need returns the memory, bytes, the pressure asks reclaim to free
	// (policy.Machine.ReclaimNeed); reclaims under way count toward it
	// with what they are expected to free. Default always -1 (unknown:
	// the pressure reclaims every candidate).
	Need func() int64
	// PressurePoll is how often a rematerialization deferred by red
	// pressure re-reads it; default 100 ms.
	PressurePoll time.Duration
	// Policy tunes Decide; Policy.AlwaysResident is the ablation switch.
	Policy policy.ResidencyConfig
	// TickEvery is how often the policy runs on its own besides every
	// boundary and wait (0: PressurePoll), so that idle and stalled
	// sandboxes are reclaimed when pressure rises between boundaries (under
	// the OOM hold no action ends). ManualReclaim turns it off too.
	TickEvery time.Duration
	// ManualReclaim disables running the policy at every boundary; the
	// caller then calls Tick.
	ManualReclaim bool
	// TeardownCostPrior and RematCostPrior seed the cost EWMAs before the
	// first measurement; defaults 500 ms and 1 s. CostAlpha is the EWMA
	// weight of a new measurement; default 0.3.
	TeardownCostPrior, RematCostPrior time.Duration
	CostAlpha                         float64
	// Clock times lifecycle operations, stamps events and records, and
	// paces rematerialization retries and pressure polls; default
	// clock.Real.
	Clock clock.Clock
	// Sink receives events; may be nil.
	Sink Sink
	// NoParking turns off keeping a torn-down sandbox's files (as hard
	// links under StateDir/parked) for its next rematerialization, which
	// then creates every file from its blob.
	NoParking bool
	// Capture tunes artifact capture: only WrapFile (fault injection) is
	// used; artifacts are trees (archive.CaptureTree) of uncompressed,
	// content-addressed file blobs.
	Capture archive.CaptureOptions
}

func (c *Config) defaults() {
	if c.LifecycleLimit <= 0 {
		c.LifecycleLimit = 2
	}
	if c.MaxRematAttempts <= 0 {
		c.MaxRematAttempts = 4
	}
	if c.RematBackoff <= 0 {
		c.RematBackoff = 100 * time.Millisecond
	}
	if c.RematBackoffMax <= 0 {
		c.RematBackoffMax = 2 * time.Second
	}
	if c.Pressure == nil {
		c.Pressure = func() Pressure { return Green }
	}
	if c.Waiting == nil {
		c.Waiting = func() int { return 0 }
	}
	if c.Free == nil {
		c.Free = func() float64 { return -1 }
	}
	if c.Need == nil {
		c.Need = func() int64 { return -1 }
	}
	if c.PressurePoll <= 0 {
		c.PressurePoll = 100 * time.Millisecond
	}
	if c.TickEvery <= 0 {
		c.TickEvery = c.PressurePoll
	}
	if c.TeardownCostPrior <= 0 {
		c.TeardownCostPrior = 500 * time.Millisecond
	}
	if c.RematCostPrior <= 0 {
		c.RematCostPrior = time.Second
	}
	if c.CostAlpha <= 0 || c.CostAlpha > 1 {
		c.CostAlpha = 0.3
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
}
