package process

import (
	"os"
	"path/filepath"
	"strconv"

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
