package replay

import (
	"context"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/controller/controllertest"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// teardown is a policy whose manager destroys the sandbox at every action
// boundary and rematerializes it in Ensure: the residency hook's extreme.
type teardown struct {
	controllertest.Nop
	boundaries int
}

func (p *teardown) Name() string { return "teardown" }

func (p *teardown) SandboxManager(h controller.SandboxHost) controller.Sandboxes {
	return &teardownMgr{Resident: controller.NewResident(h), p: p}
}

type teardownMgr struct {
	*controller.Resident
	p *teardown
}

func (m *teardownMgr) Boundary(ctx context.Context, a *controller.Agent, o controller.Outcome) error {
	m.p.boundaries++ // one agent in the test: no lock needed
	return m.Release(ctx, a)
}

func TestSandboxManagerProvider(t *testing.T) {
	var p *teardown
	wf := runWF("w", "true", "false", "sleep 1")
	res, evs, be := replay(t, func(*testing.T) controller.Policy { p = &teardown{}; return p }, []trajectory.Workflow{wf}, nil)
	checkAccounting(t, res, evs, 1, be)
	if !res.Workflows[0].Completed {
		t.Fatalf("workflow failed: %s", res.Workflows[0].Err)
	}
	if p.boundaries != 3 {
		t.Errorf("Boundary called %d times, want 3", p.boundaries)
	}
	if got := count(evs, controller.EventSandboxCreate); got != 3 {
		t.Errorf("%d sandboxes created, want one per action (3)", got)
	}
	if c := be.Counters(); c.Created != 3 || c.Destroyed != 3 {
		t.Errorf("backend created %d destroyed %d, want 3 and 3", c.Created, c.Destroyed)
	}
}
