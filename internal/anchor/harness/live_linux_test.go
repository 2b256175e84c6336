//go:build linux

package harness

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/anchortest"
	"github.com/tenon-dev/tenon/internal/anchor/heap"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/memtool"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestMain serves the modes the sandbox runs: inside a sandbox the test
// binary is /usr/local/bin/tenon, so it answers `tenon harness heap` and
// `tenon tool mem` as cmd/tenon does.
func TestMain(m *testing.M) {
	process.MaybeInit()
	if len(os.Args) > 2 && os.Args[1] == "harness" && os.Args[2] == "heap" {
		os.Exit(serveHeap(os.Args[3:]))
	}
	memtool.MaybeServe()
	os.Exit(m.Run())
}

// serveHeap is the subset of `tenon harness heap` Replay uses.
func serveHeap(args []string) int {
	fs := flag.NewFlagSet("heap", flag.ContinueOnError)
	size := units.Size(300 * units.MiB)
	fs.Var(&size, "heap", "")
	touch := fs.String("touch", "20", "")
	step := fs.Duration("step", time.Second, "")
	rpp := fs.Int("random-per-page", 4096, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var pct int
	fmt.Sscanf(strings.TrimSuffix(*touch, "%"), "%d", &pct)
	err := heap.RunHeap(context.Background(), heap.HeapOptions{
		SizeMiB: int(int64(size) / units.MiB), TouchPercent: pct, Step: *step, RandomPerPage: *rpp,
		Signals: true, Out: os.Stdout,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// liveSetup skips without root, the v1 memory controller, the freezer,
// process_madvise or zram; it takes the zram lock, turns zram swap on and
// makes a workload domain and a process backend, all removed at the end.
func liveSetup(t *testing.T) Options {
	t.Helper()
	l, err := cgroup.Detect("/proc")
	if err != nil {
		t.Skipf("live harness test needs the cgroup memory controller: %v", err)
	}
	if m, _ := l.Controller(cgroup.Memory); m.Version != cgroup.V1 {
		t.Skip("live harness test needs the cgroup v1 memory controller (the process backend's live tests run on v1)")
	}
	if _, ok := l.Controller(cgroup.Freezer); !ok {
		t.Skip("live harness test needs the cgroup freezer")
	}
	anchortest.Swap(t, 512<<20, "live harness test")
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx := context.Background()
	dom, err := cgroup.OpenDomain(ctx, l, fmt.Sprintf("tenon-test-harness-%d", os.Getpid()), 2<<30, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := dom.Close(cctx); err != nil {
			t.Errorf("closing domain: %v", err)
		}
	})
	be, err := process.New(process.Config{StateDir: t.TempDir(), CgroupParent: dom.Group().Path(), Layout: l, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := be.Close(); err != nil {
			t.Errorf("closing backend: %v", err)
		}
	})
	return Options{Backend: be, Layout: l, Log: log, Lead: 300 * time.Millisecond, Grace: 200 * time.Millisecond,
		Heap: HeapSpec{MiB: 96, TouchPercent: 20, Step: 200 * time.Millisecond, RandomPerPage: 1024}}
}

// TestLiveReplay: a waiting harness's resident memory drops by at least 80%
// of its heap after page-out, its heap verifies after page-in and it keeps
// stepping; the baseline never pages out; nothing is left behind.
func TestLiveReplay(t *testing.T) {
	o := liveSetup(t)
	steps := []Step{
		{Wait: 1500 * time.Millisecond, Class: "test", Argv: []string{"/bin/sh", "-c", "dd if=/dev/zero of=/workspace/f bs=1M count=32 conv=fsync status=none"}},
		{Wait: 1500 * time.Millisecond, Class: "bash", Argv: []string{"true"}},
	}
	tests := []struct {
		name     string
		mode     Mode
		wantSusp bool
	}{
		{"baseline never pages out", Baseline, false},
		{"intents pages the waiting harness out", Intents, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprintf("tenon-test-harness-%d-%d", os.Getpid(), i)
			res, err := Replay(context.Background(), o, tt.mode, "live", id, steps)
			if err != nil {
				t.Fatalf("Replay: %v", err)
			}
			t.Logf("%s: time %v, RAM %.0f MiB·s, backing %.0f MiB·s, suspensions %d, paged out %.0f%%, resume max %v",
				tt.mode, res.HarnessTime, res.RAMMiBs, res.BackingMiBs, res.Suspensions, 100*res.PagedOut, res.ResumeMax)
			if !res.Verified {
				t.Fatal("the heap did not verify after the replay")
			}
			if (res.Suspensions > 0) != tt.wantSusp {
				t.Fatalf("suspensions %d, want some: %v", res.Suspensions, tt.wantSusp)
			}
			if tt.wantSusp && res.PagedOut < 0.8 {
				t.Fatalf("paged out %.0f%% of the heap at least once, want >= 80%%", 100*res.PagedOut)
			}
			if len(res.Samples) < 10 {
				t.Fatalf("only %d memory samples", len(res.Samples))
			}
			if _, err := o.Backend.Info(context.Background(), id); err == nil {
				t.Fatal("the sandbox outlived its replay")
			}
		})
	}
}
