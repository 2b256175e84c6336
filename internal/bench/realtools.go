package bench

import (
	"fmt"
	"math"
	"slices"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// The real-tools case.
const (
	// RealToolsAgents is how many agents the real-tools tasks are
	// replicated to by default.
	RealToolsAgents = 32
	// RealToolsOversubscription is what the case's budget oversubscribes:
	// the replicated workflows' profiled peaks add up to this many times
	// the budget (unless the largest workflow would not fit; see
	// realToolsBudget).
	RealToolsOversubscription = 4
	// RealToolsSpacingS is the arrival gap between consecutive agents
	// (before the time scale): copies follow each other, staggered.
	RealToolsSpacingS = 5.0
)

// realToolsCase is the real-tools group's one case: the tasks replicated to
// RealToolsAgents agents arriving RealToolsSpacingS apart, every policy,
// at the budget realToolsBudget picks, compressed as the traces are.
func (m Matrix) realToolsCase() (Case, error) {
	n := m.RealToolsAgents
	copies := (n + len(m.RealTools) - 1) / len(m.RealTools)
	wfs, err := trajectory.Replicate(m.RealTools, copies, RealToolsSpacingS, RealToolsSpacingS*float64(len(m.RealTools)))
	if err != nil {
		return Case{}, fmt.Errorf("real-tools: %w", err)
	}
	wfs = wfs[:n]
	// Replicate keeps the workspace seed, env and binds every copy needs,
	// and drops the image: each copy gets its task's back (the image
	// holding the manifest's packages, or "" for the host's).
	for i := range wfs {
		wfs[i].Image = m.RealTools[i%len(m.RealTools)].Image
	}
	pols := AllPolicies
	if len(m.Policies) > 0 {
		pols = m.Policies
	}
	budget := realToolsBudget(wfs)
	return Case{
		Name: fmt.Sprintf("%s/%d-agents/%dMiB", GroupRealTools, n, budget/units.MiB), Group: GroupRealTools, Workload: GroupRealTools,
		Workflows: wfs, Budget: budget, Policies: slices.Clone(pols),
		TimeScale: m.tracesScale(wfs), Reps: max(m.Reps, 1),
		ReferenceMiB: m.RealToolsMiB,
	}, nil
}

// realToolsBudget is the sum of the workflows' profiled peaks over
// RealToolsOversubscription, in whole MiB, but at least what lets the
// largest action fit with a tenth to spare (fits).
func realToolsBudget(wfs []trajectory.Workflow) int64 {
	var sum float64
	for _, w := range wfs {
		sum += w.ProfiledPeakMiB()
	}
	b := math.Floor(sum / RealToolsOversubscription)
	least := math.Ceil(maxActionPeakMiB(wfs) / 0.9)
	return int64(max(b, least, 1)) * units.MiB
}
