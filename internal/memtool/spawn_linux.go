//go:build linux

package memtool

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/tenon-dev/tenon/internal/anchor/pageout"
)

// SpawnDetached starts this binary again (through /proc/self/exe) with the
// argv tail args, in a new session, with stdin, stdout and stderr on
// /dev/null, and does not wait for it. It returns the child's pid.
func SpawnDetached(args []string) (int, error) {
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Args = append([]string{os.Args[0]}, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting background process: %w", err)
	}
	pid := cmd.Process.Pid
	if err := cmd.Process.Release(); err != nil {
		return pid, fmt.Errorf("releasing background process %d: %w", pid, err)
	}
	return pid, nil
}

// ownAnon is this process's resident anonymous memory (RssAnon of
// /proc/self/status) in bytes, 0 when it cannot be read.
func ownAnon() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	st, err := pageout.ParseStatus(f)
	if err != nil {
		return 0
	}
	return st.RssAnon
}
