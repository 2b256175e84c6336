package app

import (
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

func TestParseRequest(t *testing.T) {
	var wfs []trajectory.Workflow
	for _, peak := range []float64{100, 200, 300, 400, 500} {
		wfs = append(wfs, trajectory.Workflow{ID: "w", Actions: []trajectory.Action{{Class: "bash",
			Mem: &trajectory.MemProfile{PeakMiB: peak, RampS: 1, HoldS: 1}}}})
	}
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "p50", want: 300 * units.MiB},
		{in: "p100", want: 500 * units.MiB},
		{in: "p75", want: 400 * units.MiB},
		{in: "768MiB", want: 768 * units.MiB},
		{in: "p0", wantErr: true},
		{in: "p101", wantErr: true},
		{in: "px", wantErr: true},
		{in: "0", wantErr: true},
		{in: "lots", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseRequest(tc.in, wfs)
			switch {
			case tc.wantErr && (err == nil || !strings.Contains(err.Error(), "--request")):
				t.Fatalf("parseRequest(%q) = %d, %v; want an error naming --request", tc.in, got, err)
			case !tc.wantErr && (err != nil || got != tc.want):
				t.Fatalf("parseRequest(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

// TestSimulateCluster runs every placement and node policy on a small
// generated workload: headroom only under tenon (eager publishes no slot),
// every agent accounted for, requests' runs with the request.
func TestSimulateCluster(t *testing.T) {
	wfs, err := GenerateWorkload("swe", 12, 1, 0, 4, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	res, err := SimulateCluster(t.Context(), ClusterConfig{Workflows: wfs, Agents: 10, Nodes: 2, Budget: 512 << 20,
		Placements: []string{"headroom", "requests"}, Policies: []string{"tenon", "eager"}, Request: "p50", Train: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res.Runs {
		names = append(names, r.Placement+"/"+r.Policy)
		m := r.Metrics
		if m.Workflows != 10 || m.Completed+m.Failed+m.Infeasible != 10 {
			t.Errorf("%s/%s: %d workflows, %d completed, %d failed, %d infeasible; want 10 in all", r.Placement, r.Policy, m.Workflows, m.Completed, m.Failed, m.Infeasible)
		}
		if (r.RequestBytes > 0) != (r.Placement == "requests") || r.NodeAgentsMax > 10 || r.QueueMaxS < r.QueueP95S {
			t.Errorf("%s/%s: request %d, agents per node %d-%d, queue P95 %.1f max %.1f", r.Placement, r.Policy,
				r.RequestBytes, r.NodeAgentsMin, r.NodeAgentsMax, r.QueueP95S, r.QueueMaxS)
		}
	}
	if got := strings.Join(names, ","); got != "headroom/tenon,requests/tenon,requests/eager" {
		t.Fatalf("runs %s, want headroom/tenon,requests/tenon,requests/eager", got)
	}
	if _, err := SimulateCluster(t.Context(), ClusterConfig{Workflows: wfs, Agents: 13, Nodes: 2, Budget: 1 << 30,
		Placements: []string{"requests"}, Policies: []string{"eager"}, Request: "p95"}); err == nil || !strings.Contains(err.Error(), "replicate") {
		t.Fatalf("13 agents of 12 workflows: %v, want an error saying to replicate", err)
	}
}
