package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// attempt runs every action of a's workflow once, in order. It returns nil
// when all completed, the Outcome.Failure that ended the attempt, or the
// context error.
func (r *runner) attempt(ctx context.Context, a *controller.Agent, res *WorkflowResult) error {
	a.Workspace = r.workspace(a)
	clock := r.cfg.Clock
	for i := range a.Workflow.Actions {
		a.Next = i
		act := &a.Workflow.Actions[i]
		if err := controller.Sleep(ctx, clock, durationS(act.Wait)); err != nil {
			return err
		}
		id, err := r.ensure(ctx, a, res)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res.Lost++
			r.rec.emit(controller.Event{Kind: controller.EventSandboxLost, Workflow: a.ID, Attempt: a.Attempt, Action: controller.IntPtr(i), Error: err.Error()})
			return fmt.Errorf("%w: %w", controller.ErrSandboxLost, err)
		}
		t0 := clock.Now()
		g, err := r.cfg.Policy.ActionReady(ctx, a, act)
		if err != nil {
			return fmt.Errorf("waiting for admission of action %d: %w", i, err)
		}
		queued := clock.Now().Sub(t0)
		res.Queued += queued
		r.rec.emit(controller.Event{
			Kind: controller.EventAdmit, Workflow: a.ID, Attempt: a.Attempt, Action: controller.IntPtr(i),
			Class: act.Class, Sandbox: id, QueuedS: queued.Seconds(), Charge: g.Charge,
		})
		o := r.exec(ctx, a, act, id)
		o.Queued = queued
		r.cfg.Policy.ActionDone(a, g, o)
		res.Actions++
		fail := o.Failure()
		if fail != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case o.OOM:
			res.OOMs++
			r.failEvent(controller.EventOOM, a, i, o)
		case o.TimedOut:
			res.Timeouts++
			r.failEvent(controller.EventTimeout, a, i, o)
		case o.Err != nil:
			res.Lost++
			r.failEvent(controller.EventSandboxLost, a, i, o)
		case o.Exit != 0:
			res.NonZeroExits++
		}
		if fail != nil {
			return fail
		}
		if err := r.mgr.Boundary(ctx, a, o); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// Fail-closed: the manager keeps the sandbox; the run goes on.
			r.cfg.Logger.Warn("action boundary", "workflow", a.ID, "action", i, "err", err)
			r.rec.emit(controller.Event{Kind: controller.EventError, Workflow: a.ID, Attempt: a.Attempt, Action: controller.IntPtr(i), Reason: "boundary", Error: err.Error()})
		}
	}
	return nil
}

func (r *runner) failEvent(kind string, a *controller.Agent, i int, o controller.Outcome) {
	e := controller.Event{Kind: kind, Workflow: a.ID, Attempt: a.Attempt, Action: controller.IntPtr(i), Class: o.Class, Sandbox: o.Sandbox, PeakBytes: o.PeakBytes}
	if o.Err != nil {
		e.Error = o.Err.Error()
	}
	r.rec.emit(e)
}

// exec runs one action in sandbox id and measures it.
func (r *runner) exec(ctx context.Context, a *controller.Agent, act *trajectory.Action, id string) controller.Outcome {
	req, kind := r.request(act)
	r.rec.emit(controller.Event{Kind: controller.EventActionStart, Workflow: a.ID, Attempt: a.Attempt, Action: controller.IntPtr(a.Next), Class: act.Class, Command: act.Command, Sandbox: id})
	r.rec.addRunning(1)
	r.live.SetRunning(id, true)
	t0 := r.cfg.Clock.Now()
	er, err := r.cfg.Backend.Exec(ctx, id, req)
	r.live.SetRunning(id, false)
	r.rec.addRunning(-1)
	o := controller.Outcome{
		Index: a.Next, Class: act.Class, Sandbox: id,
		AvgBytes: er.AvgMemory, PeakBytes: er.PeakMemory, Duration: er.Duration,
		Exit: er.ExitCode, OOM: er.OOMKilled, TimedOut: er.TimedOut, Err: err,
	}
	if o.Duration == 0 {
		o.Duration = r.cfg.Clock.Now().Sub(t0)
	}
	if err != nil && !errors.Is(err, sandbox.ErrSandboxDead) && !errors.Is(err, sandbox.ErrNotFound) && ctx.Err() == nil {
		r.cfg.Logger.Warn("exec failed", "workflow", a.ID, "action", a.Next, "sandbox", id, "err", err)
	}
	e := controller.Event{
		Kind: controller.EventActionDone, Workflow: a.ID, Attempt: a.Attempt, Action: controller.IntPtr(a.Next),
		Class: act.Class, Command: act.Command, Sandbox: id, ActionKind: kind,
		AvgBytes: o.AvgBytes, PeakBytes: o.PeakBytes, DurationS: o.Duration.Seconds(),
		Exit: controller.IntPtr(o.Exit), OOM: o.OOM, TimedOut: o.TimedOut,
		ProfilePeakBytes: int64(math.Round(act.PeakMiB() * float64(units.MiB))),
	}
	if err != nil {
		e.Error = err.Error()
	}
	r.rec.emit(e)
	return o
}

// request builds the ExecRequest of an action and names its kind.
func (r *runner) request(act *trajectory.Action) (sandbox.ExecRequest, string) {
	req := sandbox.ExecRequest{Timeout: r.cfg.ActionTimeout}
	if act.Mem != nil {
		req.Argv = append([]string{r.cfg.ToolPath}, r.cfg.MemArgs(*act.Mem)...)
		return req, "mem"
	}
	req.Shell = act.Run
	return req, "run"
}

// durationS converts seconds to a duration; +Inf saturates.
func durationS(s float64) time.Duration {
	if s*float64(time.Second) >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * float64(time.Second))
}

// startRetries is how many times a sandbox start that failed is retried,
// startBackoff apart, before the attempt is lost. A start fails for
// transient reasons (a domain at its budget under the OOM hold refuses the
// kernel's own allocations for the container's init) and no work is lost by
// waiting; failing the attempt would burn one of the workflow's retries.
const (
	startRetries = 3
	startBackoff = time.Second
)

// ensure brings a's sandbox up, retrying a failed start.
func (r *runner) ensure(ctx context.Context, a *controller.Agent, res *WorkflowResult) (string, error) {
	for try := 0; ; try++ {
		id, err := r.mgr.Ensure(ctx, a)
		if err == nil || ctx.Err() != nil || try == startRetries {
			return id, err
		}
		res.StartRetries++
		r.rec.emit(controller.Event{Kind: controller.EventError, Workflow: a.ID, Attempt: a.Attempt, Action: controller.IntPtr(a.Next),
			Reason: "sandbox start failed; retrying", Error: err.Error()})
		if err := controller.Sleep(ctx, r.cfg.Clock, startBackoff); err != nil {
			return "", err
		}
	}
}
