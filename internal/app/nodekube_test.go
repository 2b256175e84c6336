package app

import (
	"log/slog"
	"testing"

	"github.com/tenon-dev/tenon/internal/kube"
	"github.com/tenon-dev/tenon/internal/live"
)

// What each node policy reaches the API server for: the gate nothing,
// tenon the slots (admission) and Sandbox suspends (residency), its
// always-resident ablation the slots alone; without --kube-* nothing.
func TestNodeKubeByPolicy(t *testing.T) {
	server := &kube.Config{Server: "https://127.0.0.1:1"}
	tests := []struct {
		policy       string
		kube         *kube.Config
		pub, suspend bool
	}{
		{"gate", server, false, false},
		{"tenon", server, true, true},
		{"tenon-always-resident", server, true, false},
		{"tenon", nil, false, false},
	}
	log := slog.New(slog.DiscardHandler)
	for _, tc := range tests {
		t.Run(tc.policy, func(t *testing.T) {
			sp, err := nodePolicy(tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			p, lrn, err := learningPolicy(tc.policy, "", t.TempDir(), 1<<30, nil, false, live.Options{Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			if lrn != nil {
				defer lrn.Close()
			}
			cp, err := newNodeKube(NodeConfig{Policy: tc.policy, Kube: tc.kube, NodeName: "n1"}, sp, p, log)
			if err != nil {
				t.Fatal(err)
			}
			if (cp.pub != nil) != tc.pub || (cp.res != nil) != tc.suspend || (cp.suspender() != nil) != tc.suspend {
				t.Errorf("publisher %v, residency %v; want %v, %v", cp.pub != nil, cp.res != nil, tc.pub, tc.suspend)
			}
		})
	}
}
