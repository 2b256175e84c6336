package vmtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLiveBenchActuatorsV2 boots the cgroup v2 guest, whose kernel has
// sched_ext, and runs `tenon bench`'s headline case there (swe, 1 GiB,
// one repetition) once per actuator: the freezer and the sched_ext
// scheduler by default (TENON_VMTEST_BENCH_ACTUATORS, a comma list of
// --actuator values), for tenon by default (TENON_VMTEST_BENCH_POLICIES).
// The case is scaled down for the emulated guest: 8 workflows at time
// scale 0.5 (TENON_VMTEST_BENCH_ARGS replaces "--n 8 --time-scale 0.5");
// the full case's 20 sandboxes starting within a second timed out there.
// It logs each run's results table (the results file, cat in the guest)
// and fails when a bench run failed. Opt-in with TENON_VMTEST_BENCH=1 on
// top of TENON_VMTEST, since it takes tens of minutes under emulation;
// give go test a -timeout of an hour. bench/results/schedext.md has its
// numbers.
func TestLiveBenchActuatorsV2(t *testing.T) {
	unavailable := vmSuite(t)
	if os.Getenv("TENON_VMTEST_BENCH") == "" {
		t.Skip("the headline case in the guest runs only with TENON_VMTEST_BENCH=1 (tens of minutes)")
	}
	actuators := envList("TENON_VMTEST_BENCH_ACTUATORS", "freezer,schedext")
	policies := strings.Join(envList("TENON_VMTEST_BENCH_POLICIES", "tenon"), ",")
	scale := strings.Fields(os.Getenv("TENON_VMTEST_BENCH_ARGS"))
	if len(scale) == 0 {
		scale = []string{"--n", "8", "--time-scale", "0.5"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
	defer cancel()
	kernel, _ := guestKernel(ctx, t, unavailable, false)
	bin := filepath.Join(t.TempDir(), "tenon")
	cmd := exec.CommandContext(ctx, filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "../../cmd/tenon")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ../../cmd/tenon: %v\n%s", err, b)
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skipf("cat, to read the results file in the guest: %v", err)
	}
	var tests []Test
	for _, a := range actuators {
		out := "/tmp/bench-" + a
		args := append([]string{"bench", "--name", "vm-" + a, "--only", "main",
			"--workloads", "swe", "--budgets", "1GiB", "--policies", policies, "--reps", "1", "--actuator", a,
			"--out-dir", out, "--state-dir", "/tmp/state-" + a, "--domain", "tenon-vm-bench"}, scale...)
		tests = append(tests,
			Test{Name: "bench-" + a, Binary: bin, Args: args},
			Test{Name: "results-" + a, Binary: cat, Args: []string{filepath.Join(out, "vm-"+a+".md")}})
	}
	cfg := Config{Kernel: kernel, Tests: tests, HostFiles: hostTools(t, "mkfs.ext4"), MemoryMiB: 4096, CPUs: 2, ScratchMiB: 4096}
	if testing.Verbose() {
		cfg.Stream = os.Stderr
	}
	res := bootGuest(ctx, t, cfg, unavailable)
	for _, a := range actuators {
		r, md := res.Test("bench-"+a), res.Test("results-"+a)
		if r == nil || md == nil {
			t.Errorf("%s: the guest never ran the bench or read its results", a)
			continue
		}
		if r.Exit != 0 {
			t.Errorf("tenon bench --actuator %s: exit %d; its output (end):\n%s", a, r.Exit, tail(r.Output, 4000))
		}
		for _, l := range strings.Split(md.Output, "\n") {
			if strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "workload ") || strings.HasPrefix(l, "- commit") {
				t.Logf("--actuator %s: %s", a, l)
			}
		}
	}
}

// envList is the comma list in the environment variable key, or def.
func envList(key, def string) []string {
	v := os.Getenv(key)
	if v == "" {
		v = def
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
