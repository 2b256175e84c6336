package cgroup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeProc is a proc tree with a boot id and, per pid, a stat whose start
// time is the given ticks (this process's pid included).
func fakeProc(t *testing.T, boot string, starts map[int]uint64) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, filepath.Join(root, "sys", "kernel", "random"), map[string]string{"boot_id": boot + "\n"})
	for pid, st := range starts {
		// starttime is field 22; the name holds a space and a ')'.
		stat := strconv.Itoa(pid) + " (te non)) S" + strings.Repeat(" 0", 18) + " " + strconv.FormatUint(st, 10) + " 0 0\n"
		writeFiles(t, filepath.Join(root, strconv.Itoa(pid)), map[string]string{"stat": stat})
	}
	return root
}

func writeRecord(t *testing.T, path string, o Owner) {
	t.Helper()
	b, _ := json.Marshal(o)
	writeFiles(t, filepath.Dir(path), map[string]string{filepath.Base(path): string(b)})
}

// TestAcquireOwner: the lock holds the owner record; a second acquisition
// is refused naming the owner's pid; released, the file is gone and the
// next owner starts clean.
func TestAcquireOwner(t *testing.T) {
	proc := fakeProc(t, "boot-1", map[int]uint64{os.Getpid(): 777})
	path := filepath.Join(t.TempDir(), "locks", "d.lock")
	l, err := AcquireOwner(path, "workload domain \"d\"", proc, "tenon serve")
	if err != nil {
		t.Fatal(err)
	}
	var o Owner
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &o); err != nil || o.PID != os.Getpid() || o.BootID != "boot-1" || o.StartTicks != 777 || o.Command != "tenon serve" {
		t.Fatalf("owner record %s (%v)", b, err)
	}
	_, err = AcquireOwner(path, "workload domain \"d\"", proc, "tenon run")
	var inUse *InUseError
	if !errors.As(err, &inUse) || !errors.Is(err, ErrInUse) || inUse.Owner.PID != os.Getpid() {
		t.Fatalf("second AcquireOwner = %v, want an InUseError naming pid %d", err, os.Getpid())
	}
	if msg := err.Error(); !strings.Contains(msg, "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(msg, "tenon serve") {
		t.Errorf("error %q does not name the owner", msg)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after Release (%v)", err)
	}
	l2, err := AcquireOwner(path, "d", proc, "tenon serve")
	if err != nil || l2.Previous.PID != 0 {
		t.Fatalf("after Release: %v, previous %+v", err, l2.Previous)
	}
	l2.Release()
}

// TestAcquireOwnerStale: a record left by an owner that is gone (its pid
// dead, another boot, its pid reused) is taken over and reported as
// Previous; a record naming a live process on this boot is refused even
// when nobody holds the flock.
func TestAcquireOwnerStale(t *testing.T) {
	const other = 4242
	proc := fakeProc(t, "boot-1", map[int]uint64{os.Getpid(): 777, other: 100})
	tests := []struct {
		name  string
		rec   Owner
		taken bool
	}{
		{name: "pid dead", rec: Owner{PID: 99999999, BootID: "boot-1", StartTicks: 5}, taken: true},
		{name: "earlier boot", rec: Owner{PID: other, BootID: "boot-0", StartTicks: 100}, taken: true},
		{name: "pid reused", rec: Owner{PID: other, BootID: "boot-1", StartTicks: 99}, taken: true},
		{name: "owner alive", rec: Owner{PID: other, BootID: "boot-1", StartTicks: 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.lock")
			writeRecord(t, path, tc.rec)
			l, err := AcquireOwner(path, "d", proc, "tenon serve")
			if !tc.taken {
				var inUse *InUseError
				if !errors.As(err, &inUse) || inUse.Owner.PID != other {
					t.Fatalf("AcquireOwner = %v, want refused naming pid %d", err, other)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			if l.Previous.PID != tc.rec.PID {
				t.Errorf("Previous %+v, want pid %d", l.Previous, tc.rec.PID)
			}
		})
	}
}

// TestOpenDomainOwner: an open domain refuses a second opener by name and
// pid; closed, it opens again; a stale group whose owner died is adopted
// and the previous owner logged.
func TestOpenDomainOwner(t *testing.T) {
	newFakeKernel(t)
	l := fakeDomainLayout(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := OpenDomain(ctx, l, "tenon", 1<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = OpenDomain(ctx, l, "tenon", 1<<30, nil)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), `workload domain "tenon"`) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second OpenDomain = %v, want ErrInUse naming the domain and pid", err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, l, "tenon/sb-old")
	writeRecord(t, domainLockPath(l, "tenon"), Owner{PID: 99999999, BootID: "gone", Command: "tenon run"})
	var logs bytes.Buffer
	d, err = OpenDomain(ctx, l, "tenon", 1<<30, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("OpenDomain over a dead owner's domain: %v", err)
	}
	defer d.Close(ctx)
	if s := logs.String(); !strings.Contains(s, "previous owner is gone") || !strings.Contains(s, "pid=99999999") || !strings.Contains(s, "adopted stale workload domain") {
		t.Errorf("adoption of a dead owner's domain not logged: %s", s)
	}
}

// TestOpenDomainNested: a domain above or below one a live process owns
// is refused (opening it would adopt the live domain's group or take its
// children), as is another spelling of the same name ("tenon/.",
// "./tenon" take tenon's lock); a dead owner's nested lock or a domain
// whose name merely starts alike does not stop it.
func TestOpenDomainNested(t *testing.T) {
	newFakeKernel(t)
	const other = 4242
	l := fakeDomainLayout(t)
	writeFiles(t, filepath.Join(l.ProcRoot, "sys", "kernel", "random"), map[string]string{"boot_id": "boot-1\n"})
	stat := strconv.Itoa(other) + " (tenon) S" + strings.Repeat(" 0", 18) + " 100 0 0\n"
	writeFiles(t, filepath.Join(l.ProcRoot, strconv.Itoa(other)), map[string]string{"stat": stat})
	live := Owner{PID: other, BootID: "boot-1", StartTicks: 100, Command: "tenon serve"}
	dead := Owner{PID: 99999999, BootID: "boot-1", StartTicks: 5, Command: "tenon run"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tests := []struct {
		name    string
		owned   string // the domain whose lock holds rec
		rec     Owner
		open    string
		refused bool
	}{
		{name: "parent of a live domain", owned: "tenon/x", rec: live, open: "tenon", refused: true},
		{name: "child of a live domain", owned: "tenon", rec: live, open: "tenon/x", refused: true},
		{name: "the same name spelled tenon/.", owned: "tenon", rec: live, open: "tenon/.", refused: true},
		{name: "the same name spelled ./tenon", owned: "tenon", rec: live, open: "./tenon", refused: true},
		{name: "parent of a dead owner's domain", owned: "tenon/x", rec: dead, open: "tenon"},
		{name: "a live domain whose name starts alike", owned: "tenonx", rec: live, open: "tenon"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := domainLockPath(l, tc.owned)
			writeRecord(t, path, tc.rec)
			defer os.Remove(path)
			mustCreate(t, l, "tenon/sb-live")
			d, err := OpenDomain(ctx, l, tc.open, 1<<30, nil)
			if !tc.refused {
				if err != nil {
					t.Fatalf("OpenDomain(%q) = %v, want it opened", tc.open, err)
				}
				if err := d.Close(ctx); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				d.Close(ctx)
				t.Fatalf("OpenDomain(%q) beside live %q opened, want refused", tc.open, tc.owned)
			}
			if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(other)) {
				t.Fatalf("OpenDomain(%q) = %v, want ErrInUse naming pid %d", tc.open, err, other)
			}
			if _, err := Open(l, "tenon/sb-live"); err != nil {
				t.Errorf("the live domain's sandbox group is gone after the refusal: %v", err)
			}
		})
	}
}
