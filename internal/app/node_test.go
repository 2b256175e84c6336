package app

import (
	"context"
	"strings"
	"testing"
)

func TestNodePolicy(t *testing.T) {
	tests := []struct {
		name, policy string
		ok           bool
	}{
		{name: "the gate", policy: "gate", ok: true},
		{name: "tenon needs actions", policy: "tenon"},
		{name: "no gate", policy: "eager"},
		{name: "admission alone", policy: "admission"},
		{name: "unknown", policy: "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := nodePolicy(tc.policy); (err == nil) != tc.ok {
				t.Errorf("nodePolicy(%q) = %v, want ok %v", tc.policy, err, tc.ok)
			}
		})
	}
}

func TestNodeNeedsBudget(t *testing.T) {
	err := Node(context.Background(), NodeConfig{Policy: "gate"})
	if err == nil || !strings.Contains(err.Error(), "--budget") {
		t.Errorf("Node without a budget = %v, want an error naming --budget", err)
	}
}
