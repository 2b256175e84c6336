package trajectory

import (
	"cmp"
	"slices"

	"github.com/tenon-dev/tenon/internal/units"
)

// BoundOptions is what LowerBoundWith knows of the host beyond the
// workflows. The zero value knows nothing (no sandbox memory, free
// creation) and gives a weaker bound.
type BoundOptions struct {
	SandboxBase int64   // memory of an idle, freshly created sandbox, bytes
	CreateS     float64 // time to create a sandbox, seconds
	// PinnedIdle is the share of its memory a sandbox that is not
	// restartable must hold during a model wait: 1 on a host without swap,
	// the compression ratio when residency may page it out (its compressed
	// copy counts against the budget), 0 when unknown.
	PinnedIdle float64
}

// LowerBound is LowerBoundWith for a host it knows nothing of.
func LowerBound(wfs []Workflow, budgetBytes int64) float64 {
	return LowerBoundWith(wfs, budgetBytes, BoundOptions{})
}

// LowerBoundWith is a lower bound on the makespan, seconds, of any run that
// completes every workflow of wfs within a memory budget of budgetBytes,
// under every policy tenon runs. It is the larger of
//   - the longest workflow: the latest arrival_s + CreateS + LengthS. A
//     workflow's sandbox is created after its first model wait, and nothing
//     shortens an action or a wait (queuing, freezes, the OOM hold and
//     retries only add time);
//   - the memory-time area: the largest τ + A(τ)/budget, where A(τ) sums
//     AreaMiBS over the workflows released at τ or later (released: at
//     arrival_s plus the first wait plus CreateS, the earliest their first
//     action can start). The area of a workflow lies after its release and the
//     domain never holds more than the budget (the OOM killer or the OOM hold
//     sees to that), so that work needs budget × (makespan − τ) ≥ A(τ). τ = 0
//     gives the whole work's area divided by the budget.
//
// The bound does not hold for a run that gives up on workflows (its makespan
// ends at the last failure), nor for an action held under a memory.high limit
// below its curve (agentcgroup's Low actions in the simulator, which hold
// their room for 50× their remaining time: at least their curve's area only
// while the room is at least 2 % of the peak). The area term is left out when
// budgetBytes <= 0.
func LowerBoundWith(wfs []Workflow, budgetBytes int64, o BoundOptions) float64 {
	type release struct{ at, area float64 }
	rel := make([]release, 0, len(wfs))
	base := float64(o.SandboxBase) / float64(units.MiB)
	var longest float64
	for _, w := range wfs {
		longest = max(longest, w.Arrival+o.CreateS+w.LengthS())
		at := w.Arrival + o.CreateS
		if len(w.Actions) > 0 {
			at += w.Actions[0].Wait
		}
		rel = append(rel, release{at, w.areaMiBS(base, o.PinnedIdle)})
	}
	if budgetBytes <= 0 {
		return longest
	}
	budget := float64(budgetBytes) / float64(units.MiB)
	slices.SortFunc(rel, func(a, b release) int { return cmp.Compare(b.at, a.at) })
	bound, area := longest, 0.0
	for _, r := range rel { // latest release first: area is A(r.at), or part of it on a tie
		area += r.area
		bound = max(bound, r.at+area/budget)
	}
	return bound
}

// AreaMiBS is the memory-time area, MiB·s, that every run completing w
// holds for it, given a sandbox base memory of baseMiB:
//   - each action's curve (Action.AreaMiBS);
//   - under each action, its sandbox's base and the RetainedMiB of the
//     actions before it: an action runs in a live sandbox, which holds the
//     files written before (a rematerialized one gets them back) and the
//     background processes left before (a sandbox with one is never torn
//     down);
//   - the same during the model waits after an action that left a
//     background process holding memory (Action.pins): residency never tears
//     down a sandbox that is not restartable (policy.DecideReclaim skips it)
//     and, on a host without swap, cannot page it out.
//
// Left out, because some policy avoids them: the first wait (no sandbox
// yet), the waits of a restartable sandbox (residency may tear it down),
// creation (the memory appears when it ends), the final teardown (an OOM
// kill may cut it short) and failed attempts.
func (w Workflow) AreaMiBS(baseMiB float64) float64 { return w.areaMiBS(baseMiB, 1) }

// areaMiBS is AreaMiBS with a sandbox that is not restartable holding
// pinnedIdle of its memory during model waits (BoundOptions.PinnedIdle).
func (w Workflow) areaMiBS(baseMiB, pinnedIdle float64) float64 {
	var area float64
	floor, pinned := baseMiB, false
	for _, a := range w.Actions {
		if pinned {
			area += pinnedIdle * floor * a.Wait
		}
		area += floor*a.DurationS() + a.AreaMiBS()
		floor += a.RetainedMiB()
		pinned = pinned || a.pins()
	}
	return area
}

// RestartableBoundaries counts the workflow's action boundaries (after
// each action but the last, where residency may tear the sandbox down for
// the model wait) and those with no background process alive: none of the
// actions so far left one holding memory (pins), so the sandbox is
// restart-safe there.
func (w Workflow) RestartableBoundaries() (restartable, total int) {
	pinned := false
	for i, a := range w.Actions {
		pinned = pinned || a.pins()
		if i == len(w.Actions)-1 {
			break
		}
		total++
		if !pinned {
			restartable++
		}
	}
	return restartable, total
}

// pins reports whether the action leaves a background process holding
// memory, which makes its sandbox not restartable for the rest of the
// workflow. A Run action's background hint is not counted: nothing in the
// file says its process is still alive.
func (a Action) pins() bool {
	m := a.Mem
	return m != nil && (m.Background || a.Hints.Background) && m.RetainMiB > 0
}
