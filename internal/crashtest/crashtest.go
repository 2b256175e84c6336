// Package crashtest runs a test binary as a child that sets something up,
// says READY on its stdout and waits to be killed with SIGKILL: the crash
// of a daemon, for tests of what the next start recovers and cleans.
package crashtest

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ReadyLine is what a child prints once it is set up.
const ReadyLine = "READY"

// KillWhenReady runs this test binary with no test selected and env added
// (the child's TestMain sees env and runs its crash mode instead of the
// tests), waits up to timeout for it to print ReadyLine, then kills it
// with SIGKILL and reaps it. It fails the test if the child exits or
// stays silent first.
func KillWhenReady(t *testing.T, env []string, timeout time.Duration) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == ReadyLine {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	var ok, silent bool
	select {
	case ok = <-ready:
	case <-time.After(timeout):
		silent = true
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	switch {
	case silent:
		t.Fatalf("crash child not %s after %s", ReadyLine, timeout)
	case !ok:
		t.Fatalf("crash child exited before %s", ReadyLine)
	}
}
