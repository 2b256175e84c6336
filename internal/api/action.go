package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// maxHistory bounds the actions kept in an agent's Workflow for policies
// that look back.
const maxHistory = 256

// runAction runs one action of ag through the policy, as the replay
// driver's attempt does: wait for AgentReady, then Ensure, ActionReady,
// Exec, ActionDone, Boundary. Queued time covers everything before Exec.
func (s *Server) runAction(ctx context.Context, ag *agent, req ExecRequest) (ExecResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ag.ctx, cancel) // deleting the agent cancels its action
	defer stop()

	// Until the action is admitted it also ends when the server starts
	// draining: shutdown waits for running actions, not queued ones.
	qctx, qcancel := context.WithCancel(ctx)
	defer qcancel()
	stopQ := context.AfterFunc(s.drainCtx, qcancel)
	defer stopQ()

	clock := s.cfg.Clock
	t0 := clock.Now()
	ag.mu.Lock()
	ag.waiting++
	ag.mu.Unlock()
	s.queuedActions.Add(1)
	queuedDone := false
	unqueue := func() {
		if !queuedDone {
			queuedDone = true
			s.queuedActions.Add(-1)
			ag.mu.Lock()
			ag.waiting--
			ag.mu.Unlock()
		}
	}
	defer unqueue()

	select {
	case <-ag.ready:
	case <-qctx.Done():
		return ExecResponse{}, s.ctxErr(qctx, ag)
	}
	if ag.readyErr != nil {
		return ExecResponse{}, fmt.Errorf("%w: %s was deleted", ErrNotFound, ag.rec.ID)
	}
	select {
	case ag.exec <- struct{}{}:
	case <-qctx.Done():
		return ExecResponse{}, s.ctxErr(qctx, ag)
	}
	defer func() { <-ag.exec }()
	if ag.retired {
		return ExecResponse{}, fmt.Errorf("%w: %s was deleted", ErrNotFound, ag.rec.ID)
	}

	a := ag.a
	act := trajectory.Action{Class: req.Class, Command: req.Command, Run: req.Command}
	if act.Class == "" {
		act.Class = "bash"
	}
	if req.MemHintBytes > 0 {
		mib := float64(req.MemHintBytes) / float64(units.MiB)
		act.Recorded = &trajectory.Recorded{PeakMiB: mib, AvgMiB: mib}
	}
	wf := a.Workflow
	if len(wf.Actions) >= maxHistory {
		wf.Actions = append(wf.Actions[:0:0], wf.Actions[len(wf.Actions)-maxHistory/2:]...)
	}
	wf.Actions = append(wf.Actions, act)
	a.Next = len(wf.Actions) - 1
	idx := ag.actionsDone()

	id, err := s.mgr.Ensure(qctx, a)
	if err != nil {
		if qctx.Err() != nil {
			return ExecResponse{}, s.ctxErr(qctx, ag)
		}
		s.emit(controller.Event{Kind: controller.EventSandboxLost, Workflow: a.ID, Action: controller.IntPtr(idx), Error: err.Error()})
		return ExecResponse{}, fmt.Errorf("%w: %w", controller.ErrSandboxLost, err)
	}
	g, err := s.cfg.Policy.ActionReady(qctx, a, &wf.Actions[a.Next])
	if err != nil {
		return ExecResponse{}, s.ctxErr(qctx, ag)
	}
	stopQ()
	queued := clock.Now().Sub(t0)
	unqueue()
	s.charge.Add(g.Charge)
	s.emit(controller.Event{Kind: controller.EventAdmit, Workflow: a.ID, Action: controller.IntPtr(idx), Class: act.Class, Sandbox: id, QueuedS: queued.Seconds(), Charge: g.Charge})

	o, er := s.exec(ctx, ag, idx, &act, id, req)
	o.Queued = queued
	s.cfg.Policy.ActionDone(a, g, o)
	s.charge.Add(-g.Charge)
	s.met.actionLatency.Observe(o.Duration.Seconds())
	s.met.queuedLatency.Observe(queued.Seconds())

	if o.Failure() != nil {
		// The sandbox is presumed broken after an OOM kill or a backend
		// failure: release it; the next action gets a fresh one over the
		// same workspace.
		if err := s.mgr.Release(context.WithoutCancel(ctx), a); err != nil {
			s.log.Warn("releasing failed sandbox", "agent", a.ID, "err", err)
		}
	} else if err := s.mgr.Boundary(ctx, a, o); err != nil && ctx.Err() == nil {
		s.log.Warn("action boundary", "agent", a.ID, "action", idx, "err", err)
		s.emit(controller.Event{Kind: controller.EventError, Workflow: a.ID, Action: controller.IntPtr(idx), Reason: "boundary", Error: err.Error()})
	}
	if o.Err != nil {
		if ctx.Err() != nil {
			return ExecResponse{}, s.ctxErr(ctx, ag)
		}
		return ExecResponse{}, fmt.Errorf("%w: %w", controller.ErrSandboxLost, o.Err)
	}
	return ExecResponse{
		ExitCode: er.ExitCode, Stdout: string(er.Stdout), Stderr: string(er.Stderr),
		StdoutTruncated: er.StdoutTruncated, StderrTruncated: er.StderrTruncated,
		DurationS: o.Duration.Seconds(), QueuedS: queued.Seconds(), PeakBytes: er.PeakMemory,
		OOM: er.OOMKilled, TimedOut: er.TimedOut, Sandbox: id,
	}, nil
}

// exec runs the action in sandbox id and measures it.
func (s *Server) exec(ctx context.Context, ag *agent, idx int, act *trajectory.Action, id string, req ExecRequest) (controller.Outcome, sandbox.ExecResult) {
	timeout := s.cfg.ExecTimeout
	if req.TimeoutS > 0 {
		timeout = time.Duration(req.TimeoutS * float64(time.Second))
	}
	sreq := sandbox.ExecRequest{Shell: req.Command, Cwd: req.Cwd, Env: req.Env, Timeout: timeout, OutputLimit: s.cfg.OutputLimit}
	s.emit(controller.Event{Kind: controller.EventActionStart, Workflow: ag.rec.ID, Action: controller.IntPtr(idx), Class: act.Class, Command: act.Command, Sandbox: id})
	ag.setRunning(true, time.Time{})
	s.running.Add(1)
	s.live.SetRunning(id, true)
	t0 := s.cfg.Clock.Now()
	er, err := s.cfg.Backend.Exec(ctx, id, sreq)
	s.live.SetRunning(id, false)
	s.running.Add(-1)
	ag.setRunning(false, s.cfg.Clock.Now())
	o := controller.Outcome{
		Index: idx, Class: act.Class, Sandbox: id, AvgBytes: er.AvgMemory, PeakBytes: er.PeakMemory,
		Duration: er.Duration, Exit: er.ExitCode, OOM: er.OOMKilled, TimedOut: er.TimedOut, Err: err,
	}
	if o.Duration == 0 {
		o.Duration = s.cfg.Clock.Now().Sub(t0)
	}
	if err != nil && !errors.Is(err, sandbox.ErrSandboxDead) && !errors.Is(err, sandbox.ErrNotFound) && ctx.Err() == nil {
		s.log.Warn("exec failed", "agent", ag.rec.ID, "sandbox", id, "err", err)
	}
	e := controller.Event{
		Kind: controller.EventActionDone, Workflow: ag.rec.ID, Action: controller.IntPtr(idx), Class: act.Class,
		Command: act.Command, Sandbox: id, ActionKind: "run", AvgBytes: o.AvgBytes, PeakBytes: o.PeakBytes,
		DurationS: o.Duration.Seconds(), Exit: controller.IntPtr(o.Exit), OOM: o.OOM, TimedOut: o.TimedOut,
	}
	if err != nil {
		e.Error = err.Error()
	}
	s.emit(e)
	switch {
	case o.OOM:
		s.emit(controller.Event{Kind: controller.EventOOM, Workflow: ag.rec.ID, Action: controller.IntPtr(idx), Sandbox: id, PeakBytes: o.PeakBytes})
	case o.TimedOut:
		s.emit(controller.Event{Kind: controller.EventTimeout, Workflow: ag.rec.ID, Action: controller.IntPtr(idx), Sandbox: id})
	case err != nil:
		s.emit(controller.Event{Kind: controller.EventSandboxLost, Workflow: ag.rec.ID, Action: controller.IntPtr(idx), Sandbox: id, Error: err.Error()})
	}
	return o, er
}

// ctxErr explains why an action's context ended.
func (s *Server) ctxErr(ctx context.Context, ag *agent) error {
	if s.draining.Load() {
		return ErrShuttingDown
	}
	if ag.ctx.Err() != nil {
		return fmt.Errorf("%w: %s was deleted", ErrNotFound, ag.rec.ID)
	}
	return fmt.Errorf("action cancelled: %w", ctx.Err())
}

func (ag *agent) setRunning(running bool, done time.Time) {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	ag.running = running
	if !running {
		ag.actions++
		ag.lastDone = done
	}
}

func (ag *agent) actionsDone() int {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	return ag.actions
}
