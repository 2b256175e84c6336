package adopted

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// fakeTree is a v1 layout over a temporary directory holding the group
// path of one container, with memory files written.
func fakeTree(t *testing.T, path string) (*cgroup.Layout, string) {
	t.Helper()
	root := t.TempDir()
	var mounts []cgroup.MountInfo
	for _, c := range []string{"memory", "cpu", "cpuacct", "freezer", "pids"} {
		mounts = append(mounts, cgroup.MountInfo{MountPoint: "/" + c, FSType: "cgroup", Options: []string{"rw", c}})
		if err := os.MkdirAll(filepath.Join(root, c, path), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l, err := cgroup.LayoutFromMounts(mounts, root)
	if err != nil {
		t.Fatal(err)
	}
	mem := filepath.Join(root, "memory", path)
	for f, v := range map[string]string{
		"memory.usage_in_bytes": "1048576\n", "memory.stat": "total_inactive_file 0\n", "memory.max_usage_in_bytes": "2097152\n",
		"memory.limit_in_bytes": "33554432\n", "memory.oom_control": "oom_kill_disable 1\nunder_oom 0\noom_kill 2\n", // the domain's hold, inherited
		"memory.failcnt": "4\n",
	} {
		if err := os.WriteFile(filepath.Join(mem, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"freezer/" + path + "/freezer.state", "pids/" + path + "/cgroup.procs"} {
		v := "THAWED\n"
		if filepath.Base(f) == "cgroup.procs" {
			v = "42\n"
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return l, filepath.Join(root, "freezer", path, "freezer.state")
}

func TestBackend(t *testing.T) {
	const path = "tenon-node/ctr1"
	l, state := fakeTree(t, path)
	b := New(l)
	ctx := context.Background()
	if _, err := b.Stats(ctx, "ctr1"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("Stats before Add = %v, want ErrNotFound", err)
	}
	info, err := b.Add("ctr1", path, map[string]string{"pod": "default/a"})
	if err != nil {
		t.Fatal(err)
	}
	if info.CgroupPath != path || info.Labels["pod"] != "default/a" {
		t.Errorf("info = %+v", info)
	}
	// The hold its group inherited is released: at a limit of its own it
	// must be OOM-killed, not held.
	oc := filepath.Join(l.Controllers[cgroup.Memory].Root, path, "memory.oom_control")
	if got := read(t, oc); got != "0" {
		t.Errorf("memory.oom_control after Add = %q, want the inherited hold released (0)", got)
	}
	if err := os.WriteFile(oc, []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := b.Stats(ctx, "ctr1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Memory != 1<<20 || st.Peak != 2<<20 || st.OOMKills != 2 {
		t.Errorf("stats = %+v, want the cgroup's memory", st)
	}
	if st.Blocked != -1 {
		t.Errorf("stats Blocked = %d, want -1: the backend does not read its threads' states, so it must not say none is blocked", st.Blocked)
	}
	if m, err := b.Memory("ctr1"); err != nil || m.Limit != 32<<20 || m.LimitHits != 4 {
		t.Errorf("Memory = %+v, %v; want limit 32 MiB, 4 hits", m, err)
	}
	if err := b.Pause(ctx, "ctr1"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, state); got != "FROZEN" {
		t.Errorf("freezer.state after Pause = %q", got)
	}
	if info, _ := b.Info(ctx, "ctr1"); !info.Paused {
		t.Error("Info after Pause not paused")
	}
	if err := b.Resume(ctx, "ctr1"); err != nil || read(t, state) != "THAWED" {
		t.Errorf("Resume = %v, state %q", err, read(t, state))
	}
	if err := b.Pause(ctx, "ctr1"); err != nil {
		t.Fatal(err)
	}
	// Removing a frozen container thaws it, so that its runtime can stop it.
	if err := b.Remove(ctx, "ctr1"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, state); got != "THAWED" {
		t.Errorf("freezer.state after Remove = %q, want THAWED", got)
	}
	if err := b.Pause(ctx, "ctr1"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("Pause after Remove = %v, want ErrNotFound", err)
	}
	for name, err := range map[string]error{
		"create":  func() error { _, err := b.Create(ctx, sandbox.Spec{ID: "x"}); return err }(),
		"exec":    func() error { _, err := b.Exec(ctx, "ctr1", sandbox.ExecRequest{Shell: "true"}); return err }(),
		"destroy": b.Destroy(ctx, "ctr1"),
	} {
		if !errors.Is(err, ErrNotOwned) {
			t.Errorf("%s = %v, want ErrNotOwned", name, err)
		}
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
