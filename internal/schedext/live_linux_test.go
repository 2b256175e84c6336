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
	case "spin":
		spin(os.Getenv("TENON_SCHEDEXT_NICE"))
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

// spin sets its nice value and runs on the CPU forever.
func spin(nice string) {
	n, _ := strconv.Atoi(nice)
	if err := unix.Setpriority(unix.PRIO_PROCESS, 0, n); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for x := uint64(0); ; x++ {
		if x == 1<<63 {
			fmt.Println(x) // never: keeps the loop from being optimised away
		}
	}
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

// TestLiveLowWeightNotStarved: a nice-19 task spinning beside 24 nice-0
// spinners on the shared queue keeps running, and the watchdog never
// unloads the scheduler over twice its timeout. Charged 100× its run time
// in vtime with no cap, the nice-19 task waited about 24 s behind them
// (12 rounds of 24 slices on 2 CPUs) after each slice; the VM suite saw
// khugepaged (nice 19) stall 10 s and the scheduler unloaded.
func TestLiveLowWeightNotStarved(t *testing.T) {
	needSchedExt(t)
	s := load(t, Options{})
	start := func(nice int) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=spin", "TENON_SCHEDEXT_NICE="+strconv.Itoa(nice))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		return cmd
	}
	for range 24 {
		start(0)
	}
	low := start(19)
	for i := 0; i < 2*int(Watchdog/time.Second) && s.Enabled(); i++ {
		time.Sleep(time.Second)
	}
	if !s.Enabled() {
		t.Fatalf("the kernel unloaded the scheduler: %v", s.Exit())
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", low.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// utime and stime are fields 14 and 15; the command (field 2) has no
	// spaces here.
	f := strings.Fields(string(b))
	ut, _ := strconv.Atoi(f[13])
	st, _ := strconv.Atoi(f[14])
	t.Logf("the nice-19 spinner ran %d ticks in %v beside 24 nice-0 ones", ut+st, 2*Watchdog)
	if ut+st == 0 {
		t.Error("the nice-19 spinner never ran")
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

// sample is the grower's progress and its cgroup's CPU time at a time.
type sample struct {
	at  time.Time
	mib uint64
	cpu time.Duration
}

// record samples g every step for d.
func (g *grower) record(t *testing.T, d, step time.Duration) []sample {
	var out []sample
	end := time.Now().Add(d)
	for {
		now := time.Now()
		out = append(out, sample{now, g.MiB(), g.cpuUsage(t)})
		if now.After(end) {
			return out
		}
		time.Sleep(step)
	}
}

// since is the samples from d after the first one on.
func since(s []sample, d time.Duration) []sample {
	for i := range s {
		if s[i].at.Sub(s[0].at) >= d {
			return s[i:]
		}
	}
	return nil
}

// rate is MiB/s between the first and last samples.
func rate(s []sample) float64 {
	if len(s) < 2 {
		return 0
	}
	d := s[len(s)-1].at.Sub(s[0].at).Seconds()
	return float64(s[len(s)-1].mib-s[0].mib) / d
}

// share is the cgroup's CPU time per wall time (in CPUs) between the first
// and last samples: the kernel's own account, which host load on the
// emulator can only lower.
func share(s []sample) float64 {
	if len(s) < 2 {
		return 0
	}
	return float64(s[len(s)-1].cpu-s[0].cpu) / float64(s[len(s)-1].at.Sub(s[0].at))
}

// dropLatency is the end (from the first sample) of the last window of at
// least w whose CPU share was at least over: by then the share had
// dropped for good.
func dropLatency(s []sample, w time.Duration, over float64) time.Duration {
	var last time.Duration
	j := 0
	for i := range s {
		for j+1 < i && s[i].at.Sub(s[j+1].at) >= w {
			j++
		}
		if s[i].at.Sub(s[j].at) >= w && share(s[j:i+1]) >= over {
			last = s[i].at.Sub(s[0].at)
		}
	}
	return last
}

// TestLivePace: a denied cgroup's CPU share drops to its pace within one
// control period (100 ms) and allow restores it, in three deny/allow
// cycles. The share is read over windows of one control period: within
// shorter ones a paced cgroup's threads (the grower's Go runtime has
// several) may run together for a slice each on both CPUs. The last window
// at least halfway between full speed and the pace must end within two
// periods of the deny (one to drop, one for the window itself). A loaded
// host stalls the emulated guest now and then (its clock runs on while
// QEMU waits for a core), so that must hold in at least one cycle, and the
// pace over all of them. The allocation rate, which follows the share, is
// logged.
func TestLivePace(t *testing.T) {
	needSchedExt(t)
	s := load(t, Options{})
	g := startGrower(t, 1)
	time.Sleep(500 * time.Millisecond) // started and running

	const pace = 0.1
	best := time.Hour
	var pacedCPU, pacedWall time.Duration
	for cycle := range 3 {
		before := g.record(t, 500*time.Millisecond, 10*time.Millisecond)
		if share(before) < 0.5 {
			t.Fatalf("cycle %d: the grower got %.2f of a CPU while allowed, want most of one", cycle, share(before))
		}
		if err := s.Deny(g.id, pace); err != nil {
			t.Fatal(err)
		}
		denied := g.record(t, 1200*time.Millisecond, 5*time.Millisecond)
		paced := since(denied, 100*time.Millisecond)
		lat := dropLatency(denied, 100*time.Millisecond, (1+pace)/2)
		best = min(best, lat)
		pacedCPU += paced[len(paced)-1].cpu - paced[0].cpu
		pacedWall += paced[len(paced)-1].at.Sub(paced[0].at)
		st, ok, err := s.Stats(g.id)
		if err != nil || !ok {
			t.Fatalf("Stats: %v %v", ok, err)
		}
		if err := s.Allow(g.id); err != nil {
			t.Fatal(err)
		}
		t.Logf("cycle %d: allowed %.0f MiB/s (CPU %.2f); denied at %.2f: %.1f MiB/s, CPU %.3f from 100 ms on, dropped after %v; %d paced runs, %v",
			cycle, rate(before), share(before), pace, rate(paced), share(paced), lat.Round(time.Millisecond), st.Runs, st.Ran.Round(time.Millisecond))
		if st.Runs == 0 || st.Ran == 0 {
			t.Errorf("cycle %d: the scheduler counted no paced runs", cycle)
		}
	}
	if best > 200*time.Millisecond {
		t.Errorf("the last fast 100-ms window ended %v after the deny at best, want within 200 ms (a drop within one control period)", best)
	}
	// 3x: a paced run is charged at the guest's clock, which runs on
	// while a loaded host keeps QEMU waiting.
	if sh := float64(pacedCPU) / float64(pacedWall); sh > 3*pace || sh <= 0 {
		t.Errorf("CPU share from 100 ms after each deny on: %.3f, want above 0 and about %.2f", sh, pace)
	}
	after := since(g.record(t, 1100*time.Millisecond, 10*time.Millisecond), 100*time.Millisecond)
	c, _ := s.Counters()
	t.Logf("allowed again: %.0f MiB/s, CPU share %.2f; counters %+v", rate(after), share(after), c)
	if share(after) < 0.5 {
		t.Errorf("allow restored a CPU share of %.2f, want most of a CPU", share(after))
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
	start, m0, cpu0 := time.Now(), g.MiB(), g.cpuUsage(t)
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
	if g.cpuUsage(t) == cpu0 || st.Runs == 0 {
		t.Error("the paced sandbox never ran")
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
	back := since(g.record(t, 600*time.Millisecond, 10*time.Millisecond), 100*time.Millisecond)
	t.Logf("frozen %v with no progress; thawed and allowed: %.0f MiB/s, CPU share %.2f", hold, rate(back), share(back))
	if share(back) < 0.5 {
		t.Errorf("thaw and allow restored a CPU share of %.2f, want most of a CPU at least", share(back))
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
	free := g.record(t, 2*time.Second, 10*time.Millisecond)
	allowed := rate(free)
	t.Logf("| rate | MiB/s | of allowed | CPU share | drop after |")
	t.Logf("| allowed | %.1f | 1.000 | %.3f | |", allowed, share(free))
	for _, r := range []float64{0.5, 0.2, 0.1, 0.05, 0.01} {
		if err := s.Deny(g.id, r); err != nil {
			t.Fatal(err)
		}
		samples := g.record(t, 3*time.Second, 5*time.Millisecond)
		paced := since(samples, 300*time.Millisecond)
		lat := dropLatency(samples, 100*time.Millisecond, (1+r)/2)
		t.Logf("| deny at %.2f | %.1f | %.3f | %.3f | %v |", r, rate(paced), rate(paced)/allowed, share(paced), lat.Round(time.Millisecond))
		if err := s.Allow(g.id); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	freeze(t, g.sandbox, true)
	frozen := g.record(t, 2*time.Second, 10*time.Millisecond)
	freeze(t, g.sandbox, false)
	t.Logf("| frozen (cgroup.freeze) | %.1f | %.3f | %.3f | |", rate(frozen), rate(frozen)/allowed, share(frozen))

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
