package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlockedTasks counts the D-state threads of a fake /proc: every
// thread of each process is read, not only the main one, and processes
// that are gone are skipped.
func TestBlockedTasks(t *testing.T) {
	root := fakeProc(t, map[string]string{
		"10/task/10/stat": "10 (memtool) S 1 10 10 0 -1\n",
		"10/task/11/stat": "11 (memtool) D 1 10 10 0 -1\n", // the allocating thread, in the OOM wait
		"10/task/12/stat": "12 (mem tool) (x) D 1 10 10 0 -1\n",
		"20/task/20/stat": "20 (sleep) S 10 10 10 0 -1\n",
		"30/task/30/stat": "30 (sh) R 1 30 30 0 -1\n",
	})
	for _, tc := range []struct {
		name string
		pids []int
		want int
	}{
		{"two blocked threads of one process", []int{10}, 2},
		{"sleeping and running: none", []int{20, 30}, 0},
		{"a process that exited is skipped", []int{10, 40, 20}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := blockedTasks(root, tc.pids); got != tc.want {
				t.Fatalf("blockedTasks(%v) = %d, want %d", tc.pids, got, tc.want)
			}
		})
	}
}

// TestThreadStates: a hung executor's threads are listed with the kernel
// function each sleeps in, all of them, those alike counted together; a
// wchan of "0" (a running thread) or none is left out.
func TestThreadStates(t *testing.T) {
	root := fakeProc(t, map[string]string{
		"10/task/10/stat":  "10 (init) S 0 10 10 0 -1",
		"10/task/10/wchan": "ep_poll",
		"10/task/11/stat":  "11 (init) D 0 10 10 0 -1",
		"10/task/11/wchan": "mem_cgroup_oom_synchronize",
		"10/task/12/stat":  "12 (init) R 0 10 10 0 -1",
		"10/task/12/wchan": "0",
		"10/task/13/stat":  "13 (init) S 0 10 10 0 -1",
		"10/task/14/stat":  "14 (init) S 0 10 10 0 -1",
		"10/task/14/wchan": "ep_poll",
	})
	got := strings.Join(threadStates(root, 10), "|")
	if want := "S ep_poll x2|D mem_cgroup_oom_synchronize|R|S"; got != want {
		t.Fatalf("threadStates = %q, want %q", got, want)
	}
	if got := threadStates(root, 99); len(got) != 0 {
		t.Fatalf("gone process: %q", got)
	}
}

// fakeProc writes files (path under the root: content) into a temporary
// directory standing for /proc and returns it.
func fakeProc(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for path, body := range files {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
