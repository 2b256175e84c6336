package replay

import (
	"math"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Scale returns a deep copy of wfs with arrival offsets, model waits and
// Mem profile times (and the recorded durations of Mem actions) multiplied
// by s: the schedule the replay actually runs at TimeScale s. Run actions
// keep their recorded duration, since their commands are not compressed.
// Infinite hold or retain times stay infinite.
func Scale(wfs []trajectory.Workflow, s float64) []trajectory.Workflow {
	out := make([]trajectory.Workflow, len(wfs))
	for i, w := range wfs {
		w.Arrival *= s
		acts := make([]trajectory.Action, len(w.Actions))
		for j, a := range w.Actions {
			a.Wait *= s
			if a.Mem != nil {
				m := ScaleProfile(*a.Mem, s)
				a.Mem = &m
				if a.Recorded != nil {
					r := *a.Recorded
					r.DurationS *= s
					a.Recorded = &r
				}
			} else if a.Recorded != nil {
				r := *a.Recorded
				a.Recorded = &r
			}
			acts[j] = a
		}
		w.Actions = acts
		out[i] = w
	}
	return out
}

// ScaleProfile multiplies the profile's ramp, hold and retain times by s.
func ScaleProfile(p trajectory.MemProfile, s float64) trajectory.MemProfile {
	mul := func(v float64) float64 {
		if math.IsInf(v, 1) {
			return v
		}
		return v * s
	}
	p.RampS = mul(p.RampS)
	p.HoldS = mul(p.HoldS)
	p.RetainS = mul(p.RetainS)
	return p
}
