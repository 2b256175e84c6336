package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/edittool"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// attempt runs every action of a's workflow once, in order. It returns nil
// when all completed, the Outcome.Failure that ended the attempt, or the
// context error. An action the OOM hold rolled back (controller.
// ErrRolledBack) runs again at once in the same sandbox, its model wait
// not waited again (the policy rolls back at most policy.MaxPreempts
// actions of an attempt). What the killed run left in the sandbox stays
// (a memory-profile action: the page-cache file it was writing).
func (r *runner) attempt(ctx context.Context, a *controller.Agent, res *WorkflowResult) error {
	a.Workspace = r.workspace(a)
	res.ActionPeaks = make([]int64, len(a.Workflow.Actions))
	if err := seedWorkspace(ctx, a.Workflow.Workspace, a.Workspace); err != nil {
		return err
	}
	for i := range a.Workflow.Actions {
		a.Next = i
		act := &a.Workflow.Actions[i]
		if err := clock.Sleep(ctx, r.cfg.Clock, durationS(act.Wait)); err != nil {
			return err
		}
		err := controller.ErrRolledBack
		for errors.Is(err, controller.ErrRolledBack) {
			err = r.action(ctx, a, i, act, res)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// action runs action i of a's attempt once and counts what it did in res;
// it returns Step.Run's error.
func (r *runner) action(ctx context.Context, a *controller.Agent, i int, act *trajectory.Action, res *WorkflowResult) error {
	sr, err := r.step.Run(ctx, a, controller.StepAction{Index: i, Request: r.request(a.Workflow, act), Running: r.rec.actionRunning})
	res.StartRetries += sr.StartRetries
	if sr.Admitted {
		res.Queued += sr.Outcome.Queued
		res.Actions++
		res.ActionPeaks[i] = sr.Outcome.PeakBytes
	}
	switch {
	case errors.Is(err, controller.ErrRolledBack):
		res.RolledBack++
	case errors.Is(err, controller.ErrPreempted):
		res.Preempted++
	case errors.Is(err, controller.ErrOOM):
		res.OOMs++
	case errors.Is(err, controller.ErrTimeout):
		res.Timeouts++
	case errors.Is(err, controller.ErrSandboxLost):
		res.Lost++
	case sr.Outcome.Failure() == nil && sr.Outcome.Exit != 0:
		res.NonZeroExits++
	}
	return err
}

// request builds the ExecRequest of an action.
func (r *runner) request(wf *trajectory.Workflow, act *trajectory.Action) sandbox.ExecRequest {
	// An action that leaves a process running (a background hint, or a
	// memory profile whose retained memory is held by one) keeps it past
	// its end; the backend kills anything else it leaves behind.
	req := sandbox.ExecRequest{Timeout: r.cfg.ActionTimeout,
		Background: act.Hints.Background || act.Mem != nil && act.Mem.Background}
	if ws := wf.Workspace; ws != nil && ws.Mount != "" {
		req.Cwd = ws.Mount
	}
	switch {
	case act.Mem != nil:
		req.Argv = append([]string{r.cfg.ToolPath}, r.cfg.MemArgs(*act.Mem)...)
	case act.Edit != nil:
		req.Argv = append([]string{r.cfg.ToolPath}, edittool.Args(*act.Edit)...)
	default:
		req.Shell = act.Run
	}
	return req
}

// seedWorkspace unpacks the workflow's workspace archive, if it has one,
// into the attempt's fresh workspace dir.
func seedWorkspace(ctx context.Context, ws *trajectory.Workspace, dir string) error {
	if ws == nil {
		return nil
	}
	f, err := os.Open(ws.Archive)
	if err != nil {
		return fmt.Errorf("seeding the workspace: %w", err)
	}
	defer f.Close()
	if _, err := archive.ExtractTar(ctx, f, dir, ws.Strip); err != nil {
		return fmt.Errorf("seeding the workspace from %s: %w", ws.Archive, err)
	}
	return nil
}

// durationS converts seconds to a duration; +Inf saturates.
func durationS(s float64) time.Duration {
	if s*float64(time.Second) >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * float64(time.Second))
}

// startRetries is how many times a sandbox start that failed is retried,
// startBackoff apart, before the attempt is lost (see controller.Step):
// failing the attempt would burn one of the workflow's retries.
const (
	startRetries = 3
	startBackoff = time.Second
)
