package swarm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/census"
	"github.com/tenon-dev/tenon/internal/cgroup"
)

// liveLayout skips unless the test runs as root with a memory and a
// freezer hierarchy and readable page frame numbers.
func liveLayout(t *testing.T) *cgroup.Layout {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live census needs root (cgroups, pagemap frame numbers)")
	}
	l, err := cgroup.Detect("/proc")
	if err != nil {
		t.Skipf("no cgroup memory controller: %v", err)
	}
	if _, ok := l.Controller(cgroup.Freezer); !ok {
		t.Skip("no cgroup freezer")
	}
	if _, err := os.Stat("/proc/kpageflags"); err != nil {
		t.Skipf("no /proc/kpageflags: %v", err)
	}
	return l
}

// TestLiveCensusCgroups censuses two cgroup siblings created here, each
// running one process placed by the sibling wrapper, twice, and checks that
// both were frozen for the sample and are thawed afterwards.
func TestLiveCensusCgroups(t *testing.T) {
	l := liveLayout(t)
	parent := fmt.Sprintf("tenon-test-swarm-%d", os.Getpid())
	var groups []cgroup.Group
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, g := range groups {
			_ = g.Thaw(ctx)
			_ = g.KillAll(ctx)
			_ = g.Delete()
		}
		if g, err := cgroup.Open(l, parent); err == nil {
			_ = g.Delete()
		}
	})
	for _, name := range []string{"a", "b"} {
		p := parent + "/" + name
		g, err := cgroup.Create(l, p)
		if err != nil {
			t.Fatal(err)
		}
		groups = append(groups, g)
		dirs, err := l.Dirs(p)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", "-c", wrapper, "sh",
			filepath.Join(dirs[cgroup.Memory], "cgroup.procs"), filepath.Join(dirs[cgroup.Freezer], "cgroup.procs"), "/",
			"sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	// Wait until the wrapper placed both processes.
	deadline := time.Now().Add(5 * time.Second)
	for _, g := range groups {
		for {
			pids, err := g.Pids()
			if err == nil && len(pids) == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: pids %v, err %v; want one process", g.Path(), pids, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	mem := l.Controllers[cgroup.Memory].Root
	res, err := Resolve(l, Targets{Cgroups: []string{filepath.Join(mem, parent, "*")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Siblings) != 2 || len(res.Freezers) != 2 {
		t.Fatalf("resolved %d siblings, %d freezers; want 2 and 2", len(res.Siblings), len(res.Freezers))
	}
	ctx := context.Background()
	snaps, err := SampleRepeatedly(ctx, census.Options{Siblings: res.Siblings, Freezers: res.Freezers, Start: time.Now()},
		SampleOptions{Samples: 2, Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots, want 2", len(snaps))
	}
	for i, s := range snaps {
		if s.Stats.Processes != 2 {
			t.Errorf("sample %d read %d processes, want 2", i, s.Stats.Processes)
		}
		if s.Freeze <= 0 {
			t.Errorf("sample %d: freeze window %v, want > 0", i, s.Freeze)
		}
		if len(s.Pages) == 0 {
			t.Errorf("sample %d: no pages", i)
		}
	}
	for _, g := range groups {
		if frozen, err := g.Frozen(); err != nil || frozen {
			t.Errorf("%s frozen=%v err=%v after the census; want thawed", g.Path(), frozen, err)
		}
	}
	rs := census.Analyze(snaps, "test")
	if rs[1].N != 2 || rs[1].RealBytes <= 0 || rs[1].OracleBytes > rs[1].RealBytes {
		t.Errorf("analysis %+v: want N=2 and 0 < oracle <= real", rs[1])
	}
	// Two sleeps from one binary share their text: some content is held by both.
	if rs[1].HeldByAllBytes <= 0 {
		t.Errorf("held_by_all = %d, want > 0 for two identical processes", rs[1].HeldByAllBytes)
	}
}
