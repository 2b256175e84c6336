package vmtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// replayV2Tests are internal/replay's live tests run in the guest by
// TestLiveReplayV2, each of which must pass there (not skip), and
// replayV2Run selects them and their subtests: TestLivePolicies' eager,
// gate and tenon runs (the gate, under the v2 OOM hold, must lose no
// workflow) and TestLiveGateRamp's gate run (no OOM kill, every workflow
// done); the runs with the hold off and the ramp test's eager run are
// left out: on a loaded host each run in the emulated guest took 1-4
// minutes. TENON_VMTEST_REPLAY_RUN replaces replayV2Run, e.g. with
// "^(TestLivePolicies|TestLiveGateRamp)$" to measure every run of those,
// or "^TestLiveActuators$" for the gate under the freezer, sched_ext and
// cpu.max (bench/results/schedext.md); every test it selects must then
// pass, none skip. TENON_VMTEST_REPLAY_COUNT (a number) runs the selected
// tests that many times (-test.count), for repeated measurements.
var (
	replayV2Tests = []string{"TestLivePolicies", "TestLiveGateRamp"}
	replayV2Run   = "^(TestLivePolicies|TestLiveGateRamp)$/^(eager|gate|tenon|gate_prevents_every_OOM)$"
)

// TestLiveReplayV2 boots the pure cgroup v2 guest (as TestLiveCgroupV2
// does, in a boot of its own) and runs internal/replay's live policy tests
// in it: a small replay of eager, the gate alone and tenon (eager is
// OOM-killed; tenon: no OOM kill, every workflow done; the gate: every
// workflow done under the OOM hold, whose preemption ends a deadlock),
// and the gate's ramp test. On v2 the OOM hold is memory.high with the
// policy's freezing, and each sandbox's memory.oom.group is set. TENON_VMTEST as for
// TestLiveCgroupV2.
func TestLiveReplayV2(t *testing.T) {
	unavailable := vmSuite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 14*time.Minute)
	defer cancel()
	kernel, _ := guestKernel(ctx, t, unavailable, false)
	bin := filepath.Join(t.TempDir(), "replay.test")
	cmd := exec.CommandContext(ctx, filepath.Join(runtime.GOROOT(), "bin", "go"), "test", "-c", "-o", bin, "../replay")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test -c ../replay: %v\n%s", err, b)
	}
	run, mustPass := replayV2Run, replayV2Tests
	if r := os.Getenv("TENON_VMTEST_REPLAY_RUN"); r != "" {
		run, mustPass = r, nil
	}
	count := 1
	if c := os.Getenv("TENON_VMTEST_REPLAY_COUNT"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			t.Fatalf("TENON_VMTEST_REPLAY_COUNT=%q: want a number of runs, at least 1", c)
		}
		count = n
	}
	cfg := Config{Kernel: kernel, Tests: []Test{{Name: "replay", Binary: bin, Args: []string{"-test.v", "-test.count=" + strconv.Itoa(count), "-test.timeout=12m", "-test.run=" + run}}},
		MemoryMiB: 4096, CPUs: 2, ScratchMiB: 2048}
	if testing.Verbose() {
		cfg.Stream = os.Stderr
	}
	res := bootGuest(ctx, t, cfg, unavailable)
	r := res.Test("replay")
	if r == nil {
		t.Fatal("replay: the guest never ran it")
	}
	for _, l := range strings.Split(r.Output, "\n") {
		if strings.Contains(l, ": makespan ") { // one line per replay: kills, done, the hold
			t.Log(strings.TrimSpace(l))
		}
	}
	for _, l := range skipsAndFailures(r.Output) {
		t.Logf("replay: %s", l)
	}
	if r.Exit != 0 && cfg.Stream == nil {
		t.Errorf("replay: exit %d under cgroup v2; its output:\n%s", r.Exit, r.Output)
	} else if r.Exit != 0 {
		t.Errorf("replay: exit %d under cgroup v2 (output above)", r.Exit)
	}
	for _, name := range mustPass {
		if !regexp.MustCompile(`(?m)^--- PASS: ` + name + ` `).MatchString(r.Output) {
			t.Errorf("replay: %s did not pass under cgroup v2 (skipped or absent)", name)
		}
	}
	if mustPass == nil {
		if !regexp.MustCompile(`(?m)^--- PASS: `).MatchString(r.Output) {
			t.Errorf("replay: no test matching %q passed under cgroup v2", run)
		}
		if regexp.MustCompile(`(?m)^\s*--- SKIP: `).MatchString(r.Output) {
			t.Errorf("replay: a test matching %q skipped under cgroup v2", run)
		}
	}
}
