package replay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// workflow runs workflow i to completion or failure.
func (r *runner) workflow(ctx context.Context, i int) (res WorkflowResult) {
	wf := &r.wfs[i]
	res.ID = wf.ID
	clk := r.cfg.Clock
	arrival := durationS(wf.Arrival)
	res.Submit = arrival
	defer r.report(1)

	finish := func(err error) WorkflowResult {
		res.End = r.rec.since(clk.Now())
		res.Latency = res.End - res.Submit
		ev := controller.Event{Kind: controller.EventWorkflowDone, Workflow: wf.ID, Attempt: res.Attempts, LatencyS: res.Latency.Seconds()}
		if err != nil {
			res.Err = err.Error()
			ev.Kind, ev.Error = controller.EventWorkflowFailed, res.Err
		} else {
			res.Completed = true
		}
		r.rec.emit(ev)
		return res
	}

	if err := clock.Sleep(ctx, clk, arrival-r.rec.since(clk.Now())); err != nil {
		// Never submitted in time: still accounted for, as failed.
		r.rec.emit(controller.Event{Kind: controller.EventSubmit, Workflow: wf.ID})
		return finish(fmt.Errorf("cancelled before arrival: %w", err))
	}
	submitted := clk.Now()
	r.rec.emit(controller.Event{Kind: controller.EventSubmit, Workflow: wf.ID})

	retries := 0 // failed attempts charged to MaxRetries
	for attempt := 1; ; attempt++ {
		a := &controller.Agent{ID: wf.ID, Workflow: wf, Attempt: attempt, Submitted: submitted}
		if err := r.cfg.Policy.AgentReady(ctx, a); err != nil {
			if errors.Is(err, trajectory.ErrInfeasible) {
				res.Infeasible = true
				return finish(err)
			}
			return finish(fmt.Errorf("waiting to start attempt %d: %w", attempt, err))
		}
		a.Started = clk.Now()
		res.Attempts++
		r.rec.addAgents(1)
		r.rec.emit(controller.Event{Kind: controller.EventAgentStart, Workflow: wf.ID, Attempt: attempt})

		err := r.preemptibleAttempt(ctx, a, &res)
		r.release(ctx, a)
		r.rec.addAgents(-1)
		r.cfg.Policy.AgentDone(a, err)
		switch {
		case err == nil:
			return finish(nil)
		case ctx.Err() != nil:
			return finish(fmt.Errorf("attempt %d: %w", attempt, err))
		case errors.Is(err, controller.ErrPreempted) && res.Preempted <= policy.MaxPreempts:
			// The OOM hold preempted it to end a deadlock: restarted
			// without charging a retry.
		case retries >= r.cfg.MaxRetries:
			return finish(fmt.Errorf("giving up after %d attempts: %w", attempt, err))
		default:
			retries++
		}
		r.rec.emit(controller.Event{Kind: controller.EventRetry, Workflow: wf.ID, Attempt: attempt + 1, Reason: reason(err), Error: err.Error()})
	}
}

// release ends the attempt's sandbox and workspace; it runs even when ctx
// is cancelled.
func (r *runner) release(ctx context.Context, a *controller.Agent) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if err := r.step.Settle(cctx, a); err != nil {
		r.cfg.Logger.Warn("waiting for the last action's boundary", "workflow", a.ID, "attempt", a.Attempt, "err", err)
	}
	if err := r.mgr.Release(cctx, a); err != nil {
		r.cfg.Logger.Warn("releasing sandbox", "workflow", a.ID, "attempt", a.Attempt, "err", err)
		r.rec.emit(controller.Event{Kind: controller.EventError, Workflow: a.ID, Attempt: a.Attempt, Reason: "release", Error: err.Error()})
	}
	if r.cfg.WorkspaceRoot != "" && a.Workspace != "" {
		if err := os.RemoveAll(a.Workspace); err != nil {
			r.cfg.Logger.Warn("removing workspace", "dir", a.Workspace, "err", err)
		}
	}
}

// workspace returns the attempt's fresh workspace directory, "" when the
// backend picks one.
func (r *runner) workspace(a *controller.Agent) string {
	if r.cfg.WorkspaceRoot == "" {
		return ""
	}
	return filepath.Join(r.cfg.WorkspaceRoot, fmt.Sprintf("%s-%d-a%d", r.cfg.SandboxPrefix, r.index(a), a.Attempt))
}

// reason names an attempt failure for the event log.
func reason(err error) string {
	switch {
	case errors.Is(err, controller.ErrOOM):
		return "oom"
	case errors.Is(err, controller.ErrTimeout):
		return "timeout"
	case errors.Is(err, controller.ErrSandboxLost):
		return "sandbox_lost"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	}
	return "error"
}

// preemptibleAttempt runs r.attempt under the policy's PreemptibleAttempt
// context (controller.AttemptPreempter) where it has one: an attempt the
// OOM hold preempted while it ran no action (its model wait, or its next
// action waiting for admission) returns ErrPreempted, and the caller
// releases its sandbox and restarts it.
func (r *runner) preemptibleAttempt(ctx context.Context, a *controller.Agent, res *WorkflowResult) error {
	p, ok := r.cfg.Policy.(controller.AttemptPreempter)
	if !ok {
		return r.attempt(ctx, a, res)
	}
	actx, done := p.PreemptibleAttempt(ctx, a)
	defer done()
	err := r.attempt(actx, a, res)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), controller.ErrPreempted) && !errors.Is(err, controller.ErrPreempted) {
		res.Preempted++
		err = fmt.Errorf("%w (idle: %v)", controller.ErrPreempted, err)
	}
	return err
}
