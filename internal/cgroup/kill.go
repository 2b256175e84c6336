package cgroup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"
)

// killPoll is the interval between checks that the group emptied.
const killPoll = 5 * time.Millisecond

// KillAll sends SIGKILL to every task of the group and its descendants and
// waits until none remain or ctx is done (then the error wraps ErrNotEmpty).
// On v1 it first thaws frozen groups, whose tasks would not act on SIGKILL;
// on v2 it uses cgroup.kill where the kernel has it (5.14+).
func (g *group) KillAll(ctx context.Context) error {
	for {
		pids, err := g.Pids()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if err := g.thawTree(ctx); err != nil && ctx.Err() == nil {
			return fmt.Errorf("killing tasks of %s: %w", g.path, err)
		}
		if err := g.killV2(); err != nil {
			return fmt.Errorf("killing tasks of %s: %w", g.path, err)
		}
		for _, p := range pids {
			if err := g.signal(p); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("killing pid %d of %s: %w", p, g.path, err)
			}
		}
		t := time.NewTimer(killPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			left, _ := g.Pids()
			if len(left) == 0 {
				return nil
			}
			return fmt.Errorf("killing tasks of %s: %d left: %w: %w", g.path, len(left), ErrNotEmpty, ctx.Err())
		case <-t.C:
		}
	}
}

// killV2 writes 1 to cgroup.kill of the unified group when tenon uses it and
// the kernel has the file.
func (g *group) killV2() error {
	if !g.usesUnified() || g.layout.Unified == "" {
		return nil
	}
	p := filepath.Join(g.layout.Unified, filepath.FromSlash(g.path), "cgroup.kill")
	if !exists(p) {
		return nil
	}
	return g.write(p, "1")
}

// signal sends SIGKILL to pid.
func (g *group) signal(pid int) error { return g.kill(pid) }
