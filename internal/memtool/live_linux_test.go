//go:build linux

package memtool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/units"
	"golang.org/x/sys/unix"
)

const memoryV1 = "/sys/fs/cgroup/memory"

// liveCgroup creates a fresh v1 memory cgroup for this test, or skips. Its
// cleanup kills every process left in it (all started by the test) and
// removes it.
func liveCgroup(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live memtool test needs root to create a v1 memory cgroup")
	}
	if _, err := os.Stat(filepath.Join(memoryV1, "memory.max_usage_in_bytes")); err != nil {
		t.Skipf("live memtool test needs the cgroup v1 memory controller at %s: %v", memoryV1, err)
	}
	dir := filepath.Join(memoryV1, fmt.Sprintf("tenon-test-memtool-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("creating cgroup: %v", err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			pids := cgroupPids(t, dir)
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			err := os.Remove(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("removing cgroup %s: %v (pids %v)", dir, err, pids)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return dir
}

func cgroupPids(t *testing.T, dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func readInt(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return v
}

// startChild runs this test binary as `tenon tool mem args...` inside cg.
func startChild(t *testing.T, cg string, out *bytes.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/proc/self/exe", append([]string{"tool", "mem"}, args...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1", cgroupEnv+"="+cg)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting child: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func TestLiveCurveInCgroup(t *testing.T) {
	cg := liveCgroup(t)
	var out bytes.Buffer
	cmd := startChild(t, cg, &out, "--peak", "128MiB", "--ramp", "300ms", "--hold", "300ms",
		"--retain", "16MiB", "--retain-for", "forever")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	usage := filepath.Join(cg, "memory.usage_in_bytes")

	// waitFor polls usage until ok holds, failing if the child exits or 10 s pass.
	waitFor := func(what string, ok func(int64) bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			if ok(readInt(t, usage)) {
				return
			}
			select {
			case err := <-done:
				t.Fatalf("child exited (%v) before %s\n%s", err, what, out.String())
			case <-deadline:
				t.Fatalf("usage %s: no %s within 10 s", units.FormatSize(readInt(t, usage)), what)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	waitFor("peak above 120 MiB", func(u int64) bool { return u >= 120*units.MiB })
	waitFor("drop below 64 MiB", func(u int64) bool { return u < 64*units.MiB })
	low := int64(-1)
	for range 20 {
		time.Sleep(10 * time.Millisecond)
		if u := readInt(t, usage); low < 0 || u < low {
			low = u
		}
	}
	if low < 16*units.MiB {
		t.Errorf("usage during retain fell to %s, want the 16 MiB retained to stay resident", units.FormatSize(low))
	}

	// SIGTERM ends a forever-retain cleanly: summary printed, exit status 1.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("child after SIGTERM: %v, want exit status 1", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("child did not exit within 5 s of SIGTERM")
	}
	maxUsage := readInt(t, filepath.Join(cg, "memory.max_usage_in_bytes"))
	t.Logf("max_usage %s, lowest usage during retain %s; child: %s", units.FormatSize(maxUsage), units.FormatSize(low), strings.TrimSpace(out.String()))
	if maxUsage < 120*units.MiB {
		t.Errorf("memory.max_usage_in_bytes = %s, want >= 120 MiB", units.FormatSize(maxUsage))
	}
	for _, w := range []string{"peak 128.0 MiB", "retained 16.0 MiB", "(interrupted)"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("child output %q lacks %q", out.String(), w)
		}
	}
}

func TestLiveBackgroundOutlivesTool(t *testing.T) {
	cg := liveCgroup(t)
	var out bytes.Buffer
	cmd := startChild(t, cg, &out, "--peak", "32MiB", "--ramp", "0", "--hold", "50ms",
		"--retain", "24MiB", "--background", "--background-for", "20s")
	start := time.Now()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tool failed: %v\n%s", err, out.String())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("waiting for the tool took %v: the background process kept its output open", took)
	}
	var bg int
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, pid := range cgroupPids(t, cg) {
			if pid != cmd.Process.Pid {
				bg = pid
			}
		}
		if bg != 0 && readInt(t, filepath.Join(cg, "memory.usage_in_bytes")) >= 24*units.MiB {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no background process holding 24 MiB in %s (pid %d, usage %s); tool said %q", cg, bg,
				units.FormatSize(readInt(t, filepath.Join(cg, "memory.usage_in_bytes"))), out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if sid, err := unix.Getsid(bg); err != nil || sid != bg {
		t.Errorf("background pid %d has session %d (%v), want its own session", bg, sid, err)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("background pid %d", bg)) {
		t.Errorf("summary %q does not name background pid %d", out.String(), bg)
	}
}

// TestLiveSharedHolder: three runs that each leave 6 MiB in the background
// with one holder directory leave one process holding the 18 MiB.
func TestLiveSharedHolder(t *testing.T) {
	cg := liveCgroup(t)
	dir := t.TempDir()
	for i := range 3 {
		var out bytes.Buffer
		cmd := startChild(t, cg, &out, "--peak", "8MiB", "--retain", "6MiB", "--background", "--holder-dir", dir)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("run %d failed: %v\n%s", i, err, out.String())
		}
		if !strings.Contains(out.String(), "background pid") {
			t.Fatalf("run %d left no background process: %q", i, out.String())
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := cgroupPids(t, cg)
		usage := readInt(t, filepath.Join(cg, "memory.usage_in_bytes"))
		if len(pids) == 1 && usage >= 18*units.MiB {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cgroup has processes %v using %s; want one holder with at least 18 MiB", pids, units.FormatSize(usage))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
