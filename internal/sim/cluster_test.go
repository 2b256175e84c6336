package sim

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// clusterWorkload: one "fat" agent arrives first and keeps a 700 MiB floor
// (files its first action wrote) through a 300 s model wait; four thin
// agents (50 MiB peaks, 10 MiB floors) arrive after a publication.
func clusterWorkload() []trajectory.Workflow {
	fat := memAction(0, 700, 1, 1)
	fat.Mem.FilesMiB = 700
	wfs := []trajectory.Workflow{wf("fat", 0, fat, memAction(300, 20, 1, 1))}
	for i := range 4 {
		thin := memAction(1, 50, 1, 1)
		thin.Mem.FilesMiB = 10
		wfs = append(wfs, wf(fmt.Sprintf("thin-%d", i), 30+float64(i), thin, memAction(5, 50, 1, 1)))
	}
	return wfs
}

// TestClusterPlacement: three 1 GiB nodes. The fat agent goes to node 0
// under both rules. Placed by headroom, node 0 publishes no slot while the
// fat agent's floor holds most of its memory, so every thin agent goes to
// nodes 1 and 2; placed by requests (256 MiB each, four per node), least
// requested puts the third thin agent beside the fat one. Nothing is
// OOM-killed and every agent completes either way.
func TestClusterPlacement(t *testing.T) {
	wfs := clusterWorkload()
	node := Config{Workflows: wfs, Policy: mustSpec(t, "tenon"), Budget: 1 << 30, Create: DefaultCreate,
		Teardown: DefaultTeardown, Rematerialize: DefaultRematerialize, Predictors: predsFor(t, "cluster", wfs)}
	onFat := func(t *testing.T, cfg ClusterConfig) int {
		t.Helper()
		r, err := RunCluster(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range r.Agents {
			if !a.Completed || a.OOMs > 0 {
				t.Errorf("%s: completed %v, %d OOM kills", a.ID, a.Completed, a.OOMs)
			}
			switch {
			case a.ID == "fat" && a.Node != 0:
				t.Errorf("fat placed on node %d, want 0", a.Node)
			case a.ID != "fat" && a.Node == 0:
				n++
			}
			if a.QueueWait() != 0 {
				t.Errorf("%s waited %v at the cluster, want 0 (room on nodes 1 and 2)", a.ID, a.QueueWait())
			}
		}
		return n
	}
	t.Run("headroom", func(t *testing.T) {
		if n := onFat(t, ClusterConfig{Node: node, Nodes: 3, Placement: PlaceHeadroom, Refresh: 10 * time.Second}); n != 0 {
			t.Fatalf("%d thin agents placed beside the fat one, whose node published no slot", n)
		}
	})
	t.Run("requests", func(t *testing.T) {
		if n := onFat(t, ClusterConfig{Node: node, Nodes: 3, Placement: PlaceRequests, Request: 256 << 20}); n != 1 {
			t.Fatalf("%d thin agents placed beside the fat one, want 1 (least requested)", n)
		}
	})
}

// TestClusterLeastAllocated: the scheduler scores nodes by the fraction of
// their allocatable left, not the count: a fresh node publishing 3 slots
// takes the next agent before one with 300 of 500 left.
func TestClusterLeastAllocated(t *testing.T) {
	wfs := clusterWorkload()
	node := Config{Workflows: wfs, Policy: mustSpec(t, "tenon"), Budget: 1 << 30, Predictors: predsFor(t, "cluster", wfs)}
	c, err := newCluster(ClusterConfig{Node: node, Nodes: 2, Placement: PlaceHeadroom})
	if err != nil {
		t.Fatal(err)
	}
	c.nodes[0].left = 200 // as if 200 agents ran there
	c.alloc = []int{500, 3}
	c.queue = []int{0}
	c.place(0)
	if c.placed[0] != 1 {
		t.Fatalf("placed on node %d, want 1 (3 of 3 left beats 300 of 500)", c.placed[0])
	}
}

func TestClusterConfigErrors(t *testing.T) {
	wfs := clusterWorkload()
	node := Config{Workflows: wfs, Policy: mustSpec(t, "tenon"), Budget: 1 << 30, Predictors: predsFor(t, "cluster", wfs)}
	eager := node
	eager.Policy = mustSpec(t, "eager")
	tests := []struct {
		name string
		cfg  ClusterConfig
	}{
		{"no nodes", ClusterConfig{Node: node, Placement: PlaceHeadroom}},
		{"unknown placement", ClusterConfig{Node: node, Nodes: 2, Placement: "random"}},
		{"headroom without pacing", ClusterConfig{Node: eager, Nodes: 2, Placement: PlaceHeadroom}},
		{"no request", ClusterConfig{Node: node, Nodes: 2, Placement: PlaceRequests}},
		{"request above the budget", ClusterConfig{Node: node, Nodes: 2, Placement: PlaceRequests, Request: 2 << 30}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := RunCluster(t.Context(), tc.cfg); !errors.Is(err, ErrBadConfig) {
				t.Fatalf("RunCluster = %v, want ErrBadConfig", err)
			}
		})
	}
}
