package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// TestHarnessLoop builds tenon, starts `tenon serve --policy tenon` on the
// process backend and runs harness.py with 4 agents replaying 8 actions
// each of real traces (testdata/haiku4.jsonl: the first four haiku runs
// with 8 or more actions, cut to 8), model calls through the daemon's
// proxy at a tenth of the recorded model time. Every agent must complete.
func TestHarnessLoop(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the harness loop needs root: tenon serve runs the process backend (namespaces, mounts, cgroups)")
	}
	if _, err := cgroup.Detect("/proc"); err != nil {
		t.Skipf("the harness loop needs the cgroup memory controller: %v", err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("the harness loop needs python3")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "tenon")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/tenon").CombinedOutput(); err != nil {
		t.Fatalf("building tenon: %v\n%s", err, out)
	}
	port := freePort(t)
	sock := filepath.Join(dir, "tenon.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 110*time.Second)
	defer cancel()
	serve := exec.Command(bin, "serve", "--budget", "1GiB", "--policy", "tenon", "--state-dir", filepath.Join(dir, "state"),
		"--socket", sock, "--domain", fmt.Sprintf("tenon-test-harness-%d", os.Getpid()),
		"--upstream", fmt.Sprintf("http://127.0.0.1:%d/v1", port), "--drain-timeout", "5s")
	var logs strings.Builder
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- serve.Wait() }()
	t.Cleanup(func() {
		_ = serve.Process.Signal(os.Interrupt) // drains, releases every sandbox and the domain
		select {
		case <-stopped:
		case <-time.After(30 * time.Second):
			_ = serve.Process.Kill()
			<-stopped
			t.Errorf("tenon serve did not stop on SIGINT within 30 s")
		}
		if t.Failed() {
			t.Logf("tenon serve:\n%s", logs.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tenon serve did not listen on %s:\n%s", sock, logs.String())
		}
	}
	summary := filepath.Join(dir, "summary.json")
	cmd := exec.CommandContext(ctx, py, "harness.py", "--socket", sock, "--trajectory", "testdata/haiku4.jsonl",
		"--agents", "4", "--time-scale", "0.1", "--upstream-port", fmt.Sprint(port), "--label", "ci", "--json", summary)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("harness.py:\n%s", out)
	if err != nil {
		t.Fatalf("harness.py: %v", err)
	}
	var s struct {
		Agents, Completed, Actions int
		OOMKills                   int `json:"oom_kills"`
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Agents != 4 || s.Completed != 4 || s.Actions != 32 {
		t.Errorf("agents %d completed %d actions %d, want 4, 4 and 32", s.Agents, s.Completed, s.Actions)
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
