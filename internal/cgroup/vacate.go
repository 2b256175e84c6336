package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// vacateRounds bounds Vacate's moves: each round moves the tasks that were
// forked into the group while the previous one ran.
const vacateRounds = 10

// Vacate moves the tasks of group p itself (not its descendants') into its
// child p/leaf, created if missing, so that controllers can then be
// enabled for p's children. cgroup v2 does not let a group that has tasks
// of its own distribute controllers (the no-internal-process rule), and a
// sandbox's group holds its init. Tasks forked into p while it runs are
// moved in later rounds. Where memory is on v1 it does nothing.
func Vacate(layout *Layout, p, leaf string) error {
	if m, ok := layout.Controllers[Memory]; !ok || m.Version != V2 {
		return nil
	}
	c, err := cleanPath(p)
	if err != nil {
		return err
	}
	if leaf == "" || strings.ContainsAny(leaf, "/.") {
		return fmt.Errorf("cgroup: invalid leaf name %q", leaf)
	}
	dir := filepath.Join(layout.Unified, c)
	to := filepath.Join(dir, leaf)
	if err := os.MkdirAll(to, 0o755); err != nil {
		return fmt.Errorf("vacating cgroup %s: %w", c, err)
	}
	for range vacateRounds {
		f, err := os.Open(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return fmt.Errorf("vacating cgroup %s: %w", c, err)
		}
		pids, err := ParsePids(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("vacating cgroup %s: %w", c, err)
		}
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			err := sysWrite(filepath.Join(to, "cgroup.procs"), strconv.Itoa(pid))
			if err != nil && !errors.Is(err, syscall.ESRCH) { // ESRCH: it exited
				return fmt.Errorf("vacating cgroup %s: moving pid %d: %w", c, pid, err)
			}
		}
	}
	return fmt.Errorf("vacating cgroup %s: tasks still appear after %d rounds: %w", c, vacateRounds, ErrNotEmpty)
}
