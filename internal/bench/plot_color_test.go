package bench

import "testing"

// TestPolicyColor: a policy keeps its colour whichever panel or position it
// is drawn in, static-N share one, and the policies of one plot differ.
func TestPolicyColor(t *testing.T) {
	if policyColor("tenon", 0) != policyColor("tenon", 4) {
		t.Error("tenon's colour depends on its position")
	}
	if policyColor("static-1", 1) != policyColor("static-3", 2) {
		t.Error("static-N do not share a colour")
	}
	if policyColor("makespan (s)", 2) != policyColor("other", 2) {
		t.Error("a non-policy series does not take the palette's i-th colour")
	}
	for _, set := range [][]string{
		{"eager", "static-1", "agent-reservation", "agentcgroup", "gate", "admission", "tenon"},
		{"tenon-no-admission", "tenon-no-gate", "tenon-always-resident", "tenon-static-pred", "tenon-history-pred", "tenon"},
	} {
		seen := map[any]string{}
		for _, p := range set {
			c := policyColor(p, 0)
			if q, ok := seen[c]; ok {
				t.Errorf("%s and %s share a colour", p, q)
			}
			seen[c] = p
		}
	}
}
