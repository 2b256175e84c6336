package docker

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/memsample"
)

// Timings of an exec's end.
const (
	pollInterval = 100 * time.Millisecond // exec state polls while output is open
	// holdGrace is how long the output may stay open after the action's
	// process exited (a background process holding stdout) before it is cut.
	holdGrace = 200 * time.Millisecond
)

// Exec runs req as a fresh exec in the sandbox's container. An action
// started while the sandbox is paused waits for Resume.
func (b *Backend) Exec(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	for {
		r, err := b.exec(ctx, id, req)
		if err != nil || !refusedPaused(r) {
			return r, err
		}
		// The sandbox was frozen as runc started the exec, so the action
		// never ran: run it again once the sandbox is thawed.
		select {
		case <-ctx.Done():
			return sandbox.ExecResult{}, fmt.Errorf("exec in sandbox %s: %w", id, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// runcPaused is how the engine reports an exec that runc refused to start
// in a frozen container (exit 126, the message as the exec's output).
const runcPaused = "cannot exec in a paused container"

// refusedPaused reports whether r is runc's refusal to exec in a frozen
// container rather than the action's own result.
func refusedPaused(r sandbox.ExecResult) bool {
	return r.ExitCode == 126 && (bytes.Contains(r.Stdout, []byte(runcPaused)) || bytes.Contains(r.Stderr, []byte(runcPaused))) &&
		len(r.Stdout)+len(r.Stderr) < 1024
}

func (b *Backend) exec(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	bx, err := b.lookup(id)
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	cmd, cwd, err := validateExec(req)
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	limit := req.OutputLimit
	if limit <= 0 {
		limit = sandbox.DefaultOutputLimit
	}
	if !b.initAlive(bx) {
		return sandbox.ExecResult{}, fmt.Errorf("sandbox %s: init (pid %d) has exited: %w", id, bx.initPid, sandbox.ErrSandboxDead)
	}
	var (
		cr     container.ExecCreateResponse
		start  time.Time
		hj     types.HijackedResponse
		before cgroup.MemoryStats
		pre    []int // the container's tasks before the action
	)
	for {
		// A paused sandbox holds the action until it is resumed, as a
		// frozen process-backend sandbox does; the engine refuses to exec
		// in a paused container, so wait for the thaw (and again if the
		// gate paused it between the check and the exec).
		if err := b.waitThawed(ctx, bx); err != nil {
			return sandbox.ExecResult{}, err
		}
		if before, err = bx.cg.Memory(); err != nil {
			return sandbox.ExecResult{}, b.failed(ctx, bx, "reading memory", err)
		}
		if pre, err = bx.cg.Pids(); err != nil {
			return sandbox.ExecResult{}, b.failed(ctx, bx, "listing tasks", err)
		}
		_ = bx.cg.ResetPeak()
		what := "creating exec"
		cr, err = b.cli.ContainerExecCreate(ctx, bx.cid, container.ExecOptions{
			AttachStdout: true, AttachStderr: true, Env: req.Env, WorkingDir: cwd, Cmd: cmd,
		})
		if err == nil {
			start = b.cfg.Clock.Now()
			what = "starting exec"
			if hj, err = b.cli.ContainerExecAttach(ctx, cr.ID, container.ExecAttachOptions{}); err == nil {
				break
			}
		}
		if !b.paused(ctx, bx) {
			return sandbox.ExecResult{}, b.failed(ctx, bx, what, err)
		}
	}
	defer hj.Close()
	smp := memsample.Start(func() (int64, error) {
		m, err := bx.cg.Memory()
		return m.Usage, err
	}, b.cfg.Clock, b.cfg.SampleInterval)
	stdout, stderr := &capped{limit: limit}, &capped{limit: limit}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, hj.Reader)
		copied <- err
	}()
	var timeout <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(req.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	poll := time.NewTicker(pollInterval)
	defer poll.Stop()
	timedOut := false
	var exited time.Time
wait:
	for {
		select {
		case <-copied:
			break wait
		case <-timeout:
			timedOut, timeout = true, nil
			b.killTasks(bx, nil)
		case <-ctx.Done():
			// The action's tasks are killed and the sandbox stays; exit -1
			// (killed) confirms it, as the process backend does.
			res := sandbox.ExecResult{Stdout: stdout.buf, Stderr: stderr.buf, Duration: b.cfg.Clock.Now().Sub(start)}
			if b.killTasks(bx, nil) {
				res.ExitCode = -1
			}
			hj.Close()
			<-copied
			smp.Finish()
			return res, fmt.Errorf("exec in sandbox %s: %w", id, ctx.Err())
		case <-poll.C:
			if exited.IsZero() {
				if ei, err := b.cli.ContainerExecInspect(ctx, cr.ID); err == nil && !ei.Running {
					exited = time.Now()
				}
			} else if time.Since(exited) >= holdGrace {
				hj.Close()
			}
		}
	}
	if !req.Background && !timedOut {
		// What the action left running goes with it (a timeout killed
		// every task but the init already).
		b.killTasks(bx, pre)
	}
	end := b.cfg.Clock.Now()
	peak, avg := smp.Finish()
	ei, err := b.execDone(ctx, cr.ID)
	if err != nil {
		return sandbox.ExecResult{}, b.failed(ctx, bx, "inspecting exec", err)
	}
	after, err := bx.cg.Memory()
	if err != nil {
		return sandbox.ExecResult{}, b.failed(ctx, bx, "reading memory", err)
	}
	res := sandbox.ExecResult{
		ExitCode:        exitCode(ei.ExitCode, timedOut),
		Stdout:          stdout.buf,
		Stderr:          stderr.buf,
		StdoutTruncated: stdout.truncated,
		StderrTruncated: stderr.truncated,
		Duration:        end.Sub(start),
		PeakMemory:      max(peak, after.Peak),
		AvgMemory:       avg,
		OOMKilled:       after.OOMKills > before.OOMKills,
		TimedOut:        timedOut,
	}
	if res.ExitCode != 0 && !b.initAlive(bx) {
		return res, fmt.Errorf("sandbox %s: container %s stopped during the action: %w", id, bx.cid[:12], sandbox.ErrSandboxDead)
	}
	return res, nil
}

// validateExec returns the command line and working directory of req.
func validateExec(req sandbox.ExecRequest) (cmd []string, cwd string, err error) {
	switch {
	case len(req.Argv) > 0 && req.Shell != "":
		return nil, "", fmt.Errorf("exec: Argv and Shell are both set: %w", sandbox.ErrInvalidSpec)
	case len(req.Argv) > 0:
		// Through the shell's exec, so a missing program is reported as
		// exit 127 with a message, as on a shell, not as an engine error.
		cmd = append([]string{"/bin/sh", "-c", `exec "$@"`, "sh"}, req.Argv...)
	case req.Shell != "":
		cmd = []string{"/bin/sh", "-c", req.Shell}
	default:
		return nil, "", fmt.Errorf("exec: empty command: %w", sandbox.ErrInvalidSpec)
	}
	cwd = req.Cwd
	if cwd == "" {
		cwd = sandbox.WorkspaceMount
	}
	if !path.IsAbs(cwd) {
		return nil, "", fmt.Errorf("exec: cwd %q is not absolute: %w", cwd, sandbox.ErrInvalidSpec)
	}
	for _, e := range req.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return nil, "", fmt.Errorf("exec: environment entry %q must be KEY=VALUE: %w", e, sandbox.ErrInvalidSpec)
		}
	}
	return cmd, cwd, nil
}

// execDone waits until the engine reports the exec finished (its exit
// event may trail the end of the output by a few milliseconds).
func (b *Backend) execDone(ctx context.Context, execID string) (container.ExecInspect, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		ei, err := b.cli.ContainerExecInspect(ctx, execID)
		if err != nil || !ei.Running {
			return ei, err
		}
		select {
		case <-ctx.Done():
			return ei, fmt.Errorf("exec %s still running: %w", execID, ctx.Err())
		case <-time.After(delay):
		}
	}
}

// killTasks SIGKILLs every task of the container except its init tasks
// and those in spare, until none is left (tasks forked meanwhile are
// caught by the next round); it reports whether none is. A killed task
// stays in the cgroup until its exit is done, which for a fork bomb's
// thousand tasks on a loaded host takes more than a few rounds: the
// rounds go on for up to killWait. A frozen group's tasks on cgroup v1
// die only once thawed, so then one round is all it does.
func (b *Backend) killTasks(bx *box, spare []int) bool {
	deadline := time.Now().Add(killWait)
	for delay := time.Millisecond; ; delay = min(2*delay, 20*time.Millisecond) {
		pids, err := bx.cg.Pids()
		if err != nil {
			return false
		}
		n := 0
		for _, p := range pids {
			if !bx.keep[p] && !slices.Contains(spare, p) {
				_ = syscall.Kill(p, syscall.SIGKILL)
				n++
			}
		}
		if n == 0 {
			return true
		}
		if frozen, err := bx.cg.Frozen(); err == nil && frozen {
			return false
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(delay)
	}
	b.cfg.Log.Warn("tasks survive SIGKILL at the end of an action", "sandbox", bx.id, "waited", killWait)
	return false
}

// killWait bounds killTasks' rounds.
const killWait = 10 * time.Second

// waitThawed returns once the sandbox's freezer is not frozen (or cannot be
// read: the exec call then reports what is wrong), or when ctx ends.
func (b *Backend) waitThawed(ctx context.Context, bx *box) error {
	for delay := time.Millisecond; ; delay = min(2*delay, 20*time.Millisecond) {
		if frozen, err := bx.cg.Frozen(); err != nil || !frozen {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("exec in sandbox %s: waiting for it to be resumed: %w", bx.id, ctx.Err())
		case <-time.After(delay):
		}
	}
}

// paused reports whether the sandbox is paused or being paused: its
// freezer says frozen, or the engine says paused.
func (b *Backend) paused(ctx context.Context, bx *box) bool {
	if frozen, err := bx.cg.Frozen(); err == nil && frozen {
		return true
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	in, err := b.cli.ContainerInspect(ctx, bx.cid)
	return err == nil && in.State != nil && in.State.Paused && in.State.Running
}

// initAlive reports whether the container's init is still a task of its
// cgroup (an exiting task leaves the cgroup before it is reaped, and before
// the engine learns of the exit).
func (b *Backend) initAlive(bx *box) bool {
	pids, err := bx.cg.Pids()
	return err == nil && slices.Contains(pids, bx.initPid)
}

// alive reports whether the sandbox's container is still running.
func (b *Backend) alive(ctx context.Context, bx *box) bool {
	if !b.initAlive(bx) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	in, err := b.cli.ContainerInspect(ctx, bx.cid)
	if err != nil {
		return !client.IsErrNotFound(err)
	}
	return in.State != nil && in.State.Running
}

// failed turns a failed engine call into ErrSandboxDead when the container
// stopped or vanished behind tenon's back, else wraps it.
func (b *Backend) failed(ctx context.Context, bx *box, what string, err error) error {
	if !b.alive(ctx, bx) {
		return fmt.Errorf("sandbox %s: container %s is gone or stopped (%s: %v): %w", bx.id, bx.cid[:12], what, err, sandbox.ErrSandboxDead)
	}
	return daemonErr(b.cli, fmt.Errorf("sandbox %s: %s: %w", bx.id, what, err))
}
