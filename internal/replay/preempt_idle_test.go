package replay

import (
	"context"
	"sync"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// idlePreempter is a policy that preempts workflow victim's first attempt
// while it runs no action: right after its first action ended, in its
// model wait (controller.AttemptPreempter, as the OOM hold's idle
// preemption does).
type idlePreempter struct {
	controller.Policy
	victim string
	mu     sync.Mutex
	cancel map[string]context.CancelCauseFunc
}

func (p *idlePreempter) PreemptibleAttempt(ctx context.Context, a *controller.Agent) (context.Context, func()) {
	actx, cancel := context.WithCancelCause(ctx)
	p.mu.Lock()
	p.cancel[a.ID] = cancel
	p.mu.Unlock()
	return actx, func() { cancel(nil) }
}

func (p *idlePreempter) ActionDone(a *controller.Agent, g controller.Grant, o controller.Outcome) {
	p.Policy.ActionDone(a, g, o)
	if a.ID == p.victim && a.Attempt == 1 && o.Index == 0 {
		p.mu.Lock()
		cancel := p.cancel[a.ID]
		p.mu.Unlock()
		cancel(controller.ErrPreempted)
	}
}

// TestIdlePreemptRestarts: an attempt the policy preempts in its model
// wait ends with ErrPreempted, its sandbox is released, and it restarts
// without being charged a retry (none are allowed here), so the workflow
// completes in a second attempt; the others are untouched.
func TestIdlePreemptRestarts(t *testing.T) {
	wfs := []trajectory.Workflow{memWF("w0", 0, 50, 50), memWF("w1", 0, 50, 50)}
	res, evs, be := replay(t, func(t *testing.T) controller.Policy {
		return &idlePreempter{Policy: mustPolicy(t, "eager"), victim: "w0", cancel: map[string]context.CancelCauseFunc{}}
	}, wfs, func(c *Config) { c.MaxRetries = -1 })
	checkAccounting(t, res, evs, 2, be)
	for _, w := range res.Workflows {
		want := 1
		if w.ID == "w0" {
			want = 2
		}
		if !w.Completed || w.Attempts != want || w.Preempted != want-1 {
			t.Errorf("workflow %s: completed %v, %d attempts, %d preempted; want completed in %d", w.ID, w.Completed, w.Attempts, w.Preempted, want)
		}
	}
	if res.Preempted != 1 || res.FailedAttempts != 1 {
		t.Errorf("preempted %d, failed attempts %d; want 1 and 1", res.Preempted, res.FailedAttempts)
	}
}
