package replay

import (
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
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
			if _, err := policy.Lookup(name, policy.Options{Budget: units.GiB}); err != nil {
				t.Skipf("policy %s needs options this test does not give: %v", name, err)
			}
			res, evs, be := replay(t, func(t *testing.T) controller.Policy {
				p, err := policy.Lookup(name, policy.Options{Budget: units.GiB})
				if err != nil {
					t.Fatal(err)
				}
				return p
			}, burst(), nil)
			checkAccounting(t, res, evs, 4, be)
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
