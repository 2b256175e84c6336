package cgroup

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const meminfo = "MemTotal:       25165824 kB\nMemFree:        20000000 kB\n"

func TestParseMemTotal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{name: "kB", in: meminfo, want: 24 << 30},
		{name: "missing", in: "MemFree: 1 kB\n", wantErr: true},
		{name: "garbage", in: "MemTotal: lots kB\n", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMemTotal(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %d, %v; want %d (err %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestRequireRoot(t *testing.T) {
	if err := requireRoot(0); err != nil {
		t.Errorf("root: %v", err)
	}
	err := requireRoot(1000)
	if !errors.Is(err, ErrNotRoot) || !strings.Contains(err.Error(), "sudo") {
		t.Errorf("non-root: %v, want ErrNotRoot saying to use sudo", err)
	}
}

// fakeDomainLayout is a v1 fake tree with a 24 GiB meminfo and v1 memory
// files for the domain's Available.
func fakeDomainLayout(t *testing.T) *Layout {
	t.Helper()
	l := fakeV1(t)
	writeFiles(t, l.ProcRoot, map[string]string{"meminfo": meminfo})
	return l
}

func TestOpenDomain(t *testing.T) {
	newFakeKernel(t)
	l := fakeDomainLayout(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := OpenDomain(ctx, l, "", 4<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Group().Path() != DefaultDomain {
		t.Errorf("Path = %q, want %q", d.Group().Path(), DefaultDomain)
	}
	md := d.group.dirs[Memory]
	if got := readFile(t, filepath.Join(md, "memory.limit_in_bytes")); got != "4294967296" {
		t.Errorf("limit = %s, want 4 GiB", got)
	}
	if got := readFile(t, filepath.Join(md, "memory.use_hierarchy")); got != "1" {
		t.Errorf("use_hierarchy = %s, want 1", got)
	}
	c, err := d.Child("sb-1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Path() != "tenon/sb-1" {
		t.Errorf("child path = %q", c.Path())
	}
	for _, ctl := range controllers {
		if _, err := os.Stat(filepath.Join(l.Controllers[ctl].Root, "tenon", "sb-1")); err != nil {
			t.Errorf("child missing in %s: %v", ctl, err)
		}
	}
	if _, err := d.Child("../escape"); err == nil {
		t.Error("Child(../escape) succeeded")
	}
	// Available = limit - (usage - total_inactive_file).
	writeFiles(t, md, map[string]string{
		"memory.usage_in_bytes": "1073741824\n", "memory.stat": "total_inactive_file 268435456\n",
		"memory.max_usage_in_bytes": "0\n", "memory.oom_control": "oom_kill 0\n",
	})
	if av, err := d.Available(); err != nil || av != 4<<30-(1<<30-256<<20) {
		t.Errorf("Available = %d, %v; want %d", av, err, int64(4<<30-(1<<30-256<<20)))
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, ctl := range controllers {
		if _, err := os.Stat(filepath.Join(l.Controllers[ctl].Root, "tenon")); err == nil {
			t.Errorf("domain remains in %s after Close", ctl)
		}
	}
}

func TestOpenDomainRejects(t *testing.T) {
	newFakeKernel(t)
	tests := []struct {
		name    string
		budget  int64
		meminfo bool
		wantErr error
		wantMsg string
	}{
		{name: "budget above MemTotal", budget: 32 << 30, meminfo: true, wantErr: ErrBudgetTooLarge, wantMsg: "below the machine's memory"},
		{name: "zero budget", budget: 0, meminfo: true, wantMsg: "must be > 0"},
		{name: "no meminfo", budget: 1 << 30, wantMsg: "meminfo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := fakeV1(t)
			if tc.meminfo {
				writeFiles(t, l.ProcRoot, map[string]string{"meminfo": meminfo})
			}
			_, err := OpenDomain(context.Background(), l, "tenon", tc.budget, nil)
			if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("OpenDomain = %v, want %v mentioning %q", err, tc.wantErr, tc.wantMsg)
			}
			if _, serr := os.Stat(filepath.Join(l.Controllers[Memory].Root, "tenon")); serr == nil {
				t.Error("a rejected domain was created")
			}
		})
	}
}

// TestOpenDomainAdoptsStale: a domain left by a crashed run (its owner
// record in the lock file, a frozen child, tasks inside, the OOM hold
// armed) is disarmed, thawed, emptied and reused, and the cleanup is
// logged.
func TestOpenDomainAdoptsStale(t *testing.T) {
	k := newFakeKernel(t)
	l := fakeDomainLayout(t)
	writeRecord(t, domainLockPath(l, "tenon"), Owner{PID: 99999999, BootID: "gone", Command: "tenon run"})
	stale := mustCreate(t, l, "tenon/sb-old/tool")
	fakeTasks(t, stale, Memory, map[string][]int{"": {77}})
	writeFiles(t, stale.dirs[Freezer], map[string]string{"freezer.state": "FROZEN\n"})
	domMem := filepath.Join(l.Controllers[Memory].Root, "tenon")
	writeFiles(t, domMem, map[string]string{"memory.oom_control": "oom_kill_disable 1\nunder_oom 1\noom_kill 0\n"})
	k.onKill = func(pid int) {
		if s, _ := readString(filepath.Join(stale.dirs[Freezer], "freezer.state")); s == stateThawed {
			fakeTasks(t, stale, Memory, map[string][]int{"": nil})
		}
	}
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := OpenDomain(ctx, l, "tenon", 1<<30, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(k.killed) == 0 || k.killed[0] != 77 {
		t.Errorf("killed %v, want 77", k.killed)
	}
	for _, ctl := range controllers {
		if _, err := os.Stat(filepath.Join(l.Controllers[ctl].Root, "tenon", "sb-old")); err == nil {
			t.Errorf("stale child remains in %s", ctl)
		}
		if _, err := os.Stat(filepath.Join(l.Controllers[ctl].Root, "tenon")); err != nil {
			t.Errorf("adopted domain missing in %s", ctl)
		}
	}
	if got := readFile(t, filepath.Join(domMem, "memory.oom_control")); got != "0" {
		t.Errorf("oom_control after adoption = %q, want the hold disarmed (0)", got)
	}
	if !strings.Contains(logs.String(), "killed_tasks=1") || !strings.Contains(logs.String(), "deleted_groups=2") || !strings.Contains(logs.String(), "oom_hold_disarmed=true") {
		t.Errorf("adoption not logged with counts: %s", logs.String())
	}
	if got := readFile(t, filepath.Join(d.group.dirs[Memory], "memory.limit_in_bytes")); got != "1073741824" {
		t.Errorf("limit = %s", got)
	}
}

// TestOpenDomainRefusesForeign: a group of the domain's name holding
// tasks with no owner record is not a domain tenon left (`--domain
// system.slice`): opening it fails with ErrForeignGroup naming it, and
// nothing in it is killed, moved or limited. An empty one is adopted.
func TestOpenDomainRefusesForeign(t *testing.T) {
	k := newFakeKernel(t)
	l := fakeDomainLayout(t)
	svc := mustCreate(t, l, "system.slice/sshd.service")
	fakeTasks(t, svc, Memory, map[string][]int{"": {501, 502}})
	memDir := filepath.Join(l.Controllers[Memory].Root, "system.slice")
	limit := filepath.Join(memDir, "memory.limit_in_bytes")
	before, _ := os.ReadFile(limit)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := OpenDomain(ctx, l, "system.slice", 1<<30, nil)
	if !errors.Is(err, ErrForeignGroup) || !strings.Contains(err.Error(), "system.slice") || !strings.Contains(err.Error(), "2 tasks") {
		t.Fatalf("OpenDomain(system.slice) = %v, want ErrForeignGroup naming the group and its 2 tasks", err)
	}
	if len(k.killed) != 0 {
		t.Errorf("killed %v in a group tenon did not make", k.killed)
	}
	if _, err := os.Stat(filepath.Join(memDir, "sshd.service")); err != nil {
		t.Errorf("the foreign group's child: %v", err)
	}
	if after, _ := os.ReadFile(limit); !bytes.Equal(before, after) {
		t.Errorf("memory.limit_in_bytes %q -> %q: the foreign group was limited", before, after)
	}
	if _, err := os.Stat(domainLockPath(l, "system.slice")); err == nil {
		t.Error("the refused domain's lock file stayed")
	}
	// Emptied, the same group (say, one a Close could not delete) is adopted.
	fakeTasks(t, svc, Memory, map[string][]int{"": nil})
	d, err := OpenDomain(ctx, l, "system.slice", 1<<30, nil)
	if err != nil {
		t.Fatalf("OpenDomain of the emptied group: %v", err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCloseFailedKeepsRecord: a Close that cannot empty the domain (a task
// that will not die) keeps its owner record, so the next open adopts the
// group instead of refusing it as someone else's.
func TestCloseFailedKeepsRecord(t *testing.T) {
	k := newFakeKernel(t)
	l := fakeDomainLayout(t)
	d, err := OpenDomain(context.Background(), l, "tenon", 1<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := d.Child("sb")
	if err != nil {
		t.Fatal(err)
	}
	fakeTasks(t, sb.(*group), Memory, map[string][]int{"": {88}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := d.Close(ctx); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("Close with an undying task = %v, want ErrNotEmpty", err)
	}
	if _, err := os.Stat(domainLockPath(l, "tenon")); err != nil {
		t.Fatalf("the owner record after a failed Close: %v", err)
	}
	k.onKill = func(int) { fakeTasks(t, sb.(*group), Memory, map[string][]int{"": nil}) }
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	d2, err := OpenDomain(ctx2, l, "tenon", 1<<30, nil)
	if err != nil {
		t.Fatalf("OpenDomain after a failed Close: %v, want the group adopted", err)
	}
	if err := d2.Close(ctx2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(domainLockPath(l, "tenon")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the owner record after a clean Close: %v, want it removed", err)
	}
}

func TestDomainDisableSwap(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		layout     func(*testing.T) *Layout
	}{
		{name: "v1 swappiness", file: "memory.swappiness", layout: fakeV1},
		{name: "v2 swap.max", file: "memory.swap.max", layout: fakeV2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fakeDomain(t, tc.layout(t))
			p := filepath.Join(d.group.dirs[Memory], tc.file)
			writeFiles(t, filepath.Dir(p), map[string]string{tc.file: "60\n"})
			if err := d.DisableSwap(); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, p); got != "0" {
				t.Errorf("%s = %q, want 0", tc.file, got)
			}
		})
	}
}

func TestDomainOOMHold(t *testing.T) {
	d := fakeDomain(t, fakeV1(t))
	if err := d.SetOOMHold(true); err != nil {
		t.Fatalf("SetOOMHold(true) = %v", err)
	}
	p := filepath.Join(d.group.dirs[Memory], "memory.oom_control")
	if got := readFile(t, p); got != "1" {
		t.Errorf("oom_control after SetOOMHold(true) = %q, want 1", got)
	}
	for _, under := range []bool{false, true} {
		v := "0"
		if under {
			v = "1"
		}
		writeFiles(t, filepath.Dir(p), map[string]string{"memory.oom_control": "oom_kill_disable 1\nunder_oom " + v + "\noom_kill 0\n"})
		got, err := d.UnderOOM()
		if err != nil || got != under {
			t.Errorf("UnderOOM with under_oom %s = %v, %v", v, got, err)
		}
	}
	if err := d.SetOOMHold(false); err != nil {
		t.Fatalf("SetOOMHold(false) = %v", err)
	}
	if got := readFile(t, p); got != "0" {
		t.Errorf("oom_control after SetOOMHold(false) = %q, want 0", got)
	}
}

// fakeDomain opens the default 1 GiB domain on a fake kernel tree.
func fakeDomain(t *testing.T, l *Layout) *Domain {
	t.Helper()
	newFakeKernel(t)
	writeFiles(t, l.ProcRoot, map[string]string{"meminfo": meminfo})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := OpenDomain(ctx, l, "", 1<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
