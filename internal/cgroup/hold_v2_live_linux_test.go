package cgroup

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestLiveOOMHoldV2: under v2's hold (memory.high at HoldHigh, just below
// memory.max) a task allocating past the domain's budget is throttled, not
// killed, and the domain reports it waiting; releasing the hold lets the
// OOM killer act, and with memory.oom.group set on the task's group the
// kill takes every task of that group.
func TestLiveOOMHoldV2(t *testing.T) {
	l := liveLayout(t)
	if m, _ := l.Controller(Memory); m.Version != V2 {
		t.Skip("v2's OOM hold needs the cgroup v2 memory controller (TestLiveOOMHold covers v1)")
	}
	const budget = 256 << 20
	d := liveDomain(t, l, "-hold2", budget)
	if err := d.DisableSwap(); err != nil {
		t.Fatalf("DisableSwap: %v", err)
	}
	if err := d.SetOOMHold(true); err != nil {
		t.Fatalf("SetOOMHold: %v", err)
	}
	memDir, _, _ := d.group.dir(Memory)
	_, psiErr := readPressure(filepath.Join(memDir, "memory.pressure"))
	t.Logf("memory.high %s; stall signal: PSI available: %v", readFileT(t, filepath.Join(memDir, "memory.high")), psiErr == nil)
	g, err := d.Child("held")
	if err != nil {
		t.Fatalf("Child: %v", err)
	}
	if err := g.SetOOMGroup(true); err != nil {
		t.Fatalf("SetOOMGroup: %v", err)
	}
	bystander := startHelper(t, g, 1, true)
	h := startHelper(t, g, 400, false)

	start := time.Now()
	deadline := start.Add(30 * time.Second)
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
			t.Fatalf("helper allocating 400 MiB in a held 256 MiB domain exited before the domain reported waiting: %v", h.err)
		default:
		}
		if time.Now().After(deadline) {
			m, _ := g.Memory()
			t.Fatalf("domain never reported waiting while a helper allocated past its budget (usage %d MiB)", m.Usage>>20)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m0, err := d.group.Memory()
	if err != nil {
		t.Fatalf("Memory: %v", err)
	}
	t.Logf("waiting after %s at %d MiB (line %d MiB)", time.Since(start).Round(time.Millisecond), m0.Usage>>20, HoldHigh(budget)>>20)
	// Held: a second later the helper is alive, unkilled and below the
	// budget, however little it grew.
	select {
	case <-h.done:
		t.Fatalf("held helper exited: %v", h.err)
	case <-time.After(time.Second):
	}
	m1, err := d.group.Memory()
	if err != nil {
		t.Fatalf("Memory: %v", err)
	}
	t.Logf("one second later: %d MiB (grew %d KiB/s under throttling)", m1.Usage>>20, (m1.Usage-m0.Usage)>>10)
	if m1.OOMKills != 0 {
		t.Fatalf("OOMKills = %d under the hold, want 0", m1.OOMKills)
	}
	if under, err := d.UnderOOM(); err != nil || !under {
		t.Errorf("UnderOOM a second into the wait = %v, %v; want true", under, err)
	}
	// A throttled task freezes once its sleep ends (at most 2 s).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Freeze(ctx); err != nil {
		t.Fatalf("Freeze of a group throttled under the hold: %v", err)
	}
	if err := g.Thaw(ctx); err != nil {
		t.Fatalf("Thaw: %v", err)
	}
	if err := d.SetOOMHold(false); err != nil {
		t.Fatalf("releasing the hold: %v", err)
	}
	for _, p := range []*helperProc{h, bystander} {
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			t.Fatalf("helper %d still alive 15 s after the hold was released (memory.oom.group kills the whole group)", p.pid)
		}
	}
	m2, err := g.Memory()
	if err != nil {
		t.Fatalf("Memory: %v", err)
	}
	if m2.OOMKills < 1 {
		t.Errorf("OOMKills = %d after releasing the hold, want >= 1 (helper exit: %v)", m2.OOMKills, h.err)
	}
	ev, _ := readFlatKeyed(filepath.Join(memDir, "memory.events"))
	t.Logf("after release: oom_kill %d, domain memory.events %v", m2.OOMKills, ev)
}

func readFileT(t *testing.T, p string) string {
	t.Helper()
	s, err := readString(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
