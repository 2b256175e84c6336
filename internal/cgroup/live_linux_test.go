package cgroup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// liveLayout returns the host's layout or skips, naming what is missing.
func liveLayout(t testing.TB) *Layout {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live cgroup test needs root")
	}
	l, err := Detect("/proc")
	if l != nil {
		l.LockDir = t.TempDir()
	}
	if errors.Is(err, ErrNoMemoryController) {
		t.Skip("live cgroup test needs a memory controller")
	}
	if err != nil {
		t.Fatalf("Detect: %v", err)
	}
	for _, c := range []string{Freezer, CPU, CPUAcct} {
		if _, ok := l.Controllers[c]; !ok {
			t.Skipf("live cgroup test needs the %s controller", c)
		}
	}
	return l
}

// liveDomain opens a uniquely named domain and removes it at cleanup.
func liveDomain(t testing.TB, l *Layout, suffix string, budget int64) *Domain {
	t.Helper()
	name := fmt.Sprintf("tenon-test-cgroup-%d%s", os.Getpid(), suffix)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := OpenDomain(ctx, l, name, budget, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("OpenDomain: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Close(ctx); err != nil {
			t.Errorf("closing domain: %v", err)
		}
		for c, m := range l.Controllers {
			if _, err := os.Stat(filepath.Join(m.Root, name)); err == nil {
				t.Errorf("%s group %s remains after Close", c, name)
			}
		}
	})
	return d
}

// helperProc is a running allocation helper.
type helperProc struct {
	pid  int
	done chan struct{} // closed once it exits
	err  error         // Wait's result, set before done closes
}

// startHelper starts the allocation helper, moves it into g, lets it
// allocate mib MiB (waiting for it when waitReady) and kills it at cleanup.
func startHelper(t *testing.T, g Group, mib int, waitReady bool) *helperProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", helperEnv, mib))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helperProc{pid: cmd.Process.Pid, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- strings.TrimSpace(line)
		io.Copy(io.Discard, stdout)
		h.err = cmd.Wait()
		close(h.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-h.done:
		case <-time.After(5 * time.Second):
		}
	})
	if err := g.AddProc(h.pid); err != nil {
		t.Fatalf("AddProc: %v", err)
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	if waitReady {
		if line := <-ready; line != "ready" {
			t.Fatalf("helper did not get ready: %q", line)
		}
	}
	return h
}

func TestLiveDomainLifecycle(t *testing.T) {
	l := liveLayout(t)
	d := liveDomain(t, l, "", 64<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if m, _, _ := d.group.dir(Memory); l.Controllers[Memory].Version == V1 {
		if n, err := readInt(filepath.Join(m, "memory.use_hierarchy")); err != nil || n != 1 {
			t.Errorf("use_hierarchy = %d, %v; want 1", n, err)
		}
	}
	g, err := d.Child("sb")
	if err != nil {
		t.Fatalf("Child: %v", err)
	}
	h := startHelper(t, g, 8, true)
	pid := h.pid

	pids, err := g.Pids()
	if err != nil || !slices.Contains(pids, pid) {
		t.Fatalf("Pids = %v, %v; want %d in it", pids, err, pid)
	}
	dp, err := d.Group().Pids()
	if err != nil || !slices.Contains(dp, pid) {
		t.Fatalf("domain Pids = %v, %v; want %d (recursive)", dp, err, pid)
	}
	if mp, err := d.Group().MemoryPids(); err != nil || !slices.Equal(mp, dp) {
		t.Fatalf("domain MemoryPids = %v, %v; want Pids' %v", mp, err, dp)
	}

	m, err := g.Memory()
	if err != nil {
		t.Fatalf("Memory: %v", err)
	}
	if m.Usage < 8<<20 || m.WorkingSet < 8<<20 || m.Peak < m.Usage {
		t.Errorf("Memory = usage %d ws %d peak %d; want >= 8 MiB and peak >= usage", m.Usage, m.WorkingSet, m.Peak)
	}
	if m.Limit != -1 {
		t.Errorf("child limit = %d, want -1 (unlimited)", m.Limit)
	}
	avail, err := d.Available()
	if err != nil || avail > 64<<20-8<<20 || avail <= 0 {
		t.Errorf("Available = %d, %v; want in (0, 56 MiB]", avail, err)
	}
	if cpu, err := g.CPUUsage(); err != nil || cpu <= 0 {
		t.Errorf("CPUUsage = %v, %v; want > 0", cpu, err)
	}
	if err := g.SetCPUQuota(50*time.Millisecond, 100*time.Millisecond); err != nil {
		t.Errorf("SetCPUQuota: %v", err)
	}
	if q, p, err := g.(*group).CPUQuota(); err != nil || q != 50*time.Millisecond || p != 100*time.Millisecond {
		t.Errorf("CPUQuota = %v/%v, %v; want 50ms/100ms", q, p, err)
	}
	if err := g.ResetPeak(); err != nil {
		t.Errorf("ResetPeak: %v", err)
	}
	if p, err := g.MemoryPressure(); err != nil {
		t.Errorf("MemoryPressure: %v", err)
	} else if l.Controllers[Memory].Version == V1 && !p.Host {
		t.Errorf("MemoryPressure on v1 should be host-wide")
	}

	start := time.Now()
	if err := g.Freeze(ctx); err != nil {
		t.Fatalf("Freeze: %v", err)
	}
	t.Logf("freeze took %v; memory usage %d ws %d peak %d", time.Since(start), m.Usage, m.WorkingSet, m.Peak)
	if fr, err := g.Frozen(); err != nil || !fr {
		t.Fatalf("Frozen = %v, %v after Freeze", fr, err)
	}
	if err := g.Thaw(ctx); err != nil {
		t.Fatalf("Thaw: %v", err)
	}
	if fr, err := g.Frozen(); err != nil || fr {
		t.Fatalf("Frozen = %v, %v after Thaw", fr, err)
	}
	// KillAll on a frozen group must thaw it first.
	if err := g.Freeze(ctx); err != nil {
		t.Fatalf("Freeze: %v", err)
	}
	if err := g.KillAll(ctx); err != nil {
		t.Fatalf("KillAll: %v", err)
	}
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		t.Fatal("helper still running after KillAll")
	}
	if pids, err := g.Pids(); err != nil || len(pids) != 0 {
		t.Errorf("Pids after KillAll = %v, %v", pids, err)
	}
	if err := g.Delete(); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for c, mnt := range l.Controllers {
		if _, err := os.Stat(filepath.Join(mnt.Root, g.Path())); err == nil {
			t.Errorf("%s group %s remains after Delete", c, g.Path())
		}
	}
}

func TestLiveOOMKill(t *testing.T) {
	l := liveLayout(t)
	d := liveDomain(t, l, "-oom", 64<<20)
	// With swap on (another test's or the user's zram) the helper would
	// swap instead of being killed.
	if err := d.DisableSwap(); err != nil {
		t.Fatalf("DisableSwap: %v", err)
	}
	g, err := d.Child("oom")
	if err != nil {
		t.Fatalf("Child: %v", err)
	}
	if err := g.SetSwap(false); err != nil {
		t.Fatalf("SetSwap: %v", err)
	}
	if err := g.SetMemoryLimit(32 << 20); err != nil {
		t.Fatalf("SetMemoryLimit: %v", err)
	}
	h := startHelper(t, g, 100, false)
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		t.Fatal("helper allocating 100 MiB in a 32 MiB group was not killed")
	}
	m, err := g.Memory()
	if err != nil {
		t.Fatalf("Memory: %v", err)
	}
	t.Logf("OOMKills %d, peak %d, helper exit: %v", m.OOMKills, m.Peak, h.err)
	if m.OOMKills < 1 {
		t.Errorf("OOMKills = %d, want >= 1 (helper exit: %v)", m.OOMKills, h.err)
	}
	if m.Limit != 32<<20 {
		t.Errorf("Limit = %d, want %d", m.Limit, 32<<20)
	}
	// The kernel's high-water mark may overshoot the limit by a few pages.
	if m.Peak < 16<<20 || m.Peak > 32<<20+256<<10 {
		t.Errorf("Peak = %d, want between 16 MiB and the 32 MiB limit (+256 KiB slack)", m.Peak)
	}
}

func TestLiveAdoptStaleDomain(t *testing.T) {
	l := liveLayout(t)
	stale := liveDomain(t, l, "-stale", 64<<20)
	g, err := stale.Child("left-over")
	if err != nil {
		t.Fatalf("Child: %v", err)
	}
	h := startHelper(t, g, 1, true)
	fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer fcancel()
	if err := g.Freeze(fctx); err != nil {
		t.Fatalf("Freeze: %v", err)
	}
	// A second OpenDomain of the same name while the first is open is
	// refused; once its owner is gone (its lock dropped as a crash drops
	// it, the record left behind) it is what a restart after a crash does.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	name := g.Path()[:strings.Index(g.Path(), "/")]
	if _, err := OpenDomain(ctx, l, name, 64<<20, nil); !errors.Is(err, ErrInUse) {
		t.Fatalf("OpenDomain of an owned domain = %v, want ErrInUse", err)
	}
	stale.lock.unlock()
	d, err := OpenDomain(ctx, l, name, 64<<20, nil)
	if err != nil {
		t.Fatalf("OpenDomain over a stale domain: %v", err)
	}
	defer d.lock.Release()
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		t.Fatal("task of the stale domain still running after adoption")
	}
	for c, m := range l.Controllers {
		if _, err := os.Stat(filepath.Join(m.Root, g.Path())); err == nil {
			t.Errorf("%s child %s of the stale domain remains", c, g.Path())
		}
	}
	if fr, err := d.Group().Frozen(); err != nil || fr {
		t.Errorf("adopted domain Frozen = %v, %v; want thawed", fr, err)
	}
}

// TestLiveHotReads: the files a group keeps open (hot.go) give each read
// the kernel's current value, and a group removed behind the open files
// reads as removed, then as the new group once one is made at its path.
func TestLiveHotReads(t *testing.T) {
	l := liveLayout(t)
	d := liveDomain(t, l, "-hot", 64<<20)
	g, err := d.Child("sb")
	if err != nil {
		t.Fatalf("Child: %v", err)
	}
	gr := g.(*group)
	for _, lim := range []int64{32 << 20, 48 << 20} {
		if err := g.SetMemoryLimit(lim); err != nil {
			t.Fatalf("SetMemoryLimit: %v", err)
		}
		if s, err := g.Room(); err != nil || s.Limit != lim {
			t.Fatalf("Room limit = %d, %v; want %d", s.Limit, err, lim)
		}
	}
	h := startHelper(t, g, 8, true)
	if c, err := g.Charged(); err != nil || c < 8<<20 {
		t.Fatalf("Charged = %d, %v; want >= 8 MiB", c, err)
	}
	if fr, err := g.Frozen(); err != nil || fr {
		t.Fatalf("Frozen = %v, %v; want false", fr, err)
	}
	if err := g.KillAll(context.Background()); err != nil {
		t.Fatalf("KillAll: %v", err)
	}
	<-h.done
	if _, err := g.CPUUsage(); err != nil {
		t.Fatalf("CPUUsage: %v", err)
	}
	gr.hotMu.Lock()
	open := len(gr.files)
	gr.hotMu.Unlock()
	if open == 0 {
		t.Fatal("no control file kept open after Room, Charged, Frozen and CPUUsage")
	}
	// Remove the group behind the group's back (as another process might),
	// keeping its files open.
	dirs := gr.uniqueDirs()
	for _, dir := range dirs {
		if err := os.Remove(dir); err != nil {
			t.Fatalf("removing %s: %v", dir, err)
		}
	}
	if _, err := g.Charged(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Charged of a removed group: %v; want ErrNotExist", err)
	}
	if _, err := g.Frozen(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Frozen of a removed group: %v; want ErrNotExist", err)
	}
	for _, dir := range dirs {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatalf("re-making %s: %v", dir, err)
		}
	}
	if s, err := g.Room(); err != nil || s.Limit != -1 {
		t.Fatalf("Room of the re-made group: limit %d, %v; want -1 (a new group)", s.Limit, err)
	}
	if err := g.Delete(); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	gr.hotMu.Lock()
	open = len(gr.files)
	gr.hotMu.Unlock()
	if open != 0 {
		t.Errorf("%d control files open after Delete", open)
	}
}

// BenchmarkControlRead compares a group's read of one control file kept
// open (hot: one pread) with a fresh read by path (readControl: open, read
// to the end, close) and with os.ReadFile (seven calls on cgroupfs), on a
// live group's memory usage.
func BenchmarkControlRead(b *testing.B) {
	l := liveLayout(b)
	d := liveDomain(b, l, "-bench", 64<<20)
	g, err := d.Child("sb")
	if err != nil {
		b.Fatalf("Child: %v", err)
	}
	gr := g.(*group)
	dir, v, err := gr.dir(Memory)
	if err != nil {
		b.Fatal(err)
	}
	name := "memory.usage_in_bytes"
	if v != V1 {
		name = "memory.current"
	}
	path := filepath.Join(dir, name)
	b.Run("os.ReadFile", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			if _, err := readControl(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hot", func(b *testing.B) {
		for b.Loop() {
			if _, err := gr.readHot(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	if err := g.Delete(); err != nil {
		b.Fatalf("Delete: %v", err)
	}
}

// BenchmarkMemoryPids: listing a sandbox's tasks (MemoryPids) of a group
// with a tool scope below it and of a leaf group, against the
// filepath.WalkDir listing the gate used each period before.
func BenchmarkMemoryPids(b *testing.B) {
	l := liveLayout(b)
	d := liveDomain(b, l, "-bench", 64<<20)
	g, err := d.Child("sb")
	if err != nil {
		b.Fatalf("Child: %v", err)
	}
	scope, err := d.Child("sb/tool-1")
	if err != nil {
		b.Fatalf("Child: %v", err)
	}
	for _, c := range []struct {
		name string
		g    Group
	}{{"with-scope", g}, {"leaf", scope}} {
		dir, _, err := c.g.(*group).dir(Memory)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/WalkDir", func(b *testing.B) {
			for b.Loop() {
				err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
					if err != nil || !e.IsDir() {
						return err
					}
					_, err = readControl(filepath.Join(p, "cgroup.procs"))
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/MemoryPids", func(b *testing.B) {
			for b.Loop() {
				if _, err := c.g.MemoryPids(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, x := range []Group{scope, g} {
		if err := x.Delete(); err != nil {
			b.Fatalf("Delete: %v", err)
		}
	}
}
