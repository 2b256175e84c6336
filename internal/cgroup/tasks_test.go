package cgroup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParsePids(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []int
		wantErr bool
	}{
		{name: "lines", in: "12\n7\n\n300\n", want: []int{12, 7, 300}},
		{name: "empty", in: "", want: nil},
		{name: "garbage", in: "12\nabc\n", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePids(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// fakeTasks writes cgroup.procs into the group's memory and freezer trees:
// procs maps a sub path ("" for the group) to its pids.
func fakeTasks(t *testing.T, g *group, controller string, procs map[string][]int) {
	t.Helper()
	for sub, pids := range procs {
		var b strings.Builder
		for _, p := range pids {
			b.WriteString(strconv.Itoa(p) + "\n")
		}
		writeFiles(t, filepath.Join(g.dirs[controller], sub), map[string]string{"cgroup.procs": b.String()})
	}
}

func TestPidsRecursive(t *testing.T) {
	g := mustCreate(t, fakeV1(t), "tenon")
	fakeTasks(t, g, Memory, map[string][]int{"": {10}, "sb-1": {30, 20}, "sb-1/tool": {40}, "sb-2": nil})
	fakeTasks(t, g, Freezer, map[string][]int{"sb-1": {20, 50}}) // 50 only in the freezer tree
	got, err := g.Pids()
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{10, 20, 30, 40, 50}; !slices.Equal(got, want) {
		t.Errorf("Pids = %v, want %v", got, want)
	}
	// MemoryPids reads the memory tree alone, where 50 is not.
	if got, err := g.MemoryPids(); err != nil || !slices.Equal(got, []int{10, 20, 30, 40}) {
		t.Errorf("MemoryPids = %v, %v, want [10 20 30 40]", got, err)
	}
	child, err := Open(g.layout, "tenon/sb-1/tool")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := child.Pids(); !slices.Equal(got, []int{40}) {
		t.Errorf("child Pids = %v, want [40]", got)
	}
}

func TestAddProcWritesEveryHierarchy(t *testing.T) {
	k := newFakeKernel(t)
	l := fakeV1(t)
	g := mustCreate(t, l, "tenon/sb")
	if err := g.AddProc(4242); err != nil {
		t.Fatal(err)
	}
	for _, c := range controllers {
		if got := readFile(t, filepath.Join(g.dirs[c], "cgroup.procs")); got != "4242" {
			t.Errorf("%s cgroup.procs = %q", c, got)
		}
	}
	if len(k.writes) != len(controllers) {
		t.Errorf("%d writes, want one per hierarchy: %v", len(k.writes), k.writes)
	}
}

// TestKillAllV1 simulates the kernel: a kill removes the pid from every
// cgroup.procs, but only when its freezer group is thawed (frozen v1 tasks
// do not act on SIGKILL).
func TestKillAllV1(t *testing.T) {
	k := newFakeKernel(t)
	g := mustCreate(t, fakeV1(t), "tenon")
	procs := map[string][]int{"": {10}, "sb-1": {20, 30}, "sb-1/tool": {40}}
	fakeTasks(t, g, Memory, procs)
	fakeTasks(t, g, Freezer, procs)
	writeFiles(t, g.dirs[Freezer], map[string]string{"freezer.state": "THAWED\n"})
	writeFiles(t, filepath.Join(g.dirs[Freezer], "sb-1"), map[string]string{"freezer.state": "FROZEN\n"})
	writeFiles(t, filepath.Join(g.dirs[Freezer], "sb-1", "tool"), map[string]string{"freezer.state": "FROZEN\n"})
	k.onKill = func(pid int) {
		for _, c := range []string{Memory, Freezer} {
			filepath.WalkDir(g.dirs[c], func(p string, d os.DirEntry, err error) error {
				if err != nil || d.Name() != "cgroup.procs" {
					return err
				}
				if c == Freezer {
					if s, _ := readString(filepath.Join(filepath.Dir(p), "freezer.state")); s != stateThawed {
						return nil
					}
				}
				b, _ := os.ReadFile(p)
				pids, _ := ParsePids(strings.NewReader(string(b)))
				pids = slices.DeleteFunc(pids, func(x int) bool { return x == pid })
				var sb strings.Builder
				for _, x := range pids {
					sb.WriteString(strconv.Itoa(x) + "\n")
				}
				return os.WriteFile(p, []byte(sb.String()), 0o644)
			})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.KillAll(ctx); err != nil {
		t.Fatalf("KillAll: %v", err)
	}
	if left, _ := g.Pids(); len(left) != 0 {
		t.Errorf("tasks left: %v", left)
	}
	slices.Sort(k.killed)
	if want := []int{10, 20, 30, 40}; !slices.Equal(slices.Compact(k.killed), want) {
		t.Errorf("killed %v, want %v", k.killed, want)
	}
	for _, sub := range []string{"sb-1", "sb-1/tool"} {
		if s := readFile(t, filepath.Join(g.dirs[Freezer], sub, "freezer.state")); s != stateThawed {
			t.Errorf("%s freezer.state = %s after KillAll, want THAWED", sub, s)
		}
	}
}

func TestKillAllTimesOut(t *testing.T) {
	k := newFakeKernel(t) // kills are recorded and have no effect
	g := mustCreate(t, fakeV1(t), "tenon")
	fakeTasks(t, g, Memory, map[string][]int{"": {10}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := g.KillAll(ctx)
	if !errors.Is(err, ErrNotEmpty) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("KillAll = %v, want ErrNotEmpty wrapping the deadline", err)
	}
	if len(k.killed) == 0 {
		t.Error("KillAll sent no signal")
	}
}

func TestKillAllV2UsesCgroupKill(t *testing.T) {
	k := newFakeKernel(t)
	g := mustCreate(t, fakeV2(t), "tenon")
	fakeTasks(t, g, Memory, map[string][]int{"": {10}, "sb": {20}})
	writeFiles(t, g.dirs[Memory], map[string]string{"cgroup.kill": ""})
	k.onWrite = func(p, v string) (string, error) {
		if filepath.Base(p) == "cgroup.kill" && v == "1" {
			fakeTasks(t, g, Memory, map[string][]int{"": nil, "sb": nil})
		}
		return v, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.KillAll(ctx); err != nil {
		t.Fatalf("KillAll: %v", err)
	}
	if !slices.Contains(k.writes, filepath.Join(g.dirs[Memory], "cgroup.kill")+"=1") {
		t.Errorf("cgroup.kill not written: %v", k.writes)
	}
}

func TestDeleteChildrenFirst(t *testing.T) {
	k := newFakeKernel(t)
	l := fakeV1(t)
	g := mustCreate(t, l, "tenon")
	mustCreate(t, l, "tenon/sb-1/tool")
	mustCreate(t, l, "tenon/sb-2")
	busy := 2
	k.onRmdir = func(p string) error {
		if strings.HasSuffix(p, "sb-2") && busy > 0 {
			busy--
			return syscall.EBUSY
		}
		return nil
	}
	if err := g.Delete(); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for _, c := range controllers {
		if _, err := os.Stat(l.Controllers[c].Root + "/tenon"); err == nil {
			t.Errorf("%s tenon remains", c)
		}
	}
	pos := func(suffix string) int {
		return slices.IndexFunc(k.rmdirs, func(p string) bool {
			return strings.HasPrefix(p, l.Controllers[Memory].Root) && strings.HasSuffix(p, suffix)
		})
	}
	if !(pos("sb-1/tool") < pos("sb-1") && pos("sb-1") < pos("/tenon") && pos("sb-2") < pos("/tenon")) {
		t.Errorf("rmdir order not children first: %v", k.rmdirs)
	}
	if busy != 0 {
		t.Errorf("EBUSY was not retried")
	}
	if err := g.Delete(); err != nil {
		t.Errorf("second Delete = %v, want nil", err)
	}
}

func TestDeleteGivesUpOnPersistentError(t *testing.T) {
	k := newFakeKernel(t)
	g := mustCreate(t, fakeV1(t), "tenon")
	k.onRmdir = func(string) error { return syscall.EPERM }
	if err := g.Delete(); !errors.Is(err, syscall.EPERM) {
		t.Errorf("Delete = %v, want EPERM", err)
	}
}

func TestCreateV2EnablesControllers(t *testing.T) {
	k := newFakeKernel(t)
	l := fakeV2(t)
	root := l.Unified
	// The fake kernel: tenon offers what its parent enabled; root already
	// has cpu enabled; +x appends to subtree_control.
	writeFiles(t, root, map[string]string{"cgroup.subtree_control": "cpu\n"})
	writeFiles(t, filepath.Join(root, "tenon"), map[string]string{"cgroup.controllers": "cpu memory pids\n"})
	k.onWrite = func(p, v string) (string, error) {
		if filepath.Base(p) == "cgroup.subtree_control" {
			old, _ := readString(p)
			return strings.TrimSpace(old + " " + strings.TrimPrefix(v, "+")), nil
		}
		return v, nil
	}
	g := mustCreate(t, l, "tenon/sb")
	want := []string{
		filepath.Join(root, "cgroup.subtree_control") + "=+memory",
		filepath.Join(root, "cgroup.subtree_control") + "=+pids",
		filepath.Join(root, "tenon", "cgroup.subtree_control") + "=+memory",
		filepath.Join(root, "tenon", "cgroup.subtree_control") + "=+cpu",
		filepath.Join(root, "tenon", "cgroup.subtree_control") + "=+pids",
	}
	if !slices.Equal(k.writes, want) {
		t.Errorf("writes = %v, want %v", k.writes, want)
	}
	if _, err := os.Stat(g.dirs[Memory]); err != nil {
		t.Errorf("unified group not created: %v", err)
	}
	// Creating a second child writes nothing: everything is enabled.
	k.writes = nil
	mustCreate(t, l, "tenon/sb-2")
	if len(k.writes) != 0 {
		t.Errorf("second Create wrote %v, want nothing", k.writes)
	}
}
