package replay

import (
	"math"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// The default action timeout (DefaultActionTimeout).
const (
	// ActionTimeoutFactor multiplies the longest action: a healthy action
	// may run several times its recorded time on a loaded host or while the
	// gate holds it frozen, but not ten times.
	ActionTimeoutFactor = 10
	// MinActionTimeout is the least default: twice the longest the
	// domain's OOM hold keeps a sandbox waiting at the budget (ten times the
	// gate's 3 s DMax), so that a hold resolves or kills before the timeout
	// fires, with room for an exec to start on a loaded 2-core host.
	MinActionTimeout = time.Minute
)

// DefaultActionTimeout is the action timeout the CLI's replays, bench and
// simulations use unless told otherwise: ActionTimeoutFactor times the
// longest action of wfs as replayed at timeScale (0 means 1), at least
// MinActionTimeout. Actions that hold forever do not count. An action that
// runs longer, frozen time included, is a sandbox timeout that fails its
// attempt (seed 000 §5.1 counts them so), so a sandbox frozen or starved
// for good costs a retry instead of waiting forever.
func DefaultActionTimeout(wfs []trajectory.Workflow, timeScale float64) time.Duration {
	if timeScale <= 0 {
		timeScale = 1
	}
	// As Scale replays them, without copying the workload: a Mem profile's
	// phases are scaled, a Run action's recorded time is not.
	var longest float64
	for _, w := range wfs {
		for _, a := range w.Actions {
			d := a.DurationS()
			if a.Mem != nil {
				d *= timeScale
			}
			if !math.IsInf(d, 1) {
				longest = max(longest, d)
			}
		}
	}
	return max(MinActionTimeout, time.Duration(ActionTimeoutFactor*longest*float64(time.Second)))
}
