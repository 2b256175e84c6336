package sandboxtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

func testPauseResume(e *env) {
	e.step("action held while paused", false, testPauseHolds)
	e.step("no progress while paused", true, testPauseFreezes)
}

// testPauseHolds: an action does not finish while its sandbox is paused
// (a frozen sleep cannot return), Info and Stats report the pause (Stats
// counting none of the frozen threads as blocked on the kernel, where it
// reads their states: since Linux 6.1 a frozen thread reports state D),
// and the action finishes normally after Resume.
func testPauseHolds(e *env) {
	id := e.create(sandbox.Spec{}).ID
	type result struct {
		r   sandbox.ExecResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := e.b.Exec(ctx(e.t), id, sandbox.ExecRequest{Shell: "sleep 0.5", Timeout: 20 * time.Second})
		done <- result{r, err}
	}()
	resumed := false
	defer func() {
		if !resumed {
			_ = e.b.Resume(context.Background(), id)
			<-done
		}
	}()
	time.Sleep(100 * time.Millisecond)
	if err := e.b.Pause(ctx(e.t), id); err != nil {
		e.t.Fatalf("Pause: %v", err)
	}
	if info, err := e.b.Info(ctx(e.t), id); err != nil || !info.Paused {
		e.t.Errorf("Info while paused: %+v %v, want Paused", info, err)
	}
	if st, err := e.b.Stats(ctx(e.t), id); err != nil || !st.Frozen || st.Blocked > 0 {
		e.t.Errorf("Stats while paused: %+v %v, want Frozen and no thread blocked", st, err)
	}
	select {
	case res := <-done:
		resumed = true
		e.t.Fatalf("action finished while paused: %+v %v", res.r, res.err)
	case <-time.After(time.Second):
	}
	if err := e.b.Resume(ctx(e.t), id); err != nil {
		e.t.Fatalf("Resume: %v", err)
	}
	resumed = true
	if info, err := e.b.Info(ctx(e.t), id); err != nil || info.Paused {
		e.t.Errorf("Info after resume: %+v %v, want not Paused", info, err)
	}
	if st, err := e.b.Stats(ctx(e.t), id); err != nil || st.Frozen {
		e.t.Errorf("Stats after resume: %+v %v, want not Frozen", st, err)
	}
	select {
	case res := <-done:
		if res.err != nil || res.r.ExitCode != 0 || res.r.TimedOut {
			e.t.Fatalf("paused action: %+v %v, want exit 0", res.r, res.err)
		}
	case <-time.After(10 * time.Second):
		e.t.Fatal("action did not finish after Resume")
	}
}

// testPauseFreezes: a running tree makes no progress at all while paused.
func testPauseFreezes(e *env) {
	ws := filepath.Join(e.t.TempDir(), "ws")
	id := e.create(sandbox.Spec{Workspace: ws}).ID
	ticks := filepath.Join(ws, "ticks")
	size := func() int64 {
		fi, err := os.Stat(ticks)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	type result struct {
		r   sandbox.ExecResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := e.b.Exec(ctx(e.t), id, sandbox.ExecRequest{
			Shell:   "while [ ! -e /workspace/stop ]; do echo x >> /workspace/ticks; sleep 0.02; done",
			Timeout: 20 * time.Second,
		})
		done <- result{r, err}
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = e.b.Resume(context.Background(), id)
			_ = os.WriteFile(filepath.Join(ws, "stop"), nil, 0o644)
			<-done
		}
	}
	defer stop()
	if !eventually(5*time.Second, func() bool { return size() > 0 }) {
		e.t.Fatal("the counter never advanced")
	}
	if err := e.b.Pause(ctx(e.t), id); err != nil {
		e.t.Fatalf("Pause: %v", err)
	}
	if info, err := e.b.Info(ctx(e.t), id); err != nil || !info.Paused {
		e.t.Errorf("Info while paused: %+v %v, want Paused", info, err)
	}
	frozen := size()
	time.Sleep(200 * time.Millisecond)
	if got := size(); got != frozen {
		e.t.Fatalf("counter advanced while paused: %d -> %d", frozen, got)
	}
	if err := e.b.Resume(ctx(e.t), id); err != nil {
		e.t.Fatalf("Resume: %v", err)
	}
	if info, err := e.b.Info(ctx(e.t), id); err != nil || info.Paused {
		e.t.Errorf("Info after resume: %+v %v, want not Paused", info, err)
	}
	if !eventually(5*time.Second, func() bool { return size() > frozen }) {
		e.t.Fatal("the counter did not advance after Resume")
	}
	stopped = true
	if err := os.WriteFile(filepath.Join(ws, "stop"), nil, 0o644); err != nil {
		e.t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.r.ExitCode != 0 || res.r.TimedOut {
		e.t.Fatalf("paused action: %+v %v, want exit 0", res.r, res.err)
	}
}

func testStats(e *env) {
	e.needPrograms("the memory real programs charge")
	id := e.create(sandbox.Spec{}).ID
	// Allocate a little memory in the sandbox (a tmpfs file is charged to it).
	e.sh(id, "head -c 8000000 /dev/zero > /dev/shm/fill")
	st, err := e.b.Stats(ctx(e.t), id)
	if err != nil {
		e.t.Fatalf("Stats: %v", err)
	}
	if st.Memory < 8_000_000 || st.Memory > 64<<30 || st.Procs < 1 || st.Peak < st.Memory && st.Peak != 0 {
		e.t.Fatalf("Stats = %+v: want 8 MB <= Memory < 64 GiB, Procs >= 1, Peak >= Memory", st)
	}
	r := e.exec(id, sandbox.ExecRequest{Shell: "head -c 30000000 /dev/zero > /dev/shm/fill2; rm /dev/shm/fill2"})
	if r.PeakMemory < 30_000_000 || r.AvgMemory <= 0 || r.AvgMemory > r.PeakMemory {
		e.t.Fatalf("exec memory: peak %d avg %d, want peak >= 30 MB and 0 < avg <= peak", r.PeakMemory, r.AvgMemory)
	}
}

func testNetwork(e *env) {
	e.needPrograms("the network interfaces programs see")
	// Without Network: loopback only.
	id := e.create(sandbox.Spec{}).ID
	if got := interfaces(e.sh(id, "cat /proc/net/dev")); got != "lo" {
		e.t.Errorf("default sandbox: interfaces %q, want only lo", got)
	}
	// With Network: some interface besides loopback (the host's, or the
	// backend's bridge), when the host has one at all.
	host, err := os.ReadFile("/proc/net/dev")
	if err != nil || interfaces(string(host)) == "lo" {
		e.t.Skip("the host has no network interface besides lo")
	}
	id = e.create(sandbox.Spec{Network: true}).ID
	if got := interfaces(e.sh(id, "cat /proc/net/dev")); got == "lo" || got == "" {
		e.t.Errorf("Network sandbox: interfaces %q, want more than lo", got)
	}
}

// interfaces lists the interface names of a /proc/net/dev, sorted by position.
func interfaces(procNetDev string) string {
	var names []string
	for _, l := range strings.Split(procNetDev, "\n") {
		if name, _, ok := strings.Cut(l, ":"); ok {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return strings.Join(names, ",")
}

func testPidNamespace(e *env) {
	e.needPrograms("the processes programs see")
	id := e.create(sandbox.Spec{}).ID
	out := e.sh(id, "ls /proc | grep -c '^[0-9]'")
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || n < 1 || n > 6 {
		e.t.Fatalf("%q processes visible, want 1..6 (an own pid namespace)", out)
	}
}

func testDestroy(e *env) {
	spec := sandbox.Spec{ID: "st-destroy-" + strconv.Itoa(os.Getpid()), Workspace: filepath.Join(e.t.TempDir(), "ws")}
	info, err := e.b.Create(ctx(e.t), spec)
	if err != nil {
		e.t.Fatalf("Create: %v", err)
	}
	if e.caps.NoPrograms {
		e.t.Logf("backend %s runs no real programs: Destroy is checked without a process left running", e.b.Name())
	} else {
		e.sh(spec.ID, "sleep 60 >/dev/null 2>&1 & echo started")
	}
	if _, err := e.b.Create(ctx(e.t), spec); !errors.Is(err, sandbox.ErrExists) {
		e.t.Errorf("second Create with the same id: %v, want ErrExists", err)
	}
	if err := e.b.Destroy(ctx(e.t), spec.ID); err != nil {
		e.t.Fatalf("Destroy: %v", err)
	}
	if _, err := e.b.Exec(ctx(e.t), spec.ID, sandbox.ExecRequest{Shell: "true"}); !errors.Is(err, sandbox.ErrNotFound) {
		e.t.Errorf("Exec after Destroy: %v, want ErrNotFound", err)
	}
	if _, err := e.b.Info(ctx(e.t), spec.ID); !errors.Is(err, sandbox.ErrNotFound) {
		e.t.Errorf("Info after Destroy: %v, want ErrNotFound", err)
	}
	if _, err := e.b.Stats(ctx(e.t), spec.ID); !errors.Is(err, sandbox.ErrNotFound) {
		e.t.Errorf("Stats after Destroy: %v, want ErrNotFound", err)
	}
	if err := e.b.Destroy(ctx(e.t), spec.ID); err != nil {
		e.t.Errorf("second Destroy: %v, want nil", err)
	}
	if info.InitPid > 0 && !eventually(2*time.Second, func() bool {
		return errors.Is(syscall.Kill(info.InitPid, 0), syscall.ESRCH)
	}) {
		e.t.Errorf("init pid %d still exists after Destroy", info.InitPid)
	}
	// The workspace belongs to the agent and survives; the id can be reused.
	if _, err := os.Stat(spec.Workspace); err != nil {
		e.t.Errorf("workspace after Destroy: %v", err)
	}
	e.create(spec)
}

func testInitDeath(e *env) {
	info := e.create(sandbox.Spec{})
	if info.InitPid <= 0 {
		e.t.Skip("backend reports no init pid")
	}
	if err := syscall.Kill(info.InitPid, syscall.SIGKILL); err != nil {
		e.t.Fatalf("killing init %d: %v", info.InitPid, err)
	}
	start := time.Now()
	_, err := e.b.Exec(ctx(e.t), info.ID, sandbox.ExecRequest{Shell: "echo hi"})
	if !errors.Is(err, sandbox.ErrSandboxDead) {
		e.t.Fatalf("Exec after init died: %v, want ErrSandboxDead", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		e.t.Fatalf("Exec after init died took %v", el)
	}
}

func testInvalidSpec(e *env) {
	for _, id := range []string{"", "../escape", "a/b", "..", "has space"} {
		if _, err := e.b.Create(ctx(e.t), sandbox.Spec{ID: id, Workspace: e.t.TempDir()}); !errors.Is(err, sandbox.ErrInvalidSpec) {
			e.t.Errorf("Create(%q): %v, want ErrInvalidSpec", id, err)
			_ = e.b.Destroy(context.Background(), id)
		}
	}
	id := e.create(sandbox.Spec{}).ID
	for _, req := range []sandbox.ExecRequest{{}, {Shell: "pwd", Cwd: "relative"}, {Shell: "true", Env: []string{"NOEQUALS"}}} {
		if _, err := e.b.Exec(ctx(e.t), id, req); !errors.Is(err, sandbox.ErrInvalidSpec) {
			e.t.Errorf("Exec(%+v): %v, want ErrInvalidSpec", req, err)
		}
	}
	if _, err := e.b.Exec(ctx(e.t), "st-never-created", sandbox.ExecRequest{Shell: "true"}); !errors.Is(err, sandbox.ErrNotFound) {
		e.t.Errorf("Exec on an unknown id: %v, want ErrNotFound", err)
	}
}
