package vmtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// vmTests are the live tests run in the guest under pure cgroup v2, and the
// tests of each that must pass there (not skip), so a suite that silently
// skips everything fails here.
var vmTests = []struct {
	name, pkg string
	run       string // -test.run, "" for every test
	// mustPass are tests (or subtests, "Test/sub") that must pass.
	mustPass []string
	// forward are host environment variables passed on to the binary
	// when set (opt-in soaks and measurements).
	forward []string
}{
	{name: "cgroup", pkg: "../cgroup", mustPass: []string{
		"TestLiveDomainLifecycle", "TestLiveOOMKill", "TestLiveAdoptStaleDomain",
		"TestLiveOOMHoldV2", "TestLiveOOMHoldV2Freeze",
	}},
	{name: "process", pkg: "../sandbox/process", mustPass: []string{
		"TestContract", "TestDestroyRemovesEverything", "TestCloseDestroysAllAndParents",
		"TestOOMUnderDomainBudget", "TestHostileDeadlineFromOutside",
		"TestHostileHostSecrets", "TestHostileSeccomp", "TestNewReapsStale",
		"TestOOMGroupTakesSandbox", "TestScopedDropsPageCache", "TestHostileForkBomb",
		// Residency's page-out tier: zram swap (the guest loads the zram
		// module, DebianCloudZram), process_madvise and memory.reclaim.
		"TestLivePageOutIn",
	}},
	// The gate's sched_ext scheduler: the guest kernel has
	// CONFIG_SCHED_CLASS_EXT and BTF, the host's does not.
	{name: "schedext", pkg: "../schedext", mustPass: []string{
		"TestLiveLoadUnload", "TestLiveUnloadOnOwnerDeath", "TestLivePace", "TestLiveWatchdogBound", "TestLiveHandoverToFreezer",
		"TestLiveLowWeightNotStarved",
	}, forward: []string{"TENON_SCHEDEXT_SOAK", "TENON_SCHEDEXT_MEASURE"}},
	// The gate's pacing actuator end to end on the process backend, by
	// sched_ext and by cpu.max (the live package's other tests are unit
	// tests the host runs).
	{name: "live", pkg: "../live", run: "^TestLivePacingActuator$", mustPass: []string{
		"TestLivePacingActuator/schedext", "TestLivePacingActuator/cpu",
	}},
	// The daemon as users run it, on pure cgroup v2: tenon serve's default
	// policy behind four harness loops that oversubscribe its budget (no
	// OOM kill), and eager under the same load (killed).
	{name: "app", pkg: "../app", run: "^TestLiveServeOversubscribed$", mustPass: []string{
		"TestLiveServeOversubscribed/default_policy:_no_OOM_kill", "TestLiveServeOversubscribed/eager:_OOM-killed",
	}},
}

// selectedVMTests are the vmTests named in TENON_VMTEST_ONLY (a comma
// list, e.g. "schedext", for a quicker boot while working on one), or all.
func selectedVMTests(t *testing.T) []int {
	var idx []int
	only := os.Getenv("TENON_VMTEST_ONLY")
	for i, vt := range vmTests {
		if only == "" || slices.Contains(strings.Split(only, ","), vt.name) {
			idx = append(idx, i)
		}
	}
	if only != "" {
		t.Logf("TENON_VMTEST_ONLY=%s: running %d of %d test binaries", only, len(idx), len(vmTests))
	}
	return idx
}

// TestLiveCgroupV2 boots Debian's cloud kernel (memory cgroup v1 compiled
// out) under QEMU and runs the cgroup package's and the process backend's
// tests in it, live, as root, under pure cgroup v2.
//
// It boots only when TENON_VMTEST is set ("1": skip when QEMU or the kernel
// is unavailable; "require": fail then, as CI does), since the VM takes a
// few minutes under software emulation and loads both cores.
func TestLiveCgroupV2(t *testing.T) {
	unavailable := vmSuite(t)
	// An opt-in soak (TENON_SCHEDEXT_SOAK, e.g. 10m) runs that much longer.
	soak, _ := time.ParseDuration(os.Getenv("TENON_SCHEDEXT_SOAK"))
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute+soak)
	defer cancel()
	kernel, modules := guestKernel(ctx, t, unavailable, true)

	bin := t.TempDir()
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	var tests []Test
	sel := selectedVMTests(t)
	for _, i := range sel {
		vt := vmTests[i]
		out := filepath.Join(bin, vt.name+".test")
		cmd := exec.CommandContext(ctx, gotool, "test", "-c", "-o", out, vt.pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go test -c %s: %v\n%s", vt.pkg, err, b)
		}
		args := []string{"-test.v", "-test.count=1", "-test.timeout=" + (8*time.Minute + soak).String()}
		if run := testRun(vt.run); run != "" {
			args = append(args, "-test.run="+run)
		}
		var env []string
		for _, k := range vt.forward {
			if v := os.Getenv(k); v != "" {
				env = append(env, k+"="+v)
			}
		}
		tests = append(tests, Test{Name: vt.name, Binary: out, Args: args, Env: env})
	}

	// The contract suite runs printenv, which busybox lacks, and the
	// per-sandbox disk limit mkfs.ext4 (internal/disk). The process
	// backend's TestContract asks for a 4 GiB domain: the guest needs more
	// (memory a guest never touches costs the host nothing).
	cfg := Config{Kernel: kernel, Tests: tests, HostFiles: hostTools(t, "printenv", "mkfs.ext4"), MemoryMiB: 6144, CPUs: 2, ScratchMiB: 4096,
		Modules: modules}
	if testing.Verbose() {
		cfg.Stream = os.Stderr
	}
	res := bootGuest(ctx, t, cfg, unavailable)
	for _, l := range res.Preface {
		t.Log(l)
	}
	if !slicesContainsLine(res.Preface, "insmod 01-zram.ko: ok") {
		t.Errorf("the guest did not load the zram module: %q", res.Preface)
	}
	if !slicesContainsLine(res.Preface, "cgroup.subtree_control: cpu io memory pids") {
		t.Errorf("the guest's root does not delegate cpu, io, memory and pids: %q", res.Preface)
	}
	for _, i := range sel {
		vt := vmTests[i]
		r := res.Test(vt.name)
		if r == nil {
			t.Errorf("%s: the guest never ran it", vt.name)
			continue
		}
		for _, l := range skipsAndFailures(r.Output) {
			t.Logf("%s: %s", vt.name, l)
		}
		if r.Exit != 0 && cfg.Stream != nil {
			t.Errorf("%s: exit %d under cgroup v2 (output above)", vt.name, r.Exit)
		} else if r.Exit != 0 {
			t.Errorf("%s: exit %d under cgroup v2; its output:\n%s", vt.name, r.Exit, r.Output)
		}
		for _, name := range vt.mustPass {
			if !selected(name) {
				continue
			}
			if !regexp.MustCompile(`(?m)^\s*--- PASS: ` + regexp.QuoteMeta(name) + ` `).MatchString(r.Output) {
				t.Errorf("%s: %s did not pass under cgroup v2 (skipped or absent)", vt.name, name)
			}
		}
	}
}

// testRun is the -test.run of a test binary whose own is run:
// TENON_VMTEST_RUN when set (e.g. "^TestLivePageOutIn$" with
// TENON_VMTEST_ONLY=process, to run one test of a package on a loaded
// host), else run.
func testRun(run string) string {
	if r := os.Getenv("TENON_VMTEST_RUN"); r != "" {
		return r
	}
	return run
}

// selected reports whether the must-pass test name (or "Test/sub") is
// selected by TENON_VMTEST_RUN (all are when it is unset).
func selected(name string) bool {
	r := os.Getenv("TENON_VMTEST_RUN")
	if r == "" {
		return true
	}
	re, err := regexp.Compile(r)
	return err == nil && re.MatchString(strings.SplitN(name, "/", 2)[0])
}

// hostTools returns the host paths of the named programs; a missing one is
// left out (the tests that need it skip, naming it).
func hostTools(t *testing.T, names ...string) []string {
	var out []string
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			t.Logf("the guest will lack %s: %v", n, err)
			continue
		}
		if p, err = filepath.Abs(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func slicesContainsLine(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// skipsAndFailures returns the top-level SKIP and FAIL lines of go test -v
// output, each with the reason logged just before it.
func skipsAndFailures(out string) []string {
	var res []string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "--- SKIP: ") || strings.HasPrefix(l, "--- FAIL: ") {
			if i > 0 && strings.HasPrefix(lines[i-1], "    ") {
				l += " (" + strings.TrimSpace(lines[i-1]) + ")"
			}
			res = append(res, l)
		}
	}
	return res
}

// guestCrashed reports whether the guest kernel's console shows a kernel
// crash (an oops or a panic).
func guestCrashed(console string) bool {
	return strings.Contains(console, "Oops:") || strings.Contains(console, "Kernel panic")
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
