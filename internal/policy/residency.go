package policy

import (
	"fmt"
	"sort"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// IdleSandbox is a resident sandbox whose agent is waiting (between actions).
type IdleSandbox struct {
	ID            string // the agent id
	WorkingSet    int64  // measured at the boundary
	Restartable   bool   // verdict of the last boundary
	IdleSince     time.Time
	PredictedWait time.Duration // predicted model wait from IdleSince; 0 = unknown
	TeardownCost  time.Duration // measured (EWMA) teardown duration
	RematCost     time.Duration // measured (EWMA) rematerialization duration
}

// ReclaimDecision says to tear one idle sandbox down.
type ReclaimDecision struct {
	ID         string
	WorkingSet int64
	Reason     string
}

// ResidencyConfig tunes DecideReclaim.
type ResidencyConfig struct {
	// AlwaysResident disables teardown entirely (the ablation).
	AlwaysResident bool
	// GreenAmortize: in green a sandbox is reclaimed only when its
	// remaining predicted wait is at least GreenAmortize × (teardown +
	// rematerialization cost). 0 means 1.
	GreenAmortize float64
	// GreenMinWorkingSet: in green, sandboxes smaller than this are retained.
	GreenMinWorkingSet int64
}

// DecideReclaim returns the idle sandboxes to reclaim now, in the order to reclaim
// them (decreasing working set, then id). Resident-only sandboxes are never
// chosen. Green: retain, unless the remaining predicted wait amortizes the
// measured teardown + rematerialization cost. Yellow and red: reclaim every
// restartable idle sandbox.
func DecideReclaim(now time.Time, p gate.Pressure, idle []IdleSandbox, cfg ResidencyConfig) []ReclaimDecision {
	if cfg.AlwaysResident {
		return nil
	}
	k := cfg.GreenAmortize
	if k <= 0 {
		k = 1
	}
	var out []ReclaimDecision
	for _, s := range idle {
		if !s.Restartable {
			continue
		}
		if p != gate.Green {
			out = append(out, ReclaimDecision{ID: s.ID, WorkingSet: s.WorkingSet, Reason: p.String() + " pressure"})
			continue
		}
		if s.PredictedWait <= 0 || s.WorkingSet < cfg.GreenMinWorkingSet {
			continue
		}
		remaining := s.PredictedWait - now.Sub(s.IdleSince)
		cost := s.TeardownCost + s.RematCost
		if remaining <= 0 || float64(remaining) < k*float64(cost) {
			continue
		}
		out = append(out, ReclaimDecision{ID: s.ID, WorkingSet: s.WorkingSet,
			Reason: fmt.Sprintf("green: remaining wait %v amortizes lifecycle cost %v", remaining, cost)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].WorkingSet != out[j].WorkingSet {
			return out[i].WorkingSet > out[j].WorkingSet
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// MayRematerialize reports whether a rematerialization may start now:
// predictive (speculative) ones only in green, demand-driven ones (the next
// action is ready) in green and yellow, none in red.
func MayRematerialize(p gate.Pressure, predictive bool) bool {
	switch p {
	case gate.Green:
		return true
	case gate.Yellow:
		return !predictive
	}
	return false
}
