//go:build linux

package process

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

func liveCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustCreate(t *testing.T, b *Backend, id string) sandbox.Info {
	t.Helper()
	info, err := b.Create(liveCtx(t), sandbox.Spec{ID: id, Workspace: filepath.Join(t.TempDir(), id)})
	if err != nil {
		t.Fatalf("Create(%s): %v", id, err)
	}
	return info
}

func mustSh(t *testing.T, b *Backend, id, cmd string) string {
	t.Helper()
	r, err := b.Exec(liveCtx(t), id, sandbox.ExecRequest{Shell: cmd, Timeout: 20 * time.Second})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("%q: %+v %v", cmd, r, err)
	}
	return string(r.Stdout)
}

// cgroupDirs lists the directories of a group in every mounted hierarchy
// that holds it: /sys/fs/cgroup/<controller>/<path> on v1 and hybrid hosts,
// /sys/fs/cgroup/<path> on pure v2 ones.
func cgroupDirs(t *testing.T, path string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("/sys/fs/cgroup/*", path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", path, "cgroup.controllers")); err == nil {
		dirs = append(dirs, filepath.Join("/sys/fs/cgroup", path))
	}
	return dirs
}

func TestDestroyRemovesEverything(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	info := mustCreate(t, b, "rm-all")
	layer, err := b.WritableLayer("rm-all")
	if err != nil {
		t.Fatal(err)
	}
	mustSh(t, b, "rm-all", "echo x > /opt/x; sleep 60 >/dev/null 2>&1 &")
	if _, err := os.Stat(filepath.Join(layer, "opt", "x")); err != nil {
		t.Fatalf("a write to /opt is not in the writable layer %s: %v", layer, err)
	}
	want, what := 3, "memory, freezer, devices at least"
	if m, _ := b.cfg.Layout.Controller(cgroup.Memory); m.Version == cgroup.V2 {
		want, what = 1, "the unified one"
	}
	if n := len(cgroupDirs(t, info.CgroupPath)); n < want {
		t.Fatalf("cgroup %s in %d hierarchies, want %s", info.CgroupPath, n, what)
	}
	if err := b.Destroy(liveCtx(t), "rm-all"); err != nil {
		t.Fatal(err)
	}
	if d := cgroupDirs(t, info.CgroupPath); len(d) != 0 {
		t.Errorf("cgroup dirs left: %v", d)
	}
	for _, p := range []string{filepath.Dir(layer), filepath.Join(b.containersDir(), "rm-all")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Destroy: %v, want absent", p, err)
		}
	}
	if !errors.Is(syscall.Kill(info.InitPid, 0), syscall.ESRCH) {
		t.Errorf("init %d alive after Destroy", info.InitPid)
	}
}

func TestCloseDestroysAllAndParents(t *testing.T) {
	b, dom := liveBackend(t, 1<<30)
	var infos []sandbox.Info
	for _, id := range []string{"close-a", "close-b"} {
		infos = append(infos, mustCreate(t, b, id))
	}
	if err := b.Pause(liveCtx(t), "close-b"); err != nil { // Close must thaw
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, info := range infos {
		if !errors.Is(syscall.Kill(info.InitPid, 0), syscall.ESRCH) {
			t.Errorf("init %d of %s alive after Close", info.InitPid, info.ID)
		}
		if d := cgroupDirs(t, info.CgroupPath); len(d) != 0 {
			t.Errorf("cgroup dirs left: %v", d)
		}
	}
	// Hierarchies the domain does not manage hold no trace of it.
	for _, d := range []string{"cpuset", "devices", "blkio", "unified"} {
		p := filepath.Join("/sys/fs/cgroup", d, dom.Group().Path())
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Close: %v, want absent", p, err)
		}
	}
	if _, err := b.Exec(liveCtx(t), "close-a", sandbox.ExecRequest{Shell: "true"}); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("Exec after Close: %v, want ErrClosed", err)
	}
}

// TestHostMountNamespaceKept guards against libcontainer's mount-source
// thread parking the main thread in a container's mount namespace.
func TestHostMountNamespaceKept(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	before, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ns-a", "ns-b", "ns-c", "ns-d"} {
		mustCreate(t, b, id)
		if after, _ := os.Readlink("/proc/self/ns/mnt"); after != before {
			t.Fatalf("after creating %s the process's mount namespace is %s, was %s", id, after, before)
		}
	}
	if l, err := cgroup.Detect("/proc"); err != nil || l.Controllers[cgroup.Memory].Root == "" {
		t.Fatalf("cgroup.Detect after creating sandboxes: %v", err)
	}
}

func TestProcsCountsLeftovers(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	mustCreate(t, b, "procs")
	procs := func() int {
		st, err := b.Stats(liveCtx(t), "procs")
		if err != nil {
			t.Fatal(err)
		}
		return st.Procs
	}
	mustSh(t, b, "procs", "sleep 0.01")
	if n := procs(); n != 1 {
		t.Fatalf("after a clean action Procs = %d, want 1 (init only)", n)
	}
	mustSh(t, b, "procs", "sleep 60 >/dev/null 2>&1 &")
	if n := procs(); n != 1 {
		t.Fatalf("after an action that left a process (not Background) Procs = %d, want 1", n)
	}
	r, err := b.Exec(liveCtx(t), "procs", sandbox.ExecRequest{Shell: "sleep 60 >/dev/null 2>&1 &", Background: true})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("background action: %+v %v", r, err)
	}
	if n := procs(); n != 2 {
		t.Fatalf("with a background process Procs = %d, want 2", n)
	}
	// A later action's end spares what a Background action left.
	mustSh(t, b, "procs", "sleep 0.01; sleep 60 >/dev/null 2>&1 &")
	if n := procs(); n != 2 {
		t.Fatalf("after a later action Procs = %d, want 2 (init and the background sleep)", n)
	}
}

// TestMemoryReadsAlone: Memory, WorkingSet and Sample, the cheap reads on
// admission's, residency's and the gate's paths, agree with Stats' fields;
// Sample without threads leaves Blocked unknown (-1), or 0 when frozen; and
// an unknown sandbox is ErrNotFound.
func TestMemoryReadsAlone(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	mustCreate(t, b, "reads")
	r, err := b.Exec(liveCtx(t), "reads", sandbox.ExecRequest{Shell: "sleep 60 >/dev/null 2>&1 &", Background: true})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("background action: %+v %v", r, err)
	}
	st, err := b.Stats(liveCtx(t), "reads")
	if err != nil {
		t.Fatal(err)
	}
	mem, err := b.Memory(liveCtx(t), "reads")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := b.WorkingSet(liveCtx(t), "reads")
	if err != nil {
		t.Fatal(err)
	}
	smp, err := b.Sample(liveCtx(t), "reads", true)
	if err != nil {
		t.Fatal(err)
	}
	const slack = 8 << 20 // read a moment apart, of a sandbox at rest
	if mem <= 0 || ws <= 0 || ws > mem || abs(mem-st.Memory) > slack || abs(ws-st.WorkingSet) > slack || abs(smp.Memory-st.Memory) > slack {
		t.Fatalf("Memory %d, WorkingSet %d, Sample's Memory %d; Stats: Memory %d, WorkingSet %d", mem, ws, smp.Memory, st.Memory, st.WorkingSet)
	}
	// init and the background sleep, neither blocked nor frozen.
	if smp.Procs != 2 || st.Procs != 2 || smp.Blocked != 0 || smp.Frozen || smp.CPU <= 0 {
		t.Fatalf("Sample %+v, Stats %+v: want Procs 2, nothing blocked or frozen, some CPU", smp, st)
	}
	if light, err := b.Sample(liveCtx(t), "reads", false); err != nil || light.Blocked != -1 || light.Procs != 2 || light.Frozen {
		t.Fatalf("Sample without threads: %+v, %v; want Blocked -1, Procs 2, not frozen", light, err)
	}
	if err := b.Pause(liveCtx(t), "reads"); err != nil {
		t.Fatal(err)
	}
	frozen, err := b.Sample(liveCtx(t), "reads", false)
	if err := b.Resume(liveCtx(t), "reads"); err != nil {
		t.Fatal(err)
	}
	if err != nil || !frozen.Frozen || frozen.Blocked != 0 {
		t.Fatalf("Sample without threads of a paused sandbox: %+v, %v; want Frozen, Blocked 0", frozen, err)
	}
	if _, err := b.WorkingSet(liveCtx(t), "none"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("WorkingSet of an unknown sandbox: %v, want ErrNotFound", err)
	}
}

func abs(v int64) int64 { return max(v, -v) }

func TestExecCanceledByContext(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	mustCreate(t, b, "cancel")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := b.Exec(ctx, "cancel", sandbox.ExecRequest{Shell: "setsid sleep 60 & echo $! > /workspace/bg; sleep 60"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec with an expiring context: %v, want DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("cancel took %v", el)
	}
	out := mustSh(t, b, "cancel", `if kill -0 "$(cat /workspace/bg)" 2>/dev/null; then echo alive; else echo gone; fi`)
	if strings.TrimSpace(out) != "gone" {
		t.Fatalf("background process of a canceled action: %s, want gone", out)
	}
	if st, err := b.Stats(liveCtx(t), "cancel"); err != nil || st.Procs != 1 {
		t.Fatalf("after cancel: Procs %d (%v), want 1", st.Procs, err)
	}
}

// TestNewReapsStale: a backend on the state dir of one that died (a
// paused sandbox left) kills the stale sandbox and removes the parent
// cgroups libcontainer made in the hierarchies the domain does not manage
// (issue 22, finding 13).
func TestNewReapsStale(t *testing.T) {
	old, _ := liveBackend(t, 1<<30)
	info := mustCreate(t, old, "stale-1")
	if err := old.Pause(liveCtx(t), "stale-1"); err != nil {
		t.Fatal(err)
	}
	// A new backend on the same state dir, as after a crash of the old one.
	b, err := New(old.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	// Killed by New; it is the old backend's child, so it lingers as a
	// zombie until the old backend's waiter reaps it (tens of ms on a
	// slow, emulated guest): wait for that, generously.
	for deadline := time.Now().Add(10 * time.Second); !errors.Is(syscall.Kill(info.InitPid, 0), syscall.ESRCH); {
		if time.Now().After(deadline) {
			t.Fatalf("stale init %d alive 10 s after New", info.InitPid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(b.parents) == 0 { // pure cgroup v2: one hierarchy, the domain's
		t.Log("no hierarchy outside the domain's: no parent cgroups to check")
	}
	for _, p := range b.parents {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after New on a crashed backend's state: %v, want absent", p, err)
		}
	}
	mustCreate(t, b, "stale-1")
	if out := mustSh(t, b, "stale-1", "echo fresh"); out != "fresh\n" {
		t.Fatalf("reused id: %q", out)
	}
}
