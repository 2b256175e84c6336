//go:build linux

package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/crashtest"
	"github.com/tenon-dev/tenon/internal/disk"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// crashChildEnv holds "<state dir>:<domain name>" in the child that
// TestHostileKill9Leftovers kills (crashChild).
const crashChildEnv = "TENON_PROCESS_CRASH_CHILD"

// crashChild opens a domain and a backend with a disk limit, creates a
// sandbox, freezes it, arms the domain's OOM hold, says READY and waits
// for its SIGKILL.
func crashChild(arg string) int {
	state, name, _ := strings.Cut(arg, ":")
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "crash child:", err); return 1 }
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	dom, err := cgroup.OpenDomain(ctx, layout, name, 1<<30, nil)
	if err != nil {
		return fail(err)
	}
	b, err := New(Config{StateDir: state, CgroupParent: dom.Group().Path(), Layout: layout, DiskMax: 64 << 20})
	if err != nil {
		return fail(err)
	}
	if _, err := b.Create(ctx, sandbox.Spec{ID: "crashed"}); err != nil {
		return fail(err)
	}
	if err := b.Pause(ctx, "crashed"); err != nil {
		return fail(err)
	}
	if err := dom.SetOOMHold(true); err != nil {
		return fail(err)
	}
	fmt.Println(crashtest.ReadyLine)
	select {}
}

// TestHostileKill9Leftovers reproduces issue 22's finding 13: a backend
// killed with SIGKILL while its sandbox is frozen under an armed OOM hold
// leaves the hold, the frozen group, the disk mount and the parents in
// the other hierarchies; the next start disarms, thaws, unmounts and
// removes them, and its Close leaves nothing in any hierarchy.
func TestHostileKill9Leftovers(t *testing.T) {
	layout := liveLayout(t)
	if err := disk.Check(); err != nil {
		t.Skipf("the crash test's disk limit: %v", err)
	}
	state := t.TempDir()
	name := fmt.Sprintf("tenon-test-crash-%d", os.Getpid())
	crashtest.KillWhenReady(t, []string{crashChildEnv + "=" + state + ":" + name}, 30*time.Second)

	// What the crash left (the reproduction).
	memDir := filepath.Join(layout.Controllers[cgroup.Memory].Root, name)
	if oc, _ := os.ReadFile(filepath.Join(memDir, "memory.oom_control")); !strings.Contains(string(oc), "oom_kill_disable 1") {
		t.Errorf("after the crash: oom_control %q, want the hold still armed", oc)
	}
	frozen := filepath.Join(layout.Controllers[cgroup.Freezer].Root, name, "crashed", "freezer.state")
	if s, _ := os.ReadFile(frozen); strings.TrimSpace(string(s)) != "FROZEN" {
		t.Errorf("after the crash: %s = %q, want FROZEN", frozen, s)
	}
	if !mountedUnder(t, state) {
		t.Error("after the crash: no disk mount left under the state dir")
	}

	// The next start.
	ctx := context.Background()
	dom, err := cgroup.OpenDomain(ctx, layout, name, 1<<30, nil)
	if err != nil {
		t.Fatalf("reopening the domain: %v", err)
	}
	domClosed := false
	t.Cleanup(func() {
		if !domClosed {
			_ = dom.Close(context.Background())
		}
	})
	if oc, _ := os.ReadFile(filepath.Join(memDir, "memory.oom_control")); !strings.Contains(string(oc), "oom_kill_disable 0") {
		t.Errorf("after the next start: oom_control %q, want the hold disarmed", oc)
	}
	if _, err := os.Stat(frozen); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the next start: %s: %v, want the group gone", frozen, err)
	}
	b, err := New(Config{StateDir: state, CgroupParent: dom.Group().Path(), Layout: layout, DiskMax: 64 << 20})
	if err != nil {
		t.Fatalf("reopening the backend: %v", err)
	}
	if mountedUnder(t, state) {
		t.Error("after the next start: a disk mount is left under the state dir")
	}
	for _, p := range b.parents {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after the next start: %s: %v, want absent", p, err)
		}
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	domClosed = true
	if err := dom.Close(ctx); err != nil {
		t.Errorf("closing the domain: %v", err)
	}
	if left := cgroupDirs(t, name); len(left) != 0 {
		t.Errorf("cgroups left after the next run's Close: %v", left)
	}
}

// mountedUnder reports whether the host mount table has a mount at or
// below dir.
func mountedUnder(t *testing.T, dir string) bool {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mps, err := mountPointsUnder(f, dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(mps) > 0
}
