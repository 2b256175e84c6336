package app

import (
	"context"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/kube"
)

func TestNodePolicy(t *testing.T) {
	tests := []struct {
		name, policy string
		ok           bool
	}{
		{name: "the gate", policy: "gate", ok: true},
		{name: "tenon: gate, admission and residency", policy: "tenon", ok: true},
		{name: "an ablation with the gate", policy: "tenon-always-resident", ok: true},
		{name: "an ablation without the gate", policy: "tenon-no-gate"},
		{name: "no gate", policy: "eager"},
		{name: "admission alone", policy: "admission"},
		{name: "agent-level slots", policy: "static-4"},
		{name: "unknown", policy: "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := nodePolicy(tc.policy); (err == nil) != tc.ok {
				t.Errorf("nodePolicy(%q) = %v, want ok %v", tc.policy, err, tc.ok)
			}
		})
	}
}

func TestNodeConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  NodeConfig
		want string
	}{
		{"no budget", NodeConfig{Policy: "gate"}, "--budget"},
		{"admission without a state directory", NodeConfig{Policy: "tenon", Budget: 1 << 30}, "--state-dir"},
		{"an API server without the node's name", NodeConfig{Policy: "gate", Budget: 1 << 30, Kube: &kube.Config{Server: "https://x"}}, "--node-name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Node(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Node = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
