package controller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/units"
)

// Step runs one action of an agent through the policy: Ensure, ActionReady,
// Exec, ActionDone, Boundary (the loop body of the call sequence in the
// package doc), emitting the action's events. The daemon and the replay
// driver each configure one Step and call Run from every agent's goroutine;
// what differs between them is in the Step's fields and in StepAction.
type Step struct {
	Policy    Policy
	Sandboxes Sandboxes
	Backend   sandbox.Backend
	Live      *LiveSet // the action's sandbox is marked running during Exec
	Clock     clock.Clock
	Logger    *slog.Logger
	// Emit records one of the step's events for agent a; the host stamps
	// what it adds (the replay driver, the attempt).
	Emit func(a *Agent, e Event)
	// StartRetries is how many times a failed sandbox start is retried,
	// StartBackoff apart, before the action fails with ErrSandboxLost.
	StartRetries int
	StartBackoff time.Duration
	// StarvedWait bounds how long a start refused for want of memory is
	// retried (ensure); 0 means DefaultStarvedWait.
	StarvedWait time.Duration
	// ReportCancelled emits the oom, timeout or sandbox_lost event of an
	// action that failed after its ctx ended. Without it such a failure is
	// taken for the cancellation and not reported.
	ReportCancelled bool
	// AsyncBoundary runs Sandboxes.Boundary in the background, so the
	// agent's model wait starts as soon as its action is done: the next
	// Run for the agent, and Settle, wait for it first, so the manager
	// still sees one agent's calls in order. Live on the real traces
	// (the replay at about a twelfth of their time) the boundary, which
	// lists the sandbox's processes and reads its working set, took a
	// median 32 ms and a p90 530 ms on a loaded 2-core host, 394 s over
	// batch18 twice at 2 GiB, all of it on the agents' path before their
	// model waits. The replay sets it; the daemon, whose harness sends its
	// next action when it likes, does not.
	AsyncBoundary bool
}

// StepAction is one call of Step.Run: how to run the action and the host's
// hooks around it. The hooks may be nil.
type StepAction struct {
	// Index numbers the action in events and in the Outcome.
	Index int
	// Request is what Backend.Exec runs.
	Request sandbox.ExecRequest
	// Wait bounds the wait for a sandbox and for admission; nil means ctx.
	// Exec and Boundary use ctx.
	Wait context.Context
	// Since is when the action began to queue; zero means when ActionReady
	// is called. Outcome.Queued runs from it.
	Since time.Time
	// Admitted is called when ActionReady granted g, before the admit event.
	Admitted func(g Grant, queued time.Duration)
	// Running is called with true just before Exec, with false just after.
	Running func(running bool)
	// Done is called right after Policy.ActionDone.
	Done func(g Grant, o Outcome)
}

// StepResult is what Step.Run did.
type StepResult struct {
	// StartRetries counts the failed sandbox starts that were retried.
	StartRetries int
	// Admitted is true when ActionReady granted the action: Exec ran,
	// ActionDone was called, and Outcome and Exec are set.
	Admitted bool
	Outcome  Outcome
	Exec     sandbox.ExecResult
}

// Run runs the action a.Action() (a.Next set by the caller, not nil). It
// returns nil when the action ran and the attempt may go on (a non-zero
// exit included, see Outcome.Failure); ErrSandboxLost when no sandbox could
// be started; the admission error; the Outcome.Failure that ends the
// attempt; or ctx's error when ctx ended with the action failed or during
// a failed Boundary. A Boundary failure otherwise is logged and emitted, not
// returned. After a failure Boundary is skipped: the sandbox is the
// caller's to release.
func (s *Step) Run(ctx context.Context, a *Agent, x StepAction) (StepResult, error) {
	var res StepResult
	wait := x.Wait
	if wait == nil {
		wait = ctx
	}
	if err := s.Settle(wait, a); err != nil {
		return res, err
	}
	id, retries, err := s.ensure(wait, a, x.Index)
	res.StartRetries = retries
	if err != nil {
		if wait.Err() != nil {
			return res, wait.Err()
		}
		s.Emit(a, Event{Kind: EventSandboxLost, Workflow: a.ID, Action: IntPtr(x.Index), Error: err.Error()})
		return res, fmt.Errorf("%w: %w", ErrSandboxLost, err)
	}
	t0 := x.Since
	if t0.IsZero() {
		t0 = s.Clock.Now()
	}
	act := a.Action()
	st, _ := s.Sandboxes.(Staller)
	if st != nil {
		st.Stall(a)
	}
	g, err := s.Policy.ActionReady(wait, a, act)
	if st != nil {
		// Paged out while it waited: back in before the action, or, when
		// that fails, thawed with its memory faulting back on demand.
		if uerr := st.Unstall(context.WithoutCancel(ctx), a); uerr != nil {
			s.Logger.Warn("paging a sandbox back in after admission", "agent", a.ID, "sandbox", id, "err", uerr)
		}
	}
	if err != nil {
		return res, fmt.Errorf("waiting for admission of action %d: %w", x.Index, err)
	}
	queued := s.Clock.Now().Sub(t0)
	if x.Admitted != nil {
		x.Admitted(g, queued)
	}
	s.Emit(a, Event{
		Kind: EventAdmit, Workflow: a.ID, Action: IntPtr(x.Index), Class: act.Class,
		Sandbox: id, QueuedS: queued.Seconds(), Charge: g.Charge, PredPeak: g.Peak, Heavy: g.Heavy,
	})

	res.Admitted = true
	res.Outcome, res.Exec = s.exec(ctx, a, id, x)
	o := &res.Outcome
	o.Queued = queued
	fail := o.Failure()
	cancelled := ctx.Err() != nil
	if fail != nil && (!cancelled || s.ReportCancelled) {
		s.failEvent(ctx, a, *o)
	}
	s.Policy.ActionDone(a, g, *o)
	if x.Done != nil {
		x.Done(g, *o)
	}
	switch {
	case fail != nil && cancelled:
		return res, ctx.Err()
	case fail != nil:
		return res, fail
	}
	if s.AsyncBoundary {
		// The caller may set a.Next meanwhile (Boundary reads the
		// outcome's index, not Next); a Boundary that changes a (a
		// teardown clearing SandboxID) is seen by the next Run after
		// Settle.
		done, out := make(chan struct{}), *o
		a.boundary = done
		go func() {
			defer close(done)
			_ = s.boundary(ctx, a, out, x.Index)
		}()
		return res, nil
	}
	return res, s.boundary(ctx, a, *o, x.Index)
}

// boundary calls Sandboxes.Boundary after action index; it returns ctx's
// error when ctx ended during a failed Boundary, and otherwise logs and
// emits a failure and returns nil.
func (s *Step) boundary(ctx context.Context, a *Agent, o Outcome, index int) error {
	if err := s.Sandboxes.Boundary(ctx, a, o); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Fail-closed: the manager keeps the sandbox; the agent goes on.
		s.Logger.Warn("action boundary", "agent", a.ID, "action", index, "err", err)
		s.Emit(a, Event{Kind: EventError, Workflow: a.ID, Action: IntPtr(index), Reason: "boundary", Error: err.Error()})
	}
	return nil
}

// Settle waits until the boundary Run left running for a in the background
// (AsyncBoundary) is done, or ctx ends; call it before Sandboxes.Release.
func (s *Step) Settle(ctx context.Context, a *Agent) error {
	if a.boundary == nil {
		return nil
	}
	select {
	case <-a.boundary:
		a.boundary = nil
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ensure brings a's sandbox up, retrying a failed start; it returns the
// number of retries. A start fails for transient reasons (a domain at its
// budget under the OOM hold refuses the kernel's own allocations for the
// container's init) and no work is lost by waiting. A start refused for
// want of memory (memStarved) is retried for as long as StarvedWait, the
// backoff doubling up to 8 StartBackoffs, without counting against
// StartRetries: memory comes back when the hold's wait ends (an action
// ends, or the hold preempts one), which may take longer than a few
// retries. Live, three retries a second apart lost attempts to it: with
// the gate alone on the bundled workload at 2 GiB (v1), each attempt the
// hold preempted restarted into the full domain, its sandbox's cgroup
// could not be created (mkdir: cannot allocate memory), and after three
// tries the attempt was lost and charged a retry: 6 of 12 workflows never
// finished, with no OOM kill.
func (s *Step) ensure(ctx context.Context, a *Agent, index int) (string, int, error) {
	var starvedSince time.Time
	backoff := s.StartBackoff
	failed := 0 // failures counted against StartRetries
	for try := 0; ; try++ {
		id, err := s.Sandboxes.Ensure(ctx, a)
		if err == nil || ctx.Err() != nil {
			return id, try, err
		}
		wait := s.StartBackoff
		if memStarved(err) {
			if starvedSince.IsZero() {
				starvedSince = s.Clock.Now()
			}
			if s.Clock.Now().Sub(starvedSince) >= s.starvedWait() {
				return id, try, err
			}
			wait, backoff = backoff, min(2*backoff, 8*s.StartBackoff)
		} else {
			if failed >= s.StartRetries {
				return id, try, err
			}
			failed++
		}
		s.Emit(a, Event{Kind: EventError, Workflow: a.ID, Action: IntPtr(index),
			Reason: "sandbox start failed; retrying", Error: err.Error()})
		if err := clock.Sleep(ctx, s.Clock, wait); err != nil {
			return "", try + 1, err
		}
	}
}

// DefaultStarvedWait is Step.StarvedWait's default.
const DefaultStarvedWait = 10 * time.Minute

func (s *Step) starvedWait() time.Duration {
	if s.StarvedWait > 0 {
		return s.StarvedWait
	}
	return DefaultStarvedWait
}

// memStarved reports whether a sandbox start failed for want of memory:
// ENOMEM, which the process backend's runtime reports as text (the
// domain's memory cgroup at its limit refuses the new cgroup's own
// allocation).
func memStarved(err error) bool {
	return errors.Is(err, syscall.ENOMEM) || strings.Contains(err.Error(), syscall.ENOMEM.Error())
}

// exec runs the action in sandbox id, measures it and emits action_start
// and action_done.
func (s *Step) exec(ctx context.Context, a *Agent, id string, x StepAction) (Outcome, sandbox.ExecResult) {
	act := a.Action()
	s.Emit(a, Event{Kind: EventActionStart, Workflow: a.ID, Action: IntPtr(x.Index), Class: act.Class, Command: act.Command, Sandbox: id})
	if x.Running != nil {
		x.Running(true)
	}
	s.Live.SetRunning(id, true)
	t0 := s.Clock.Now()
	actx := ctx
	if p, ok := s.Policy.(Preempter); ok {
		var done func()
		actx, done = p.Preemptible(ctx, a)
		defer done()
	}
	er, err := s.Backend.Exec(actx, id, x.Request)
	s.Live.SetRunning(id, false)
	if x.Running != nil {
		x.Running(false)
	}
	o := Outcome{
		Index: x.Index, Class: act.Class, Sandbox: id,
		AvgBytes: er.AvgMemory, PeakBytes: er.PeakMemory, Duration: er.Duration,
		Exit: er.ExitCode, OOM: er.OOMKilled, TimedOut: er.TimedOut, Err: err,
		Preempted:  ctx.Err() == nil && errors.Is(context.Cause(actx), ErrPreempted),
		RolledBack: ctx.Err() == nil && errors.Is(context.Cause(actx), ErrRolledBack),
	}
	if o.Duration == 0 {
		o.Duration = s.Clock.Now().Sub(t0)
	}
	if err != nil && !errors.Is(err, sandbox.ErrSandboxDead) && !errors.Is(err, sandbox.ErrNotFound) && actx.Err() == nil {
		s.Logger.Warn("exec failed", "agent", a.ID, "action", x.Index, "sandbox", id, "err", err)
	}
	kind := "run"
	switch {
	case act.Mem != nil:
		kind = "mem"
	case act.Edit != nil:
		kind = "edit"
	}
	e := Event{
		Kind: EventActionDone, Workflow: a.ID, Action: IntPtr(x.Index),
		Class: act.Class, Command: act.Command, Sandbox: id, ActionKind: kind,
		AvgBytes: o.AvgBytes, PeakBytes: o.PeakBytes, DurationS: o.Duration.Seconds(),
		Exit: IntPtr(o.Exit), OOM: o.OOM, TimedOut: o.TimedOut,
		ProfilePeakBytes: int64(math.Round(act.PeakMiB() * float64(units.MiB))),
	}
	if err != nil {
		e.Error = err.Error()
	}
	if o.Exit != 0 {
		e.StderrTail = StderrTail(er.Stderr)
	}
	s.Emit(a, e)
	return o, er
}

// StderrTailBytes bounds Event.StderrTail.
const StderrTailBytes = 256

// StderrTail is the last StderrTailBytes of stderr, its trailing newline
// dropped, as valid UTF-8.
func StderrTail(stderr []byte) string {
	b := bytes.TrimRight(stderr, "\n")
	if len(b) > StderrTailBytes {
		b = b[len(b)-StderrTailBytes:]
	}
	return strings.ToValidUTF8(string(b), "")
}

// failEvent emits the event naming why o ends the attempt. An action that
// failed only because ctx ended was cancelled, not lost: its sandbox may be
// fine, so it is an error event with reason "action cancelled".
func (s *Step) failEvent(ctx context.Context, a *Agent, o Outcome) {
	e := Event{Workflow: a.ID, Action: IntPtr(o.Index), Class: o.Class, Sandbox: o.Sandbox, PeakBytes: o.PeakBytes}
	switch {
	case o.RolledBack:
		e.Kind = EventRollback
	case o.Preempted:
		e.Kind = EventPreempt
	case o.OOM:
		e.Kind = EventOOM
	case o.TimedOut:
		e.Kind = EventTimeout
	case Cancelled(ctx, o):
		e.Kind, e.Reason = EventError, "action cancelled"
	default:
		e.Kind = EventSandboxLost
	}
	if o.Err != nil {
		e.Error = o.Err.Error()
	}
	s.Emit(a, e)
}

// Cancelled reports whether o failed only because ctx ended: no OOM kill,
// no timeout, and an Exec error that is ctx's own. The backend then killed
// the action's processes on request; nothing says its sandbox is broken.
func Cancelled(ctx context.Context, o Outcome) bool {
	return ctx.Err() != nil && !o.OOM && !o.TimedOut && o.Err != nil && errors.Is(o.Err, ctx.Err())
}
