package cgroup

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLiveOOMHold: under v1's hold (oom_kill_disable) a task allocating
// past the domain's limit waits instead of being killed; releasing the
// hold lets the OOM killer act. TestLiveOOMHoldV2 is v2's.
func TestLiveOOMHold(t *testing.T) {
	l := liveLayout(t)
	if m, _ := l.Controller(Memory); m.Version != V1 {
		t.Skip("v1's OOM hold needs the cgroup v1 memory controller's memory.oom_control (TestLiveOOMHoldV2 covers v2)")
	}
	d := liveDomain(t, l, "-hold", 64<<20)
	if err := d.SetOOMHold(true); errors.Is(err, ErrNoOOMHold) {
		t.Skip("OOM hold needs the cgroup v1 memory controller's memory.oom_control")
	} else if err != nil {
		t.Fatalf("SetOOMHold: %v", err)
	}
	if err := d.DisableSwap(); err != nil {
		t.Fatalf("DisableSwap: %v", err)
	}
	g, err := d.Child("held")
	if err != nil {
		t.Fatalf("Child: %v", err)
	}
	h := startHelper(t, g, 100, false)
	deadline := time.Now().Add(20 * time.Second)
	for {
		under, err := d.UnderOOM()
		if err != nil {
			t.Fatalf("UnderOOM: %v", err)
		}
		if under {
			break
		}
		select {
		case <-h.done:
			t.Fatalf("helper allocating 100 MiB in a held 64 MiB domain exited: %v", h.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("domain never reported under_oom while a helper allocated past its limit")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// v1 counts a kill in the victim's own group.
	m, err := g.Memory()
	if err != nil {
		t.Fatalf("Memory: %v", err)
	}
	if m.OOMKills != 0 {
		t.Fatalf("OOMKills = %d under a hold, want 0", m.OOMKills)
	}
	select {
	case <-h.done:
		t.Fatalf("held helper exited: %v", h.err)
	case <-time.After(200 * time.Millisecond):
	}
	// A task in the OOM wait cannot freeze; Freeze accepts FREEZING then.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Freeze(ctx); err != nil {
		t.Fatalf("Freeze of a group waiting under the hold: %v", err)
	}
	if err := g.Thaw(ctx); err != nil {
		t.Fatalf("Thaw: %v", err)
	}
	if err := d.SetOOMHold(false); err != nil {
		t.Fatalf("releasing the hold: %v", err)
	}
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		t.Fatal("helper still alive 10 s after the hold was released")
	}
	if m, err = g.Memory(); err != nil {
		t.Fatalf("Memory: %v", err)
	}
	if m.OOMKills < 1 {
		t.Errorf("OOMKills = %d after releasing the hold, want >= 1 (helper exit: %v)", m.OOMKills, h.err)
	}
}
