//go:build linux

package scope

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// gateScript blocks on fd 3 until the runner has moved the shell into the
// scope, then execs the tool with fd 3 closed. EOF without a line (the move
// failed) exits 125 without running the tool.
const gateScript = `read -r _ <&3 || exit 125; exec "$@" 3<&-`

// allV2 says whether every hierarchy of the layout is cgroup v2, so a child
// can be cloned straight into the scope.
func allV2(l *cgroup.Layout) bool {
	for _, m := range l.Controllers {
		if m.Version != cgroup.V2 {
			return false
		}
	}
	return true
}

func (r *Runner) runInScope(ctx context.Context, path string, req Request) (res Result, err error) {
	res = Result{Scoped: true, Scope: path}
	g, err := cgroup.Create(r.Layout, path)
	if err != nil {
		return res, fmt.Errorf("creating scope: %w", err)
	}
	killed := false
	defer func() {
		if killed {
			return
		}
		// Failure before the tree was reaped: leave nothing behind.
		kctx, cancel := context.WithTimeout(context.Background(), orDefault(r.KillTimeout, 5*time.Second))
		defer cancel()
		_ = g.KillAll(kctx)
		if derr := g.Delete(); derr != nil {
			r.Log.Warn("removing scope after failure", "scope", path, "err", derr)
		}
	}()

	outR, outW, err := os.Pipe()
	if err != nil {
		return res, fmt.Errorf("creating stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return res, fmt.Errorf("creating stderr pipe: %w", err)
	}
	out, errb := newCapped(req.OutputCap), newCapped(req.OutputCap)
	var copiers sync.WaitGroup
	for _, p := range []struct {
		r *os.File
		w io.Writer
	}{{outR, out}, {errR, errb}} {
		copiers.Go(func() { _, _ = io.Copy(p.w, p.r) })
	}
	closeReaders := func() { outR.Close(); errR.Close() }

	start := time.Now()
	cmd, err := r.start(g, req, outW, errW)
	outW.Close()
	errW.Close()
	if err != nil {
		copiers.Wait()
		closeReaders()
		return res, err
	}

	// The context kills the whole tree, not only the main process.
	stop := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() {
		select {
		case <-ctx.Done():
			kctx, cancel := context.WithTimeout(context.Background(), orDefault(r.KillTimeout, 5*time.Second))
			defer cancel()
			_ = g.KillAll(kctx)
		case <-stop:
		}
	})
	werr := cmd.Wait()
	res.Duration = time.Since(start)
	close(stop)
	watcher.Wait()
	res.ExitCode = cmd.ProcessState.ExitCode()

	// The invocation's tree ends with its main process.
	kctx, cancel := context.WithTimeout(context.Background(), orDefault(r.KillTimeout, 5*time.Second))
	kerr := g.KillAll(kctx)
	cancel()
	if kerr != nil {
		closeReaders()
		copiers.Wait()
		return res, fmt.Errorf("killing what is left in scope %s: %w", path, kerr)
	}
	killed = true
	done := make(chan struct{})
	go func() { copiers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(orDefault(r.OutputGrace, time.Second)):
		r.Log.Warn("output pipes still open after the scope emptied", "scope", path)
	}
	closeReaders()
	<-done
	res.Stdout, res.StdoutDropped = out.result()
	res.Stderr, res.StderrDropped = errb.result()

	if st, merr := g.Memory(); merr == nil {
		res.Peak, res.Held = st.Peak, st.Usage
	}
	t0 := time.Now()
	left, derr := Drop(r.Layout, g)
	res.Drop, res.Left = time.Since(t0), left
	r.Log.Debug("scope done", "scope", path, "exit", res.ExitCode, "peak", res.Peak,
		"held", res.Held, "left", res.Left, "drop", res.Drop)

	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("running %s in scope: %w", req.Argv[0], ctx.Err())
	case werr != nil && !errors.As(werr, &exit):
		return res, fmt.Errorf("waiting for %s: %w", req.Argv[0], werr)
	case derr != nil:
		return res, derr
	}
	return res, nil
}

// start starts the tool inside g: cloned into it on all-v2 layouts, through
// the gate trampoline otherwise.
func (r *Runner) start(g cgroup.Group, req Request, stdout, stderr *os.File) (*exec.Cmd, error) {
	if allV2(r.Layout) {
		dirs, err := r.Layout.Dirs(g.Path())
		if err != nil {
			return nil, err
		}
		fd, err := syscall.Open(dirs[cgroup.Memory], syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("opening scope %s: %w", g.Path(), err)
		}
		defer syscall.Close(fd)
		cmd := r.command(req, req.Argv, stdout, stderr)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting %s in scope: %w", req.Argv[0], err)
		}
		return cmd, nil
	}

	gateR, gateW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating gate pipe: %w", err)
	}
	defer gateW.Close()
	argv := append([]string{r.shell(), "-c", gateScript, "tenon-scope"}, req.Argv...)
	cmd := r.command(req, argv, stdout, stderr)
	cmd.ExtraFiles = []*os.File{gateR}
	err = cmd.Start()
	gateR.Close()
	if err != nil {
		return nil, fmt.Errorf("starting gate for %s: %w", req.Argv[0], err)
	}
	if err := g.AddProc(cmd.Process.Pid); err != nil {
		gateW.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("placing %s in scope: %w", req.Argv[0], err)
	}
	if _, err := gateW.Write([]byte("go\n")); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("opening gate for %s: %w", req.Argv[0], err)
	}
	return cmd, nil
}

func (r *Runner) command(req Request, argv []string, stdout, stderr *os.File) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = req.Dir, req.Env, req.Stdin
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd
}
