//go:build linux

package process

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/memsample"
)

// cancelGrace bounds the wait for the executor's result after a cancel.
const cancelGrace = 5 * time.Second

// Exec runs one action in the sandbox and waits for it. Actions of one
// sandbox run one at a time; a second Exec waits for the first. When ctx
// ends, the action's processes are killed and ctx's error is returned.
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
	return bx.exec(ctx, request{
		Op: opExec, Argv: req.Argv, Shell: req.Shell, Cwd: req.Cwd, Env: req.Env,
		Timeout: int64(req.Timeout), Limit: limit, Gate: sc != nil,
	}, sc)
}

// exec runs req; sc, when non-nil, is the action's scope (req.Gate set).
func (bx *box) exec(ctx context.Context, req request, sc *toolScope) (res sandbox.ExecResult, err error) {
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
	usage := func() (int64, error) {
		m, err := bx.group.Memory()
		return m.Usage + m.Swap, err
	}

	bx.seq++
	req.Seq = bx.seq
	if req.Nonce, err = newNonce(); err != nil {
		return sandbox.ExecResult{}, fmt.Errorf("exec in sandbox %s: %w", bx.id, err)
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
	r, waitErr := bx.roundTrip(ctx, req, sc)
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
	if waitErr != nil {
		return res, fmt.Errorf("exec in sandbox %s: %w", bx.id, waitErr)
	}
	if r.Remaining > 0 {
		bx.log.Debug("processes outlive the action", "remaining", r.Remaining)
	}
	return res, nil
}

// roundTrip sends req and waits for its result, the death of init, or ctx.
// A gate message places the gated action in sc and opens (or aborts) it.
func (bx *box) roundTrip(ctx context.Context, req request, sc *toolScope) (response, error) {
	if err := bx.enc.Encode(req); err != nil {
		if bx.waitDead(time.Second) {
			return response{}, sandbox.ErrSandboxDead
		}
		return response{}, fmt.Errorf("sending request: %w", err)
	}
	var ctxErr, placeErr error
	done := ctx.Done()
	var grace <-chan time.Time
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
			if placeErr != nil {
				return r, fmt.Errorf("action not started: %w", placeErr)
			}
			return r, ctxErr
		case <-bx.dead:
			return response{}, sandbox.ErrSandboxDead
		case <-done:
			ctxErr = ctx.Err()
			done = nil
			_ = bx.enc.Encode(request{Op: opCancel})
			t := time.NewTimer(cancelGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			return response{}, fmt.Errorf("no result %s after cancel: %w", cancelGrace, ctxErr)
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
