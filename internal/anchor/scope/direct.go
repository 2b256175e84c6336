package scope

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// runDirect runs a trivial command where the runner lives, without a scope.
func (r *Runner) runDirect(ctx context.Context, req Request) (Result, error) {
	out, errb := newCapped(req.OutputCap), newCapped(req.OutputCap)
	cmd := exec.CommandContext(ctx, req.Argv[0], req.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = req.Dir, req.Env, req.Stdin
	cmd.Stdout, cmd.Stderr = out, errb
	cmd.WaitDelay = orDefault(r.OutputGrace, time.Second)
	start := time.Now()
	err := cmd.Run()
	res := Result{Duration: time.Since(start)}
	res.Stdout, res.StdoutDropped = out.result()
	res.Stderr, res.StderrDropped = errb.result()
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("running %s: %w", req.Argv[0], ctx.Err())
	case err == nil || errors.As(err, &exit):
		return res, nil
	default:
		return res, fmt.Errorf("running %s: %w", req.Argv[0], err)
	}
}
