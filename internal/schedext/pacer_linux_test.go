//go:build linux && amd64

package schedext

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fakeDenier records the scheduler calls CgroupPacer makes.
type fakeDenier struct {
	denied   map[uint64]float64
	allowErr error
}

func (f *fakeDenier) Deny(id uint64, rate float64) error { f.denied[id] = rate; return nil }
func (f *fakeDenier) Allow(id uint64) error {
	if f.allowErr != nil {
		return f.allowErr
	}
	delete(f.denied, id)
	return nil
}
func (f *fakeDenier) Enabled() bool { return true }

// TestCgroupPacer: Deny keys the cgroup by its directory's inode, Allow
// releases that id even after the directory is gone, and a cgroup never
// denied or without a directory is handled without touching the
// scheduler.
func TestCgroupPacer(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "tenon", "sb-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := CgroupID(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeDenier{denied: map[uint64]float64{}}
	p := newCgroupPacer(f, root)
	if err := p.Deny("tenon/sb-1", 0.05); err != nil {
		t.Fatal(err)
	}
	if f.denied[id] != 0.05 {
		t.Fatalf("scheduler denied %v, want id %d at 0.05", f.denied, id)
	}
	if err := p.Deny("tenon/gone", 0.05); err == nil {
		t.Error("pacing a cgroup without a directory: no error")
	}
	if err := p.Allow("tenon/never"); err != nil {
		t.Errorf("allowing a cgroup never denied: %v", err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	f.allowErr = errors.New("map busy")
	if err := p.Allow("tenon/sb-1"); err == nil {
		t.Error("a scheduler error was not returned")
	}
	f.allowErr = nil
	if err := p.Allow("tenon/sb-1"); err != nil || len(f.denied) != 0 {
		t.Errorf("allow after the directory went: %v, scheduler denied %v; want released", err, f.denied)
	}
	if p.Name() != "schedext" || !p.Enabled() {
		t.Errorf("name %q enabled %v", p.Name(), p.Enabled())
	}
}
