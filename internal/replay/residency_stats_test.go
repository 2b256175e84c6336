package replay

import (
	"reflect"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
)

// TestResidencyStatsPerAgent: boundaries, teardowns and page-outs are
// summed per workflow, in workflow order, with the largest boundary
// working set as the floor; other events leave the agents alone.
func TestResidencyStatsPerAgent(t *testing.T) {
	var s ResidencyStats
	for _, e := range []controller.Event{
		{Kind: controller.EventBoundary, Workflow: "b", WorkingSetBytes: 30, Restartable: true},
		{Kind: controller.EventBoundary, Workflow: "a", WorkingSetBytes: 50},
		{Kind: controller.EventPageOut, Workflow: "a", PagedBytes: 20, FreedBytes: 40},
		{Kind: controller.EventBoundary, Workflow: "b", WorkingSetBytes: 70},
		{Kind: controller.EventTeardown, Workflow: "b", WorkingSetBytes: 70},
		{Kind: controller.EventPageIn, Workflow: "a", PagedBytes: 20},
		{Kind: controller.EventActionDone, Workflow: "c"},
	} {
		s.Add(e)
	}
	want := []AgentResidency{
		{Workflow: "a", Floor: 50, Boundaries: 1, PageOuts: 1, BytesPagedOut: 20, FreedByPageOut: 40},
		{Workflow: "b", Floor: 70, Boundaries: 2, Restartable: 1, Teardowns: 1},
	}
	if !reflect.DeepEqual(s.Agents, want) {
		t.Errorf("agents = %+v, want %+v", s.Agents, want)
	}
	if s.PageOuts != 1 || s.FreedByPageOut != 40 || s.Teardowns != 1 || s.Boundaries != 3 {
		t.Errorf("totals = %+v", s)
	}
}
