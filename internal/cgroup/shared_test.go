package cgroup

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A shared domain left by an earlier owner keeps its children and tasks
// (the container runtime owns them): only its hold is disarmed and its
// tree thawed; Release leaves the group in place.
func TestOpenSharedDomainKeepsGroups(t *testing.T) {
	k := newFakeKernel(t)
	l := fakeDomainLayout(t)
	ctr := mustCreate(t, l, "tenon/ctr-1")
	fakeTasks(t, ctr, Memory, map[string][]int{"": {77}})
	writeFiles(t, ctr.dirs[Freezer], map[string]string{"freezer.state": "FROZEN\n"})
	domMem := filepath.Join(l.Controllers[Memory].Root, "tenon")
	writeFiles(t, domMem, map[string]string{"memory.oom_control": "oom_kill_disable 1\nunder_oom 0\noom_kill 0\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := OpenSharedDomain(ctx, l, "tenon", 1<<30, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if len(k.killed) != 0 {
		t.Errorf("killed %v, want no task killed", k.killed)
	}
	for _, ctl := range controllers {
		if _, err := os.Stat(filepath.Join(l.Controllers[ctl].Root, "tenon", "ctr-1")); err != nil {
			t.Errorf("child group gone from %s", ctl)
		}
	}
	if got := readFile(t, filepath.Join(ctr.dirs[Freezer], "freezer.state")); got != stateThawed {
		t.Errorf("child freezer.state = %q, want thawed", got)
	}
	if got := readFile(t, filepath.Join(domMem, "memory.oom_control")); got != "0" {
		t.Errorf("oom_control = %q, want the hold disarmed (0)", got)
	}
	if err := d.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(domMem); err != nil {
		t.Errorf("Release removed the domain: %v", err)
	}
}

func TestReleaseInheritedHold(t *testing.T) {
	l := fakeV1(t)
	g := mustCreate(t, l, "tenon/ctr")
	p := filepath.Join(g.dirs[Memory], "memory.oom_control")
	writeFiles(t, g.dirs[Memory], map[string]string{"memory.oom_control": "oom_kill_disable 1\nunder_oom 0\noom_kill 0\n"})
	held, err := ReleaseInheritedHold(g)
	if err != nil || !held {
		t.Fatalf("ReleaseInheritedHold = %v, %v; want true, nil", held, err)
	}
	if got := readFile(t, p); got != "0" {
		t.Errorf("oom_control = %q, want 0", got)
	}
	if held, err := ReleaseInheritedHold(g); err != nil || held {
		t.Errorf("second ReleaseInheritedHold = %v, %v; want false, nil", held, err)
	}
}
