package controller_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
)

// preemptPolicy is a stepPolicy that preempts every action it runs after
// a second, as the OOM hold's preemption does.
type preemptPolicy struct {
	*stepPolicy
	done bool
}

func (p *preemptPolicy) Preemptible(ctx context.Context, _ *controller.Agent) (context.Context, func()) {
	actx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(time.Second, func() { cancel(controller.ErrPreempted) })
	return actx, func() { t.Stop(); p.done = true; cancel(nil) }
}

// TestStepPreempted: an action its Preempter policy preempts fails with
// ErrPreempted and a preempt event, not as a lost sandbox, and the policy's
// done runs.
func TestStepPreempted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newStepRig(t, 0)
		p := &preemptPolicy{stepPolicy: r.pol}
		r.step.Policy = p
		res, err := r.step.Run(context.Background(), r.a, r.action("sleep 100", 0))
		if !errors.Is(err, controller.ErrPreempted) || !res.Outcome.Preempted || errors.Is(res.Outcome.Failure(), controller.ErrSandboxLost) {
			t.Errorf("Run = %v, outcome %+v; want ErrPreempted, preempted, not lost", err, res.Outcome)
		}
		want := append(slices.Clone(stepRan), "preempt", "ActionDone", "Done")
		if got := r.sequence(); !slices.Equal(got, want) {
			t.Errorf("sequence\n got %v\nwant %v", got, want)
		}
		if !p.done {
			t.Error("the policy's done was not called")
		}
		r.pol.checkGrants(t, 1)
	})
}
