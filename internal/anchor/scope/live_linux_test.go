//go:build linux

package scope

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// liveParent creates a uniquely named parent group and removes it at cleanup.
func liveParent(t *testing.T, suffix string) (*Runner, cgroup.Group) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live scope test needs root to create cgroups")
	}
	l, err := cgroup.Detect("/proc")
	if errors.Is(err, cgroup.ErrNoMemoryController) {
		t.Skip("live scope test needs the memory controller (cgroup v1 or v2)")
	}
	if err != nil {
		t.Fatalf("Detect: %v", err)
	}
	name := fmt.Sprintf("tenon-test-scope-%d-%s", os.Getpid(), suffix)
	g, err := cgroup.Create(l, name)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.KillAll(ctx); err != nil {
			t.Errorf("cleanup KillAll: %v", err)
		}
		if dirs, err := l.Dirs(name); err == nil {
			_, _ = dropMemory(dirs[cgroup.Memory], l.Controllers[cgroup.Memory].Version, sysFiles)
		}
		if err := g.Delete(); err != nil {
			t.Errorf("cleanup Delete: %v", err)
		}
	})
	return NewRunner(l, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))), g
}

func scopeGone(t *testing.T, r *Runner, res Result) {
	t.Helper()
	dirs, err := r.Layout.Dirs(res.Scope)
	if err != nil {
		t.Fatal(err)
	}
	for c, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s scope %s still exists", c, d)
		}
	}
}

// TestLivePlacement: a tool that allocates 64 MiB at its first instruction
// has every byte charged to its scope, and /proc/self/cgroup names it.
func TestLivePlacement(t *testing.T) {
	r, parent := liveParent(t, "place")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const mib = 64
	res, err := r.RunScoped(context.Background(), parent.Path(), Request{
		Argv: []string{self},
		Env:  append(os.Environ(), fmt.Sprintf("%s=%d", allocEnv, mib)),
	})
	if err != nil {
		t.Fatalf("RunScoped: %v (stderr %q)", err, res.Stderr)
	}
	t.Logf("exit %d peak %d MiB held %d left %d drop %v", res.ExitCode, res.Peak>>20, res.Held, res.Left, res.Drop)
	if res.ExitCode != 0 || !res.Scoped {
		t.Fatalf("exit %d scoped %v stderr %q", res.ExitCode, res.Scoped, res.Stderr)
	}
	if res.Peak < mib<<20 {
		t.Errorf("scope peak %d < %d: allocations escaped the scope", res.Peak, mib<<20)
	}
	memLine := ""
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		v1 := r.Layout.Controllers[cgroup.Memory].Version == cgroup.V1
		if v1 && strings.Contains(","+f[1]+",", ",memory,") || !v1 && f[0] == "0" {
			memLine = f[2]
		}
	}
	if want := "/" + res.Scope; memLine != want {
		t.Errorf("tool's memory cgroup %q, want %q (cgroup file %q)", memLine, want, res.Stdout)
	}
	scopeGone(t, r, res)
}

// TestLivePageCacheDropped: a tool leaves 200 MiB of page cache behind on
// the host disk; once it exits its scope is gone and the parent's usage is
// back near where it was.
func TestLivePageCacheDropped(t *testing.T) {
	r, parent := liveParent(t, "cache")
	before, err := parent.Memory()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cache.dat")
	res, err := r.RunScoped(context.Background(), parent.Path(), Request{
		Argv: []string{"/bin/sh", "-c", "dd if=/dev/zero of=" + file + " bs=1M count=200 status=none"},
	})
	if err != nil {
		t.Fatalf("RunScoped: %v (stderr %q)", err, res.Stderr)
	}
	after, err := parent.Memory()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("parent before %d MiB, after %d MiB; scope held %d MiB, left %d KiB, drop %v",
		before.Usage>>20, after.Usage>>20, res.Held>>20, res.Left>>10, res.Drop)
	if fi, err := os.Stat(file); err != nil || fi.Size() != 200<<20 {
		t.Fatalf("tool did not write its file: %v", err)
	}
	if res.Held < 150<<20 {
		t.Errorf("scope held %d MiB after exit, want the ~200 MiB page cache charged to it", res.Held>>20)
	}
	if after.Usage > before.Usage+20<<20 {
		t.Errorf("parent usage %d MiB after the scope, want within 20 MiB of %d MiB", after.Usage>>20, before.Usage>>20)
	}
	scopeGone(t, r, res)
}

func TestLiveOutputExitAndTree(t *testing.T) {
	r, parent := liveParent(t, "out")
	tests := []struct {
		name        string
		argv        []string
		cap         int
		timeout     time.Duration
		wantExit    int
		wantOut     string
		wantDropped int64
		wantErr     error
		maxDuration time.Duration
	}{
		{"capped output and exit code", []string{"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x; exit 3"}, 1000, 0, 3, strings.Repeat("x", 1000), 299000, nil, 10 * time.Second},
		{"background child is killed", []string{"sh", "-c", "sleep 100 & echo started"}, 0, 0, 0, "started\n", 0, nil, 5 * time.Second},
		{"missing tool", []string{"tenon-test-no-such-tool"}, 0, 0, 127, "", 0, nil, 5 * time.Second},
		{"context kills the tree", []string{"sh", "-c", "sleep 100 & sleep 100"}, 0, 200 * time.Millisecond, -1, "", 0, context.DeadlineExceeded, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			res, err := r.RunScoped(ctx, parent.Path(), Request{Argv: tt.argv, OutputCap: tt.cap, NoFastPath: true})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if d := time.Since(start); d > tt.maxDuration {
				t.Errorf("took %v, want under %v", d, tt.maxDuration)
			}
			if res.ExitCode != tt.wantExit || string(res.Stdout) != tt.wantOut || res.StdoutDropped != tt.wantDropped {
				t.Errorf("exit %d stdout %d bytes (dropped %d); want %d, %d bytes (dropped %d); stderr %q",
					res.ExitCode, len(res.Stdout), res.StdoutDropped, tt.wantExit, len(tt.wantOut), tt.wantDropped, res.Stderr)
			}
			scopeGone(t, r, res)
		})
	}
}

func TestLiveFastPath(t *testing.T) {
	r, parent := liveParent(t, "fast")
	res, err := r.RunScoped(context.Background(), parent.Path(), Request{Argv: []string{"/bin/sh", "-c", "echo hi && pwd"}, Dir: "/"})
	if err != nil {
		t.Fatalf("RunScoped: %v", err)
	}
	if res.Scoped || res.Scope != "" || string(res.Stdout) != "hi\n/\n" || res.ExitCode != 0 {
		t.Errorf("fast path: scoped %v scope %q stdout %q exit %d", res.Scoped, res.Scope, res.Stdout, res.ExitCode)
	}
}

// TestLiveCloneIntoCgroupV2 exercises the all-v2 path (clone3 with
// CLONE_INTO_CGROUP) on whatever cgroup2 hierarchy is mounted, even one
// without the memory controller (as on hybrid hosts): the tool's first
// instruction already runs in the scope.
func TestLiveCloneIntoCgroupV2(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live scope test needs root to create cgroups")
	}
	host, err := cgroup.Detect("/proc")
	if err != nil && !errors.Is(err, cgroup.ErrNoMemoryController) {
		t.Fatal(err)
	}
	if host == nil || host.Unified == "" {
		t.Skip("live clone-into-cgroup test needs a cgroup2 mount")
	}
	// A layout that puts every controller on the cgroup2 mount.
	l := &cgroup.Layout{
		Controllers: map[string]cgroup.Mount{cgroup.Memory: {Version: cgroup.V2, Root: host.Unified}},
		Unified:     host.Unified, ProcRoot: "/proc",
	}
	name := fmt.Sprintf("tenon-test-scope-%d-v2", os.Getpid())
	parent, err := cgroup.Create(l, name)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = parent.KillAll(ctx)
		if err := parent.Delete(); err != nil {
			t.Errorf("cleanup Delete: %v", err)
		}
	})
	self, _ := os.Executable()
	r := NewRunner(l, nil)
	res, err := r.RunScoped(context.Background(), name, Request{
		Argv: []string{self},
		Env:  append(os.Environ(), allocEnv+"=1"),
	})
	if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) && res.Scope == "" {
		t.Skipf("live clone-into-cgroup test needs clone3 CLONE_INTO_CGROUP: %v", err)
	}
	if err != nil {
		t.Fatalf("RunScoped: %v (stderr %q)", err, res.Stderr)
	}
	if want := "0::/" + res.Scope; !strings.Contains(string(res.Stdout), want+"\n") {
		t.Errorf("tool's cgroups %q, want a line %q", res.Stdout, want)
	}
	scopeGone(t, r, res)
}
