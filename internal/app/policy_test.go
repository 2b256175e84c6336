package app

import (
	"slices"
	"testing"
)

func TestPolicies(t *testing.T) {
	names := PolicyNames()
	for _, want := range []string{"eager", "static-N", "tenon"} {
		if !slices.Contains(names, want) {
			t.Errorf("PolicyNames() %q lacks %s", names, want)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("PolicyNames() %q not sorted", names)
	}
	for _, p := range Policies() {
		if p.Help == "" {
			t.Errorf("policy %s has no help", p.Name)
		}
	}
	if got := DefaultPolicy(); got != "tenon" {
		t.Errorf("DefaultPolicy() = %q, want tenon (registered)", got)
	}
}
