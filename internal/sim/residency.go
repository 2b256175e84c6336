package sim

import (
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
)

// Residency decides what happens to idle sandboxes (seed 000 §3.4, Table 1,
// and the page-out tier). PressureResidency delegates to the decision
// core's residency rules (internal/policy residency.go); tests may
// substitute their own.
type Residency interface {
	// Decide returns the idle sandboxes to reclaim now and how; waiting
	// is the number of actions waiting for admission, free the domain's
	// free memory as a share of its budget, need what the pressure asks
	// reclaim to free (policy.Machine.ReclaimNeed less the teardowns
	// under way; -1 unknown).
	Decide(now time.Time, p gate.Pressure, waiting int, free float64, need int64, idle []policy.IdleSandbox) []policy.ReclaimDecision
	// MayRematerialize reports whether a demand-driven rematerialization
	// or page-in may start at this pressure.
	MayRematerialize(p gate.Pressure) bool
}

// PressureResidency is policy.DecideReclaim and policy.MayRematerialize:
// under green retain idle sandboxes while half the budget is free
// (policy.PlentifulShare), else unless the predicted wait amortizes
// the cost of bringing them back Amortize times over (0: residency's
// default); under red (and yellow for an unknown wait) reclaim as much as
// the pressure needs (teardown of restart-safe ones, page-out of the
// others when PageOut); no rematerialization starts under red.
type PressureResidency struct {
	Amortize float64
	PageOut  bool
	Stall    time.Duration // policy.ResidencyConfig.Stall
}

var _ Residency = PressureResidency{}

// Decide implements Residency with policy.DecideReclaim at
// policy.ReclaimPressure.
func (r PressureResidency) Decide(now time.Time, p gate.Pressure, waiting int, free float64, need int64, idle []policy.IdleSandbox) []policy.ReclaimDecision {
	return policy.DecideReclaim(now, policy.ReclaimPressure(p, waiting, r.PageOut), free, need, idle, policy.ResidencyConfig{GreenAmortize: r.Amortize, PageOut: r.PageOut, Stall: r.Stall})
}

// MayRematerialize implements Residency (demand-driven rematerialization).
func (PressureResidency) MayRematerialize(p gate.Pressure) bool {
	return policy.MayRematerialize(p, false)
}

// Swap is the simulated host's compressed swap (zram), which residency's
// page-out tier uses. A page-out is modelled as instantaneous: the idle
// sandbox's memory becomes Ratio of it (the compressed copy, which counts
// against the budget as zram's mem_used does live; page cache, which a
// live page-out drops rather than compresses, is charged the same, which
// errs against tenon). Before its next action the sandbox faults its
// memory back: it takes its memory at once and the action starts
// after memory/Rate.
type Swap struct {
	Off   bool    // no swap on the host: the page-out tier is skipped
	Ratio float64 // compressed size over original (0: DefaultSwapRatio)
	Rate  int64   // page-in bytes per second (0: DefaultPageInRate)
}

// Page-out defaults: zram's lzo-rle compresses typical anonymous memory
// about 3:1; faulting back from zram runs at several hundred MiB/s.
const (
	DefaultSwapRatio  = 1.0 / 3
	DefaultPageInRate = 500 << 20
)

func (w Swap) withDefaults() Swap {
	if w.Ratio <= 0 || w.Ratio > 1 {
		w.Ratio = DefaultSwapRatio
	}
	if w.Rate <= 0 {
		w.Rate = DefaultPageInRate
	}
	return w
}

// compressed is what n bytes cost the domain once paged out.
func (w Swap) compressed(n int64) int64 { return int64(float64(n) * w.Ratio) }

// pageIn is how long faulting n bytes back takes.
func (w Swap) pageIn(n int64) time.Duration {
	return time.Duration(float64(n) / float64(w.Rate) * float64(time.Second))
}
