package api

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
	"github.com/tenon-dev/tenon/internal/units"
)

// maxHistory bounds the actions kept in an agent's Workflow for policies
// that look back.
const maxHistory = 256

// maxCommandKept bounds the command text the daemon keeps and inspects
// besides running it, since a command may be as long as a request body
// (MaxBodyBytes, 64 MiB): the agent's action history (the predictor's
// features, events, stored measurements) keeps its first maxCommandKept
// bytes, and the background heuristic (agentcgroup.StartsBackground:
// regular expressions at about a microsecond a byte) reads its first and
// last maxCommandKept/2.
const maxCommandKept = 16 << 10

// keptCommand is the first maxCommandKept bytes of cmd, cut at a rune,
// in a copy of their own (a substring would keep the whole command).
func keptCommand(cmd string) string {
	if len(cmd) <= maxCommandKept {
		return cmd
	}
	return strings.Clone(strings.ToValidUTF8(cmd[:maxCommandKept], ""))
}

// startsBackground is agentcgroup.StartsBackground on at most
// maxCommandKept bytes of cmd: its beginning and its end.
func startsBackground(cmd string) bool {
	if len(cmd) > maxCommandKept {
		h := maxCommandKept / 2
		cmd = strings.ToValidUTF8(cmd[:h], "") + "\n" + strings.ToValidUTF8(cmd[len(cmd)-h:], "")
	}
	return agentcgroup.StartsBackground(cmd)
}

// runAction runs one action of ag through the policy with the Step the
// replay driver also uses, once AgentReady returned and the agent's previous
// action ended. Queued time covers everything before Exec.
func (s *Server) runAction(ctx context.Context, ag *agent, req ExecRequest) (ExecResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ag.ctx, cancel) // deleting the agent cancels its action
	defer stop()

	// Until the action is admitted it also ends when the server starts
	// draining: shutdown waits for running actions, not queued ones.
	// It waits at most QueueTimeout for its slot and admission.
	qctx, qcancel := context.WithTimeoutCause(ctx, s.cfg.QueueTimeout, errQueueDeadline)
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
	case ag.exec <- struct{}{}:
	case <-qctx.Done():
		return ExecResponse{}, s.ctxErr(qctx, ag)
	}
	defer func() { <-ag.exec }()
	if ag.retired {
		return ExecResponse{}, fmt.Errorf("%w: %s was deleted", ErrNotFound, ag.rec.ID)
	}
	slot := s.requestSlot(ag)
	select {
	case <-slot.done:
	case <-qctx.Done():
		return ExecResponse{}, s.ctxErr(qctx, ag)
	}
	if slot.err != nil {
		if ag.ctx.Err() != nil {
			return ExecResponse{}, fmt.Errorf("%w: %s was deleted", ErrNotFound, ag.rec.ID)
		}
		return ExecResponse{}, fmt.Errorf("%w: starting agent %s: %w", ErrBadRequest, ag.rec.ID, slot.err)
	}

	// Between two actions with no announced model wait, the idle gap was
	// the wait; residency gets the learned length at the boundary.
	ag.mu.Lock()
	if !ag.waitSeen && ag.actions > 0 && !ag.lastDone.IsZero() {
		s.waits.observe(ag.rec.ID, t0.Sub(ag.lastDone))
	}
	ag.waitSeen = false
	ag.mu.Unlock()
	a := ag.a
	a.NextWait = s.waits.predict(ag.rec.ID)
	// The backend runs req.Command whole; the history keeps its beginning.
	cmd := keptCommand(req.Command)
	act := trajectory.Action{Class: req.Class, Command: cmd, Run: cmd}
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

	timeout := s.cfg.ExecTimeout
	if req.TimeoutS > 0 {
		timeout = time.Duration(req.TimeoutS * float64(time.Second))
	}
	sr, err := s.step.Run(ctx, a, controller.StepAction{
		Index:   ag.actionsDone(),
		Request: execRequest(req, timeout, s.cfg.OutputLimit),
		Wait:    qctx, Since: t0,
		Admitted: func(g controller.Grant, _ time.Duration) {
			stopQ()
			unqueue()
			s.charge.Add(g.Charge)
		},
		Running: func(running bool) {
			if running {
				ag.setRunning(true, time.Time{})
				s.running.Add(1)
				return
			}
			s.running.Add(-1)
			ag.setRunning(false, clock.Now())
		},
		Done: func(g controller.Grant, o controller.Outcome) {
			s.charge.Add(-g.Charge)
			s.met.actionLatency.Observe(o.Duration.Seconds())
			s.met.queuedLatency.Observe(o.Queued.Seconds())
		},
	})
	if !sr.Admitted {
		if errors.Is(err, sandbox.ErrUnsupportedImage) {
			return ExecResponse{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
		if errors.Is(err, controller.ErrSandboxLost) {
			return ExecResponse{}, err
		}
		return ExecResponse{}, s.ctxErr(qctx, ag)
	}
	o, er := sr.Outcome, sr.Exec
	if keep, why := keepSandbox(ctx, o); !keep {
		// The sandbox is presumed broken after an OOM kill or a backend
		// failure: release it; the next action gets a fresh one over the
		// same workspace.
		if err := s.mgr.Release(context.WithoutCancel(ctx), a); err != nil {
			s.log.Warn("releasing failed sandbox", "agent", a.ID, "reason", why, "err", err)
		}
	}
	if o.Err != nil {
		if ctx.Err() != nil {
			return ExecResponse{}, s.ctxErr(ctx, ag)
		}
		if errors.Is(o.Err, sandbox.ErrInvalidSpec) {
			return ExecResponse{}, fmt.Errorf("%w: %w", ErrBadRequest, o.Err)
		}
		return ExecResponse{}, fmt.Errorf("%w: %w", controller.ErrSandboxLost, o.Err)
	}
	resp := ExecResponse{
		ExitCode: er.ExitCode, Stdout: string(er.Stdout), Stderr: string(er.Stderr),
		StdoutB64: unlessUTF8(er.Stdout), StderrB64: unlessUTF8(er.Stderr),
		StdoutTruncated: er.StdoutTruncated, StderrTruncated: er.StderrTruncated,
		DurationS: o.Duration.Seconds(), QueuedS: o.Queued.Seconds(), PeakBytes: er.PeakMemory,
		OOM: er.OOMKilled, TimedOut: er.TimedOut, Sandbox: o.Sandbox,
	}
	var what string
	switch {
	case s.workspaceFull(ag):
		what = "the workspace"
	case er.DiskFull:
		what = "the sandbox's files outside the workspace (/tmp, /root, ...)"
	}
	resp.DiskFull = what != ""
	if resp.OOM || resp.TimedOut || resp.DiskFull {
		r := failureReport{Timeout: timeout, Budget: s.cfg.Budget, Disk: what, DiskMax: s.cfg.WorkspaceMax}
		if resp.OOM || resp.TimedOut {
			r.Others = s.others(ctx, o.Sandbox)
		}
		explainFailure(&resp, r)
	}
	return resp, nil
}

// keepSandbox decides whether the sandbox of an admitted action survives
// it. Only an OOM kill or a backend failure destroy it (why says which): a
// timeout or a cancellation (the client hung up) killed the action's
// process tree and leave the sandbox, its /tmp and /root as they were, and
// a request the backend refused as malformed never touched it. A
// cancellation counts only when the backend confirmed the kill with a
// result (exit -1, killed by a signal); one that gave up waiting for the
// result (the process backend after its cancel grace) is a failure.
func keepSandbox(ctx context.Context, o controller.Outcome) (keep bool, why string) {
	switch {
	case o.OOM:
		return false, "oom"
	case o.Err == nil, errors.Is(o.Err, sandbox.ErrInvalidSpec):
		return true, ""
	case controller.Cancelled(ctx, o) && o.Exit == -1:
		return true, ""
	}
	return false, "backend failure"
}

// unlessUTF8 returns b when it is not valid UTF-8 (JSON would replace its
// invalid bytes), else nil.
func unlessUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return nil
	}
	return b
}

// ctxErr explains why an action's context ended.
func (s *Server) ctxErr(ctx context.Context, ag *agent) error {
	if s.draining.Load() {
		return ErrShuttingDown
	}
	if ag.ctx.Err() != nil {
		return fmt.Errorf("%w: %s was deleted", ErrNotFound, ag.rec.ID)
	}
	if err := s.queueErr(ctx, ag); err != nil {
		return err
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

// execRequest is the backend's request for an action: a command that
// visibly starts a process (startsBackground) counts as background even
// without the flag, so the sandbox keeps what it starts.
func execRequest(req ExecRequest, timeout time.Duration, outputLimit int) sandbox.ExecRequest {
	return sandbox.ExecRequest{Shell: req.Command, Cwd: req.Cwd, Env: req.Env, Timeout: timeout, OutputLimit: outputLimit,
		Background: req.Background || startsBackground(req.Command)}
}
