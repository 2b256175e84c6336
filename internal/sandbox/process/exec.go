//go:build linux

package process

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/memsample"
)

const (
	// deadlineGrace is how long after an action's timeout the host waits
	// for the executor's own timeout result before it kills the action
	// from outside.
	deadlineGrace = time.Second
	// cancelGrace bounds the wait for the executor's result after a cancel
	// before the host kills the action from outside.
	cancelGrace = time.Second
	// answerGrace bounds the wait for the executor's result once the host
	// has killed the action; an executor that does not answer by then is
	// killed with its sandbox.
	answerGrace = time.Second
)

// Exec runs one action in the sandbox and waits for it. Actions of one
// sandbox run one at a time; a second Exec waits for the first. When ctx
// ends, the action's processes are killed and ctx's error is returned.
// When the action ends, the processes it left are killed unless
// req.Background. The host enforces req.Timeout itself: an executor that
// does not answer in time is killed with the sandbox, and Exec returns a
// timed-out result with an error wrapping sandbox.ErrSandboxDead.
func (b *Backend) Exec(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	bx, err := b.get(id)
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	if err := sandbox.ValidateExec(req); err != nil {
		return sandbox.ExecResult{}, fmt.Errorf("exec in sandbox %s: %w", id, err)
	}
	limit := req.OutputLimit
	if limit == 0 {
		limit = sandbox.DefaultOutputLimit
	}
	var sc *toolScope
	if req.Scoped && !trivial(scopedArgv(req.Argv, req.Shell), nil) {
		sc = &toolScope{layout: b.cfg.Layout}
	}
	r := request{
		Op: opExec, Argv: req.Argv, Shell: req.Shell, Cwd: req.Cwd, Env: req.Env,
		Timeout: int64(req.Timeout), Limit: limit, Gate: sc != nil,
	}
	if ir := bx.image; ir != nil {
		// The executor's own environment is tenon's defaults only (it
		// runs through the host's loader, which an image's LD_* must not
		// steer); the image's Env, WorkingDir and User travel with each
		// action.
		r.Env = mergeEnv(ir.env, req.Env)
		if r.Cwd == "" {
			r.Cwd = ir.cwd
		}
		r.User = ir.cred
	}
	return bx.exec(ctx, r, sc, req.Background)
}

// exec runs req; sc, when non-nil, is the action's scope (req.Gate set).
// Unless background, what the action leaves running is killed.
func (bx *box) exec(ctx context.Context, req request, sc *toolScope, background bool) (res sandbox.ExecResult, err error) {
	bx.execMu.Lock()
	defer bx.execMu.Unlock()
	if bx.isDead() {
		return sandbox.ExecResult{}, fmt.Errorf("exec in sandbox %s: %w", bx.id, sandbox.ErrSandboxDead)
	}
	before, err := bx.group.Memory()
	if err != nil {
		return sandbox.ExecResult{}, fmt.Errorf("exec in sandbox %s: reading memory: %w", bx.id, err)
	}
	_ = bx.group.ResetPeak() // best effort: the samples bound the peak too
	// Read every sample interval: two files, not Memory's eight.
	usage := bx.group.Charged

	bx.seq++
	req.Seq = bx.seq
	if req.Nonce, err = newNonce(); err != nil {
		return sandbox.ExecResult{}, fmt.Errorf("exec in sandbox %s: %w", bx.id, err)
	}
	pidsBefore, err := bx.pidSet()
	if err != nil {
		return sandbox.ExecResult{}, fmt.Errorf("exec in sandbox %s: listing processes: %w", bx.id, err)
	}
	if sc != nil {
		sc.path = fmt.Sprintf("%s/tool-%d", bx.cgroupPath, req.Seq)
		defer func() {
			held, left, derr := sc.drop()
			if derr != nil && err == nil {
				err = fmt.Errorf("exec in sandbox %s: %w", bx.id, derr)
			}
			bx.log.Debug("scope dropped", "scope", sc.path, "held", held, "left", left)
		}()
	}
	start := time.Now()
	smp := memsample.Start(usage, clock.Real{}, memsample.DefaultInterval)
	r, waitErr := bx.roundTrip(ctx, req, sc, pidsBefore)
	dur := time.Since(start)
	peak, avg := smp.Finish()

	res = sandbox.ExecResult{
		ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr,
		StdoutTruncated: r.StdoutTruncated, StderrTruncated: r.StderrTruncated,
		Duration: dur, AvgMemory: avg, PeakMemory: peak, TimedOut: r.TimedOut,
	}
	if after, err := bx.group.Memory(); err == nil {
		res.PeakMemory = max(res.PeakMemory, after.Peak)
		res.OOMKilled = after.OOMKills > before.OOMKills
	}
	res.DiskFull = bx.diskFull()
	if !bx.isDead() && (!background || r.TimedOut || r.Canceled || waitErr != nil) {
		n, kerr := bx.killAction(pidsBefore)
		if n > 0 {
			bx.log.Debug("killed what the action left", "procs", n, "timed_out", r.TimedOut)
		}
		if kerr != nil && waitErr == nil {
			waitErr = kerr
		}
	}
	if waitErr != nil && res.OOMKilled && bx.oomGroup && errors.Is(waitErr, sandbox.ErrSandboxDead) {
		// The OOM kill took the whole sandbox, init included
		// (memory.oom.group): the result says so, and the next Exec
		// returns ErrSandboxDead.
		waitErr = nil
	}
	if waitErr != nil {
		return res, fmt.Errorf("exec in sandbox %s: %w", bx.id, waitErr)
	}
	// The model wait follows: the executor makes way (before the caller
	// reads what the sandbox keeps between actions).
	bx.hibernate()
	return res, nil
}

// hibernateWait bounds how long hibernate waits for the idle loop to
// announce itself: it execs in a few milliseconds; a slower one is let
// be (its opIdle is dropped later as a stray message).
const hibernateWait = 2 * time.Second

// hibernate asks the idle executor to make way for the idle loop and
// waits until the idle loop says it runs, the executor refuses (it has
// processes to reap: idle_linux.go), the sandbox dies or hibernateWait
// passes; a paused sandbox stays as it is. The caller holds execMu, or
// the box is not shared yet.
func (bx *box) hibernate() {
	if !bx.hibernates || bx.isDead() {
		return
	}
	// No freeze while the executor execs (hibMu); a frozen executor would
	// not answer, and exec it later with no one holding hibMu.
	bx.hibMu.Lock()
	defer bx.hibMu.Unlock()
	if bx.paused.Load() {
		return
	}
	bx.seq++
	req := request{Op: opHibernate, Seq: bx.seq}
	if err := bx.enc.Encode(req); err != nil {
		bx.log.Debug("asking the executor to hibernate", "err", err)
		return
	}
	t := time.NewTimer(hibernateWait)
	defer t.Stop()
	for {
		select {
		case r := <-bx.results:
			switch {
			case r.Op == opIdle:
				return
			case r.Op == opAwake && r.Seq == req.Seq:
				bx.log.Debug("executor stays resident", "why", r.Error)
				return
			}
		case <-bx.dead:
			return
		case <-t.C:
			bx.log.Warn("the idle loop did not announce itself", "after", hibernateWait)
			return
		}
	}
}

// roundTrip sends req and waits for its result, the death of init, or ctx.
// A gate message places the gated action in sc and opens (or aborts) it.
// The host enforces the deadline: deadlineGrace after req.Timeout (or
// cancelGrace after ctx ends) it kills the action's processes (those not
// in before) through the cgroup; if the executor has not answered
// answerGrace later, it kills the sandbox and returns a timed-out (or
// canceled) result with sandbox.ErrSandboxDead.
func (bx *box) roundTrip(ctx context.Context, req request, sc *toolScope, before map[int]bool) (response, error) {
	if err := bx.enc.Encode(req); err != nil {
		if bx.waitDead(time.Second) {
			return response{}, sandbox.ErrSandboxDead
		}
		return response{}, fmt.Errorf("sending request: %w", err)
	}
	var ctxErr, placeErr error
	done := ctx.Done()
	var deadline, answer <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(time.Duration(req.Timeout) + deadlineGrace)
		defer t.Stop()
		deadline = t.C
	}
	timedOut := false
	for {
		select {
		case r := <-bx.results:
			if r.Seq != req.Seq || r.Nonce != req.Nonce {
				if r.Seq == req.Seq {
					bx.log.Warn("dropping an executor message with a wrong nonce", "op", r.Op, "seq", r.Seq)
				}
				continue // the late answer to a canceled action, or a forgery
			}
			if r.Op == opGate && sc != nil {
				placeErr = sc.place(bx.group, r.Pid)
				_ = bx.enc.Encode(request{Op: opOpen, Seq: req.Seq, Abort: placeErr != nil})
				continue
			}
			if r.Op != opResult {
				continue
			}
			if timedOut && !r.TimedOut {
				r.TimedOut, r.ExitCode = true, -1
			}
			if placeErr != nil {
				return r, fmt.Errorf("action not started: %w", placeErr)
			}
			return r, ctxErr
		case <-bx.dead:
			return response{Op: opResult, ExitCode: -1, TimedOut: timedOut}, sandbox.ErrSandboxDead
		case <-done:
			ctxErr = ctx.Err()
			done = nil
			_ = bx.enc.Encode(request{Op: opCancel})
			t := time.NewTimer(cancelGrace)
			defer t.Stop()
			deadline = t.C
		case <-deadline:
			deadline = nil
			timedOut = ctxErr == nil
			state := bx.hangState() // where it is stuck, before the kill changes it
			n, err := bx.killAction(before)
			bx.log.Warn("action past its deadline killed from outside", "seq", req.Seq, "procs", n, "err", err, "sandbox_state", state)
			t := time.NewTimer(answerGrace)
			defer t.Stop()
			answer = t.C
		case <-answer:
			bx.log.Warn("executor not answering after its action was killed: killing the sandbox", "seq", req.Seq, "sandbox_state", bx.hangState())
			_ = syscall.Kill(bx.initPid, syscall.SIGKILL) // kills the whole pid namespace
			bx.waitDead(killTimeout)
			r := response{Op: opResult, ExitCode: -1, TimedOut: timedOut, Canceled: ctxErr != nil}
			return r, fmt.Errorf("executor not answering: %w", sandbox.ErrSandboxDead)
		}
	}
}

// waitDead reports whether init exits within d.
func (bx *box) waitDead(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-bx.dead:
		return true
	case <-t.C:
		return false
	}
}

// newNonce returns 128 random bits in hex: the token that binds a result
// to its exec.
func newNonce() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("making a nonce: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
