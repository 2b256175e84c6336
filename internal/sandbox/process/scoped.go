//go:build linux

package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// Per-tool scopes (sandbox.ExecRequest.Scoped). The executor starts the
// action blocked on a gate trampoline and announces it (opGate) with its
// pid inside the sandbox; the host resolves the host pid, creates the
// scope <sandbox cgroup>/tool-<seq>, moves the pid into it and opens the
// gate, so the action's first instruction runs charged to the scope. The
// executor, which buffers the output, stays outside. When the result
// arrives the host kills what the action left in the scope, empties the
// scope's memory (cgroup.Drop: v1 force_empty, v2 memory.reclaim) and
// removes it. On cgroup v2 the sandbox's own tasks (init and what it runs)
// first move to the leaf <sandbox cgroup>/init (cgroup.Vacate): a v2 group
// with tasks of its own cannot give its children the memory controller.

// scopeKillTimeout bounds killing what an action left in its scope.
const scopeKillTimeout = 5 * time.Second

// errNoHostPid means no task of the sandbox has the gated pid.
var errNoHostPid = errors.New("process backend: gated action not found among the sandbox's tasks")

// toolScope is the scope of one Scoped action.
type toolScope struct {
	layout *cgroup.Layout
	path   string
	group  cgroup.Group
}

// place creates the scope and moves the gated process (nsPid in the
// sandbox's pid namespace) into it.
func (s *toolScope) place(sandboxGroup cgroup.Group, nsPid int) error {
	pids, err := sandboxGroup.Pids()
	if err != nil {
		return fmt.Errorf("listing sandbox tasks: %w", err)
	}
	host, err := hostPid(s.layout.ProcRoot, pids, nsPid)
	if err != nil {
		return err
	}
	if err := cgroup.Vacate(s.layout, sandboxGroup.Path(), "init"); err != nil {
		return fmt.Errorf("making room for scope %s: %w", s.path, err)
	}
	g, err := cgroup.Create(s.layout, s.path)
	if err != nil {
		return fmt.Errorf("creating scope %s: %w", s.path, err)
	}
	s.group = g
	if err := g.AddProc(host); err != nil {
		return fmt.Errorf("placing pid %d in scope %s: %w", host, s.path, err)
	}
	return nil
}

// drop kills what is left in the scope, empties and removes it. It returns
// the scope's usage before and after emptying.
func (s *toolScope) drop() (held, left int64, err error) {
	if s.group == nil {
		return 0, 0, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), scopeKillTimeout)
	defer cancel()
	if err := s.group.KillAll(ctx); err != nil {
		return 0, 0, fmt.Errorf("killing what is left in scope %s: %w", s.path, err)
	}
	if st, err := s.group.Memory(); err == nil {
		held = st.Usage
	}
	left, err = cgroup.Drop(s.layout, s.group)
	if err != nil {
		return held, left, fmt.Errorf("dropping scope %s: %w", s.path, err)
	}
	s.group = nil
	return held, left, nil
}

// hostPid returns the pid among candidates (host pids) whose innermost
// pid-namespace pid is nsPid, read from <procRoot>/<pid>/status.
func hostPid(procRoot string, candidates []int, nsPid int) (int, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	for _, p := range candidates {
		f, err := os.Open(filepath.Join(procRoot, strconv.Itoa(p), "status"))
		if err != nil {
			continue // exited meanwhile
		}
		ns, err := parseNSpid(f)
		f.Close()
		if err == nil && len(ns) > 0 && ns[len(ns)-1] == nsPid {
			return p, nil
		}
	}
	return 0, fmt.Errorf("pid %d: %w", nsPid, errNoHostPid)
}

// parseNSpid reads the NSpid line of /proc/PID/status: the pid in each pid
// namespace the process belongs to, outermost first.
func parseNSpid(r io.Reader) ([]int, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "NSpid:")
		if !ok {
			continue
		}
		var out []int
		for _, f := range strings.Fields(rest) {
			n, err := strconv.Atoi(f)
			if err != nil {
				return nil, fmt.Errorf("NSpid field %q: %w", f, err)
			}
			out = append(out, n)
		}
		if len(out) == 0 {
			return nil, errors.New("empty NSpid line")
		}
		return out, nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("no NSpid line (kernel older than 4.1?)")
}

// scopedArgv is the command trivial classifies for req.
func scopedArgv(argv []string, shell string) []string {
	if shell != "" {
		return []string{"/bin/sh", "-c", shell}
	}
	return argv
}
