package trajectory

import (
	"fmt"

	"github.com/tenon-dev/tenon/internal/units"
)

// DurationS is how long the action runs when replayed: for a Mem profile
// ramp_s + hold_s + retain_s; for a Run action the recorded duration (0 when
// nothing was recorded).
func (a Action) DurationS() float64 {
	if m := a.Mem; m != nil {
		return m.RampS + m.HoldS + m.RetainS
	}
	if a.Recorded != nil {
		return a.Recorded.DurationS
	}
	return 0
}

// PeakMiB is the action's peak memory above the level before it: the larger
// of the profile's peak_mib and the recorded peak_mib (0 when neither is known).
func (a Action) PeakMiB() float64 {
	var p float64
	if a.Mem != nil {
		p = a.Mem.PeakMiB
	}
	if a.Recorded != nil && a.Recorded.PeakMiB > p {
		p = a.Recorded.PeakMiB
	}
	return p
}

// AreaMiBS is the memory-time area of the action's curve above the level
// before it, MiB·s. For a Mem profile: the ramp's triangle, the hold at the
// peak and the retain phase. For a Run action with only Recorded values the
// smaller of the simulator's curve (a ramp to the recorded peak over half
// the duration and a hold for the other half: ¾ × peak × duration) and the
// recorded average × duration (what the recorded run held), so that it is
// below what either the simulator or the recording replays; 0 when nothing
// was recorded.
func (a Action) AreaMiBS() float64 {
	if m := a.Mem; m != nil {
		return m.PeakMiB*(m.RampS/2+m.HoldS) + m.RetainMiB*m.RetainS
	}
	if r := a.Recorded; r != nil {
		return min(r.AvgMiB, 0.75*r.PeakMiB) * r.DurationS
	}
	return 0
}

// RetainedMiB is the memory the action leaves behind in its sandbox after it
// exits, for the rest of the workflow: retain_mib when a background process
// holds it (mem.background or hints.background), plus files_mib written into
// the workspace. Run actions leave nothing that the file can tell.
func (a Action) RetainedMiB() float64 {
	m := a.Mem
	if m == nil {
		return 0
	}
	r := m.FilesMiB
	if m.Background || a.Hints.Background {
		r += m.RetainMiB
	}
	return r
}

// TotalWaitS is the sum of the model waits, seconds.
func (w Workflow) TotalWaitS() float64 {
	var s float64
	for _, a := range w.Actions {
		s += a.Wait
	}
	return s
}

// TotalDurationS is the sum of the action durations, seconds.
func (w Workflow) TotalDurationS() float64 {
	var s float64
	for _, a := range w.Actions {
		s += a.DurationS()
	}
	return s
}

// LengthS is how long the workflow takes run alone with no queuing or
// overhead: its waits plus its action durations.
func (w Workflow) LengthS() float64 { return w.TotalWaitS() + w.TotalDurationS() }

// PeakMiB is the largest single-action peak of the workflow.
func (w Workflow) PeakMiB() float64 {
	var p float64
	for _, a := range w.Actions {
		p = max(p, a.PeakMiB())
	}
	return p
}

// ProfiledPeakMiB is the workflow's lifetime peak footprint above its
// sandbox's idle baseline: the maximum over actions i of
// retained(0..i-1) + peak(i), where retained(0..i-1) is the sum of
// RetainedMiB of the actions before i. It is what an agent-level reservation
// must hold for the workflow's whole life, and the numerator of the
// oversubscription ratio.
func (w Workflow) ProfiledPeakMiB() float64 {
	var retained, p float64
	for _, a := range w.Actions {
		p = max(p, retained+a.PeakMiB())
		retained += a.RetainedMiB()
	}
	return p
}

// Oversubscription is the sum of the workflows' profiled peaks divided by the
// budget (seed 000 §5.4). It is 0 when budgetBytes <= 0.
func Oversubscription(wfs []Workflow, budgetBytes int64) float64 {
	if budgetBytes <= 0 {
		return 0
	}
	var s float64
	for _, w := range wfs {
		s += w.ProfiledPeakMiB()
	}
	return s * float64(units.MiB) / float64(budgetBytes)
}

// Feasible returns nil when w's profiled peak fits budgetBytes (or there
// is no budget), else an error wrapping ErrInfeasible that names the peak
// and the budget.
func (w Workflow) Feasible(budgetBytes int64) error {
	peak := int64(w.ProfiledPeakMiB() * float64(units.MiB))
	if budgetBytes <= 0 || peak <= budgetBytes {
		return nil
	}
	return fmt.Errorf("%w: %s peaks at %s, above the %s budget", ErrInfeasible, w.ID,
		units.FormatSize(peak), units.FormatSize(budgetBytes))
}

// Infeasible lists the workflows of wfs that cannot fit budgetBytes
// (Feasible), in order.
func Infeasible(wfs []Workflow, budgetBytes int64) []Workflow {
	var out []Workflow
	for _, w := range wfs {
		if w.Feasible(budgetBytes) != nil {
			out = append(out, w)
		}
	}
	return out
}
