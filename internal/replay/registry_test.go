package replay

import (
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// knownStalls lists policies known to stall on the burst, with the reason;
// their subtests skip after checking the accounting. Remove an entry when
// the policy is fixed.
var knownStalls = map[string]string{}

// TestEveryRegisteredPolicyAccountsForEveryWorkflow replays the burst under
// every registered policy on the fake backend: whatever a policy decides,
// the driver must account for every workflow and leave nothing behind.
func TestEveryRegisteredPolicyAccountsForEveryWorkflow(t *testing.T) {
	for _, e := range policy.Entries() {
		name := e.Name
		if base, ok := strings.CutSuffix(name, "-N"); ok {
			name = base + "-2"
		}
		t.Run(name, func(t *testing.T) {
			opts := policy.Options{Budget: units.GiB, Workflows: recorded(burst())}
			res, evs, be := replay(t, func(t *testing.T) controller.Policy {
				p, err := live.Build(name, opts, live.Options{})
				if err != nil {
					t.Fatal(err)
				}
				return p
			}, burst(), nil)
			checkAccounting(t, res, evs, 4, be)
			usesGate := name == "gate" || strings.HasPrefix(name, "tenon") && name != "tenon-no-gate"
			if n := count(evs, controller.EventGate); usesGate && n == 0 {
				t.Errorf("%s wrote no gate iteration to the event log", name)
			} else if !usesGate && n > 0 {
				t.Errorf("%s runs no gate but wrote %d gate iterations", name, n)
			}
			if reason, ok := knownStalls[name]; ok && res.Makespan >= stallLimit {
				t.Skipf("known stall of %s (%d of 4 completed after %v): %s", name, res.Completed, stallLimit, reason)
			}
			if res.Makespan >= stallLimit {
				t.Errorf("policy %s stalled: cut off after %v with %d of 4 workflows completed, %d pause and %d resume events",
					name, stallLimit, res.Completed, count(evs, controller.EventPause), count(evs, controller.EventResume))
			}
			t.Logf("%s: makespan %v attempts %d oom %d completed %d", res.Policy, res.Makespan, res.Attempts, res.OOMEvents, res.Completed)
		})
	}
}

// recorded gives every mem action the measurements its profile implies, as
// training data for the policies that predict action memory.
func recorded(wfs []trajectory.Workflow) []trajectory.Workflow {
	for i := range wfs {
		for j := range wfs[i].Actions {
			a := &wfs[i].Actions[j]
			if a.Mem != nil && a.Recorded == nil {
				a.Recorded = &trajectory.Recorded{DurationS: a.Mem.RampS + a.Mem.HoldS, AvgMiB: a.Mem.PeakMiB / 2, PeakMiB: a.Mem.PeakMiB}
			}
		}
	}
	return wfs
}
