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
// a disk, and (since Linux 6.1) one the freezer holds, whatever it slept
// in when frozen: Stats does not count the threads of a frozen group.
// Processes and threads that exit meanwhile are skipped.
func blockedTasks(procRoot string, pids []int) int {
	n := 0
	for _, pid := range pids {
		eachThread(procRoot, pid, func(_, state string) bool {
			if state == "D" {
				n++
			}
			return true
		})
	}
	return n
}

// eachThread calls f with each thread's directory (<procRoot>/PID/task/TID)
// and state (the third field of its stat) until f returns false. Threads
// and processes that exit meanwhile are skipped.
func eachThread(procRoot string, pid int, f func(dir, state string) bool) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, t := range tasks {
		td := filepath.Join(dir, t.Name())
		b, err := os.ReadFile(filepath.Join(td, "stat"))
		if err != nil {
			continue
		}
		if st, err := procfs.StatField(b, 3); err == nil && !f(td, st) {
			return
		}
	}
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
		fmt.Fprintf(&b, " %d:[%s]", pid, strings.Join(threadStates(bx.procRoot, pid), ", "))
	}
	return b.String()
}

// threadStates returns pid's threads grouped by "STATE WCHAN" in the
// order first seen, each with "xN" when N threads share it: every
// thread is counted, so that one sleeping in the OOM wait
// (mem_cgroup_oom_synchronize) among a Go process's idle ones shows.
func threadStates(procRoot string, pid int) []string {
	var order []string
	count := map[string]int{}
	eachThread(procRoot, pid, func(dir, st string) bool {
		if w, err := os.ReadFile(filepath.Join(dir, "wchan")); err == nil && len(w) > 0 && string(w) != "0" {
			st += " " + string(w)
		}
		if count[st] == 0 {
			order = append(order, st)
		}
		count[st]++
		return true
	})
	out := make([]string, 0, len(order))
	for _, st := range order {
		if n := count[st]; n > 1 {
			st = fmt.Sprintf("%s x%d", st, n)
		}
		out = append(out, st)
	}
	return out
}
