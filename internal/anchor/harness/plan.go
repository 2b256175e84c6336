package harness

import (
	"time"

	"github.com/tenon-dev/tenon/internal/memtool"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Step is one action of the replay: the model wait, then the tool call.
type Step struct {
	Wait  time.Duration
	Class string
	Argv  []string
}

// PlanOptions shape a workflow into steps.
type PlanOptions struct {
	// Exe is the tenon binary inside the sandbox (mem profiles run as
	// `Exe tool mem ...`).
	Exe string
	// MaxActions keeps the first actions only (0: all).
	MaxActions int
	// WaitScale multiplies every wait (0 means 1); MaxWait caps it (0: none).
	WaitScale float64
	MaxWait   time.Duration
	// MaxTool caps a mem profile's ramp+hold by scaling both (0: none).
	MaxTool time.Duration
}

// Plan turns wf into replay steps. A mem profile's background process is
// dropped (the same in both modes): it would outlive the tool and hold
// memory until the sandbox ends, which is a service, not the tool's
// private state.
func Plan(wf trajectory.Workflow, o PlanOptions) []Step {
	acts := wf.Actions
	if o.MaxActions > 0 && len(acts) > o.MaxActions {
		acts = acts[:o.MaxActions]
	}
	scale := o.WaitScale
	if scale <= 0 {
		scale = 1
	}
	out := make([]Step, 0, len(acts))
	for _, a := range acts {
		w := time.Duration(a.Wait * scale * float64(time.Second))
		if o.MaxWait > 0 {
			w = min(w, o.MaxWait)
		}
		st := Step{Wait: max(w, 0), Class: a.Class}
		switch {
		case a.Mem != nil:
			p := *a.Mem
			p.Background = false
			if d := p.RampS + p.HoldS; o.MaxTool > 0 && d > o.MaxTool.Seconds() {
				f := o.MaxTool.Seconds() / d
				p.RampS, p.HoldS = p.RampS*f, p.HoldS*f
			}
			st.Argv = append([]string{o.Exe}, memtool.Args(p)...)
		case a.Run != "":
			st.Argv = []string{"/bin/sh", "-c", a.Run}
		default:
			st.Argv = []string{"true"}
		}
		out = append(out, st)
	}
	return out
}
