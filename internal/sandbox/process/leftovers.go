//go:build linux

package process

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// The processes of an action, killed from outside the sandbox through its
// cgroup (see the package doc, "Leftovers and deadlines").

const (
	// actionKillTimeout bounds killing an action's processes.
	actionKillTimeout = 5 * time.Second
	// freezeTimeout bounds the freeze that stops a fork bomb while its
	// processes are killed.
	freezeTimeout = time.Second
	// killPoll is the interval between kill rounds.
	killPoll = 5 * time.Millisecond
)

// actionProcs returns the pids among current (the host pids of the
// sandbox's cgroup) that belong to the running action: not init, not in
// before (running when the action started), and not descended from a
// process in before. parent gives a host pid's parent (0 when unknown).
// A process is the action's when its chain of parents reaches init, or
// leaves the sandbox, before it meets a process of before: the action's
// own tree, and the orphans anyone left (init adopts them).
func actionProcs(current []int, init int, before map[int]bool, parent func(int) int) []int {
	in := make(map[int]bool, len(current))
	for _, p := range current {
		in[p] = true
	}
	var out []int
	for _, p := range current {
		if p == init || before[p] {
			continue
		}
		mine := true
		for q, n := parent(p), 0; in[q] && q != init && n < len(current); q, n = parent(q), n+1 {
			if before[q] {
				mine = false
				break
			}
		}
		if mine {
			out = append(out, p)
		}
	}
	return out
}

// pidSet is the set of the sandbox's processes now.
func (bx *box) pidSet() (map[int]bool, error) {
	pids, err := bx.group.Pids()
	if err != nil {
		return nil, err
	}
	set := make(map[int]bool, len(pids))
	for _, p := range pids {
		set[p] = true
	}
	return set, nil
}

// killAction kills the processes of the action that started when the
// sandbox held before, and waits until none is left. Unless the sandbox is
// paused, it freezes the sandbox around each round of kills, so that no
// process can fork between the listing and the kill (a fork bomb); a
// paused sandbox's processes get the SIGKILL and die when it is resumed.
// It returns the number of processes killed.
func (bx *box) killAction(before map[int]bool) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), actionKillTimeout)
	defer cancel()
	parent := func(pid int) int { return parentPid(bx.procRoot, pid) }
	killed := make(map[int]bool)
	for {
		pids, err := bx.group.Pids()
		if err != nil {
			return len(killed), fmt.Errorf("listing the action's processes: %w", err)
		}
		if len(actionProcs(pids, bx.initPid, before, parent)) == 0 {
			return len(killed), nil
		}
		paused := bx.paused.Load()
		if !paused {
			fctx, fcancel := context.WithTimeout(ctx, freezeTimeout)
			_ = bx.group.Freeze(fctx) // best effort: the kill rounds go on without it
			fcancel()
			if pids, err = bx.group.Pids(); err != nil {
				_ = bx.group.Thaw(ctx)
				return len(killed), fmt.Errorf("listing the action's processes: %w", err)
			}
		}
		for _, p := range actionProcs(pids, bx.initPid, before, parent) {
			if err := syscall.Kill(p, syscall.SIGKILL); err == nil {
				killed[p] = true
			}
		}
		if paused {
			return len(killed), nil
		}
		if err := bx.group.Thaw(ctx); err != nil {
			return len(killed), fmt.Errorf("thawing after the kill: %w", err)
		}
		t := time.NewTimer(killPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return len(killed), fmt.Errorf("processes of the action left after %s", actionKillTimeout)
		case <-t.C:
		}
	}
}

// parentPid reads the parent of pid from <procRoot>/<pid>/stat; 0 when
// the process is gone.
func parentPid(procRoot string, pid int) int {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	return parseStatPpid(b)
}

// parseStatPpid returns the ppid field of a /proc/<pid>/stat line (the
// second field after the parenthesized comm, which may hold spaces and
// parentheses); 0 when malformed.
func parseStatPpid(stat []byte) int {
	f, err := procfs.StatField(stat, 4)
	if err != nil {
		return 0
	}
	p, err := strconv.Atoi(f)
	if err != nil {
		return 0
	}
	return p
}
