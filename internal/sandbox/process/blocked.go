package process

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// blockedTasks counts the threads of pids in uninterruptible sleep (state
// D in <procRoot>/PID/task/TID/stat): a task in cgroup v1's OOM wait
// sleeps so, as does one throttled above memory.high on v2 or waiting for
// a disk. Processes and threads that exit meanwhile are skipped.
func blockedTasks(procRoot string, pids []int) int {
	n := 0
	for _, pid := range pids {
		dir := filepath.Join(procRoot, strconv.Itoa(pid), "task")
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
			if err != nil {
				continue
			}
			if st, err := procfs.StatField(b, 3); err == nil && st == "D" {
				n++
			}
		}
	}
	return n
}

// hangState describes, for the log, where a sandbox whose executor does
// not answer is stuck: whether its group is frozen, and its processes'
// threads (up to 8 processes, 4 threads each), each by state and the
// kernel function it sleeps in (<procRoot>/PID/task/TID/wchan), e.g.
// "frozen=false procs=2 1:[S ep_poll, S futex_wait_queue]
// 7:[D mem_cgroup_oom_synchronize]". Unreadable parts are left out.
func (bx *box) hangState() string {
	var parts []string
	if f, err := bx.group.Frozen(); err == nil {
		parts = append(parts, fmt.Sprintf("frozen=%t", f))
	}
	pids, err := bx.group.Pids()
	if err != nil {
		return strings.Join(parts, " ")
	}
	var b strings.Builder
	b.WriteString(strings.Join(append(parts, fmt.Sprintf("procs=%d", len(pids))), " "))
	for i, pid := range pids {
		if i == 8 {
			b.WriteString(" ...")
			break
		}
		fmt.Fprintf(&b, " %d:[%s]", pid, strings.Join(threadStates(bx.procRoot, pid, 4), ", "))
	}
	return b.String()
}

// threadStates returns "STATE WCHAN" for up to max threads of pid.
func threadStates(procRoot string, pid, max int) []string {
	dir := filepath.Join(procRoot, strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range tasks {
		if len(out) == max {
			out = append(out, "...")
			break
		}
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
		if err != nil {
			continue
		}
		st, err := procfs.StatField(b, 3)
		if err != nil {
			continue
		}
		if w, err := os.ReadFile(filepath.Join(dir, t.Name(), "wchan")); err == nil && len(w) > 0 && string(w) != "0" {
			st += " " + string(w)
		}
		out = append(out, st)
	}
	return out
}
