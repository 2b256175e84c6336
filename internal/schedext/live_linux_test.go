//go:build linux && amd64

package schedext

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The live tests load the scheduler, so they need a kernel with sched_ext
// and root: they skip elsewhere (this host's kernel has none; the VM suite,
// internal/vmtest, runs them on one that has, and requires them to pass).

const helperEnv = "TENON_SCHEDEXT_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "grow":
		grow(os.Getenv("TENON_SCHEDEXT_COUNTER"), os.Getenv("TENON_SCHEDEXT_THREADS"))
		return
	case "load":
		holdLoaded()
		return
	}
	os.Exit(m.Run())
}

// grow allocates and touches memory as fast as it can, 1 MiB at a time
// (mapped, every page touched, unmapped), adding each MiB to the counter
// at the start of the file counter (shared with the parent), on n threads.
func grow(counter, threads string) {
	f, err := os.OpenFile(counter, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	n, _ := strconv.Atoi(threads)
	for i := 1; i < n; i++ {
		go growLoop(mem)
	}
	growLoop(mem)
}

func growLoop(mem []byte) {
	const chunk = 1 << 20
	for {
		b, err := unix.Mmap(-1, 0, chunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			os.Exit(3)
		}
		for i := 0; i < chunk; i += 4096 {
			b[i] = 1
		}
		unix.Munmap(b)
		addCounter(mem, 1)
	}
}

var counterMu sync.Mutex

func addCounter(mem []byte, d uint64) {
	counterMu.Lock()
	binary.LittleEndian.PutUint64(mem, binary.LittleEndian.Uint64(mem)+d)
	counterMu.Unlock()
}

// holdLoaded loads the scheduler, says so on stdout and waits to be killed.
func holdLoaded() {
	s, err := Load(Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	_ = s
	fmt.Println("loaded")
	for {
		time.Sleep(time.Hour)
	}
}

func needSchedExt(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if err := Supported(); err != nil {
		t.Skip(err)
	}
}

func load(t *testing.T, opts Options) *Scheduler {
	t.Helper()
	s, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if st, _ := State(); st != "disabled" {
			t.Errorf("sched_ext %s after Close, want disabled", st)
		}
	})
	return s
}

// TestLiveLoadUnload: the scheduler loads, runs every task (the shared
// queue dispatches), and Close puts the default scheduler back.
func TestLiveLoadUnload(t *testing.T) {
	needSchedExt(t)
	s, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := State(); st != "enabled" || !s.Enabled() {
		ops, _ := os.ReadFile(opsPath)
		t.Fatalf("after Load: state %q ops %q, Enabled %v", st, strings.TrimSpace(string(ops)), s.Enabled())
	}
	// Some work for the scheduler.
	for range 20 {
		if err := exec.Command("true").Run(); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Counters()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("counters: %+v", c)
	if c.SharedDispatched == 0 {
		t.Error("the shared queue dispatched nothing")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st, _ := State(); st != "disabled" {
		t.Fatalf("state %q after Close, want disabled", st)
	}
	if s.Enabled() {
		t.Error("Enabled after Close")
	}
	if err := s.Deny(1, 0.5); err == nil {
		t.Error("Deny after Close succeeded")
	}
	// And it loads again.
	s2 := load(t, Options{})
	if !s2.Enabled() {
		t.Error("a second load is not enabled")
	}
}

// TestLiveUnloadOnOwnerDeath: the kernel drops the scheduler with the
// process that loaded it, even when that process is killed.
func TestLiveUnloadOnOwnerDeath(t *testing.T) {
	needSchedExt(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=load")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "loaded" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q", line)
	}
	if st, _ := State(); st != "enabled" {
		t.Errorf("state %q with the helper's scheduler loaded", st)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, _ := State()
		if st == "disabled" {
			t.Logf("disabled %v after the owner was killed", time.Until(deadline)*-1+5*time.Second)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %q 5 s after the owner was killed", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// grower is a helper process allocating memory as fast as it can in its
// own cgroup sandbox/init (v2), with sandbox as the cgroup to deny.
type grower struct {
	sandbox string // the cgroup directory denied
	id      uint64 // its cgroup id
	cmd     *exec.Cmd
	counter []byte
}

func startGrower(t *testing.T, threads int) *grower {
	t.Helper()
	root := filepath.Join("/sys/fs/cgroup", fmt.Sprintf("tenon-schedext-%d-%d", os.Getpid(), time.Now().UnixNano()))
	leaf := filepath.Join(root, "init")
	if err := os.MkdirAll(leaf, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &grower{sandbox: root}
	t.Cleanup(func() {
		if g.cmd != nil && g.cmd.Process != nil {
			g.cmd.Process.Kill()
			g.cmd.Wait()
		}
		for range 50 {
			if os.Remove(leaf) == nil || errors.Is(os.Remove(leaf), os.ErrNotExist) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		os.Remove(root)
	})
	id, err := CgroupID(root)
	if err != nil {
		t.Fatal(err)
	}
	g.id = id
	cf := filepath.Join(t.TempDir(), "counter")
	if err := os.WriteFile(cf, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(cf, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g.counter, err = unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	cg, err := os.Open(leaf)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	g.cmd = exec.Command(os.Args[0], "-test.run=^$")
	g.cmd.Env = append(os.Environ(), helperEnv+"=grow", "TENON_SCHEDEXT_COUNTER="+cf, "TENON_SCHEDEXT_THREADS="+strconv.Itoa(threads))
	g.cmd.Stderr = os.Stderr
	g.cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(cg.Fd())}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return g
}

// MiB is the grower's progress so far.
func (g *grower) MiB() uint64 { return binary.LittleEndian.Uint64(g.counter) }

// cpuUsage is the sandbox cgroup's CPU time so far.
func (g *grower) cpuUsage(t *testing.T) time.Duration {
	b, err := os.ReadFile(filepath.Join(g.sandbox, "cpu.stat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "usage_usec "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return time.Duration(n) * time.Microsecond
		}
	}
	t.Fatal("no usage_usec in cpu.stat")
	return 0
}

// sample is the grower's progress at a time.
type sample struct {
	at  time.Time
	mib uint64
}

// record samples g every step for d.
func (g *grower) record(d, step time.Duration) []sample {
	var out []sample
	end := time.Now().Add(d)
	for {
		now := time.Now()
		out = append(out, sample{now, g.MiB()})
		if now.After(end) {
			return out
		}
		time.Sleep(step)
	}
}

// rate is MiB/s between the first and last samples.
func rate(s []sample) float64 {
	if len(s) < 2 {
		return 0
	}
	d := s[len(s)-1].at.Sub(s[0].at).Seconds()
	return float64(s[len(s)-1].mib-s[0].mib) / d
}

// dropLatency is the end (from the first sample) of the last window of at
// least w in which the rate was at least frac of fast: by then the rate
// had dropped for good.
func dropLatency(s []sample, w time.Duration, fast, frac float64) time.Duration {
	var last time.Duration
	j := 0
	for i := range s {
		for j+1 < i && s[i].at.Sub(s[j+1].at) >= w {
			j++
		}
		if s[i].at.Sub(s[j].at) < w {
			continue
		}
		if rate(s[j:i+1]) >= frac*fast {
			last = s[i].at.Sub(s[0].at)
		}
	}
	return last
}

// TestLivePace: a denied cgroup's allocation rate drops to its pace within
// one control period (100 ms), its CPU share is near the rate, and allow
// restores the rate.
func TestLivePace(t *testing.T) {
	needSchedExt(t)
	s := load(t, Options{})
	g := startGrower(t, 1)
	time.Sleep(500 * time.Millisecond) // started and running

	allowed := rate(g.record(time.Second, 10*time.Millisecond))
	t.Logf("allowed: %.0f MiB/s", allowed)
	if allowed <= 0 {
		t.Fatal("the grower made no progress")
	}

	const pace = 0.1
	cpu0 := g.cpuUsage(t)
	t0 := time.Now()
	if err := s.Deny(g.id, pace); err != nil {
		t.Fatal(err)
	}
	denied := g.record(2*time.Second, 5*time.Millisecond)
	share := float64(g.cpuUsage(t)-cpu0) / float64(time.Since(t0))
	lat := dropLatency(denied, 50*time.Millisecond, allowed, 0.5)
	var after []sample
	for _, x := range denied {
		if x.at.Sub(t0) >= 200*time.Millisecond {
			after = append(after, x)
		}
	}
	deniedRate := rate(after)
	st, ok, err := s.Stats(g.id)
	if err != nil || !ok {
		t.Fatalf("Stats: %v %v", ok, err)
	}
	c, _ := s.Counters()
	t.Logf("denied at %.2f: %.0f MiB/s (%.2f of allowed), CPU share %.3f, drop after %v; stats %+v; counters %+v",
		pace, deniedRate, deniedRate/allowed, share, lat, st, c)
	if lat > 100*time.Millisecond {
		t.Errorf("the rate dropped after %v, want within one control period (100 ms)", lat)
	}
	if deniedRate > 3*pace*allowed {
		t.Errorf("denied rate %.0f MiB/s is over 3x the pace (%.2f of %.0f)", deniedRate, pace, allowed)
	}
	if deniedRate <= 0 {
		t.Errorf("a paced sandbox made no progress at all")
	}
	if share > 2*pace || share < pace/4 {
		t.Errorf("CPU share while denied %.3f, want about %.2f", share, pace)
	}
	if st.Runs == 0 || st.Ran == 0 {
		t.Errorf("the scheduler counted no paced runs: %+v", st)
	}

	t1 := time.Now()
	if err := s.Allow(g.id); err != nil {
		t.Fatal(err)
	}
	restored := g.record(time.Second, 10*time.Millisecond)
	var late []sample
	for _, x := range restored {
		if x.at.Sub(t1) >= 100*time.Millisecond {
			late = append(late, x)
		}
	}
	back := rate(late)
	t.Logf("allowed again: %.0f MiB/s", back)
	if back < 0.6*allowed {
		t.Errorf("allow restored %.0f MiB/s, want near %.0f", back, allowed)
	}
	if _, ok, _ := s.Stats(g.id); ok {
		t.Error("the cgroup is still in the denied map after Allow")
	}
	if !s.Enabled() {
		t.Fatalf("the scheduler was unloaded: %v", s.Exit())
	}
}

// TestLiveWatchdogBound: a cgroup denied at a rate so low that its debt
// per run (4 ms / 0.001 = 4 s per thread) is far over MaxWait, with more
// threads than CPUs, for longer than the watchdog's timeout: its tasks are
// capped at MaxWait, so the kernel never unloads the scheduler.
func TestLiveWatchdogBound(t *testing.T) {
	needSchedExt(t)
	d := Watchdog + 3*time.Second
	if v := os.Getenv("TENON_SCHEDEXT_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("TENON_SCHEDEXT_SOAK=%q: %v", v, err)
		}
	}
	s := load(t, Options{})
	g := startGrower(t, 4)
	time.Sleep(300 * time.Millisecond)
	if err := s.Deny(g.id, 0.001); err != nil {
		t.Fatal(err)
	}
	start, m0 := time.Now(), g.MiB()
	for time.Since(start) < d {
		time.Sleep(500 * time.Millisecond)
		if !s.Enabled() {
			t.Fatalf("the scheduler was unloaded after %v: %v", time.Since(start).Round(time.Millisecond), s.Exit())
		}
	}
	c, _ := s.Counters()
	st, _, _ := s.Stats(g.id)
	t.Logf("%v denied at 0.001: %d MiB, stats %+v, counters %+v", d, g.MiB()-m0, st, c)
	if c.Capped == 0 {
		t.Error("no paced task was capped at MaxWait")
	}
	if g.MiB() == m0 {
		t.Error("the paced sandbox made no progress at all")
	}
}

// freeze sets the cgroup v2 freezer of dir and waits until the kernel says
// it took effect.
func freeze(t *testing.T, dir string, on bool) {
	t.Helper()
	v, want := "0", "frozen 0"
	if on {
		v, want = "1", "frozen 1"
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.events"))
		if strings.Contains(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: cgroup.events %q, want %q", dir, b, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLiveHandoverToFreezer: what the gate does with a long denial: a
// paced sandbox is frozen (the cgroup freezer) while still in the denied
// map, for longer than the watchdog's timeout; the scheduler stays loaded
// (frozen tasks are not runnable), the sandbox makes no progress, and
// thaw plus allow restore its rate.
func TestLiveHandoverToFreezer(t *testing.T) {
	needSchedExt(t)
	s := load(t, Options{})
	g := startGrower(t, 2)
	time.Sleep(300 * time.Millisecond)
	allowed := rate(g.record(500*time.Millisecond, 10*time.Millisecond))
	if err := s.Deny(g.id, 0.05); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	freeze(t, g.sandbox, true)
	frozenAt := g.MiB()
	hold := Watchdog + time.Second
	for end := time.Now().Add(hold); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if !s.Enabled() {
			t.Fatalf("the scheduler was unloaded while the sandbox was frozen: %v", s.Exit())
		}
	}
	if got := g.MiB(); got != frozenAt {
		t.Errorf("a frozen sandbox progressed: %d MiB", got-frozenAt)
	}
	freeze(t, g.sandbox, false)
	if err := s.Allow(g.id); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	back := rate(g.record(500*time.Millisecond, 10*time.Millisecond))
	t.Logf("allowed %.0f MiB/s; frozen %v with 0 MiB; thawed and allowed %.0f MiB/s", allowed, hold, back)
	if back < 0.6*allowed {
		t.Errorf("thaw and allow restored %.0f MiB/s, want near %.0f", back, allowed)
	}
}

// cpuBench hashes a 4 KiB buffer for d on one goroutine and returns the
// hashes per second: a CPU-bound task unrelated to any sandbox.
func cpuBench(d time.Duration) float64 {
	buf := make([]byte, 4096)
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		for range 64 {
			sum := sha256.Sum256(buf)
			buf[0] = sum[0]
			n++
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

// TestLiveMeasure prints the measurements of bench/results/schedext.md:
// the scheduler's overhead on a CPU-bound task, a growing sandbox's
// allocation rate allowed, paced at several rates and frozen, and the time
// from deny to the drop. Opt-in: TENON_SCHEDEXT_MEASURE=1.
func TestLiveMeasure(t *testing.T) {
	if os.Getenv("TENON_SCHEDEXT_MEASURE") == "" {
		t.Skip("the measurements run only with TENON_SCHEDEXT_MEASURE=1 (bench/results/schedext.md)")
	}
	needSchedExt(t)
	const reps = 3
	var base, loaded []float64
	for range reps {
		base = append(base, cpuBench(2*time.Second))
		s, err := Load(Options{})
		if err != nil {
			t.Fatal(err)
		}
		loaded = append(loaded, cpuBench(2*time.Second))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("| CPU-bound task (sha256 4 KiB, hashes/s) | %s |", fmtRuns(base))
	t.Logf("| same, gate scheduler loaded, nothing denied | %s |", fmtRuns(loaded))

	s := load(t, Options{})
	g := startGrower(t, 1)
	time.Sleep(500 * time.Millisecond)
	allowed := rate(g.record(2*time.Second, 10*time.Millisecond))
	t.Logf("| rate | MiB/s | of allowed | CPU share | drop after |")
	t.Logf("| allowed | %.0f | 1.00 | | |", allowed)
	for _, r := range []float64{0.5, 0.2, 0.1, 0.05, 0.01} {
		cpu0, t0 := g.cpuUsage(t), time.Now()
		if err := s.Deny(g.id, r); err != nil {
			t.Fatal(err)
		}
		samples := g.record(3*time.Second, 5*time.Millisecond)
		share := float64(g.cpuUsage(t)-cpu0) / float64(time.Since(t0))
		var after []sample
		for _, x := range samples {
			if x.at.Sub(t0) >= 300*time.Millisecond {
				after = append(after, x)
			}
		}
		dr := rate(after)
		lat := dropLatency(samples, 50*time.Millisecond, allowed, (1+r)/2)
		t.Logf("| deny at %.2f | %.1f | %.3f | %.3f | %v |", r, dr, dr/allowed, share, lat.Round(time.Millisecond))
		if err := s.Allow(g.id); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	freeze(t, g.sandbox, true)
	frozen := rate(g.record(2*time.Second, 10*time.Millisecond))
	freeze(t, g.sandbox, false)
	t.Logf("| frozen (cgroup.freeze) | %.1f | %.3f | 0 | |", frozen, frozen/allowed)

	var withGrower, withPaced []float64
	for range reps {
		withGrower = append(withGrower, cpuBench(2*time.Second))
		if err := s.Deny(g.id, 0.05); err != nil {
			t.Fatal(err)
		}
		withPaced = append(withPaced, cpuBench(2*time.Second))
		if err := s.Allow(g.id); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("| CPU-bound task beside the grower, allowed | %s |", fmtRuns(withGrower))
	t.Logf("| same, the grower paced at 0.05 | %s |", fmtRuns(withPaced))
	c, _ := s.Counters()
	t.Logf("counters: %+v", c)
}

func fmtRuns(v []float64) string {
	var parts []string
	for _, x := range v {
		parts = append(parts, fmt.Sprintf("%.0f", x))
	}
	return strings.Join(parts, ", ")
}
