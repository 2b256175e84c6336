//go:build linux

package managed

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/anchortest"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/swap"
)

// TestLivePageOutTier runs the page-out tier end to end on the process
// backend with zram swap on: an agent whose sandbox keeps a 64 MiB
// background process (not restart-safe) is paged out under red pressure,
// not torn down, and its next action pages it in and finds the process.
func TestLivePageOutTier(t *testing.T) {
	anchortest.Swap(t, 512<<20, "live residency page-out test")
	e := newLiveEnv(t)
	b := e.backend()
	n := newNotes()
	var p pressureVar
	var mu sync.Mutex
	var events []residency.Event
	m, err := NewManager(Config{StateDir: e.resDir(), TimeScale: 0.001, Residency: residency.Config{
		ManualReclaim: true,
		Sink:          func(ev residency.Event) { mu.Lock(); events = append(events, ev); mu.Unlock() },
	}}, n.host(b, "po"), p.get, e.log)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	of := func(k residency.EventKind) []residency.Event {
		mu.Lock()
		defer mu.Unlock()
		var out []residency.Event
		for _, ev := range events {
			if ev.Kind == k {
				out = append(out, ev)
			}
		}
		return out
	}

	a := agent("pinned", 4)
	_, id := act(t, m, b, a, 0, "/usr/local/bin/tenon tool mem --peak 64MiB --ramp 0 --hold forever >/dev/null 2>&1 </dev/null &")
	act(t, m, b, a, 1, "sleep 1") // the holder is at its peak at this boundary
	before, err := b.Stats(lctx(t), id)
	if err != nil {
		t.Fatal(err)
	}

	p.set(residency.Red)
	ds := m.Residency().Tick()
	m.Residency().Wait()
	if len(ds) != 1 || ds[0].Kind != policy.ReclaimPageOut {
		t.Fatalf("decisions under red = %+v, want one page-out", ds)
	}
	outs := of(residency.EventPageOut)
	if len(outs) != 1 {
		t.Fatalf("page_out events = %+v (failures: %+v)", outs, of(residency.EventPageOutFailed))
	}
	after, err := b.Stats(lctx(t), id)
	if err != nil {
		t.Fatalf("sandbox %s after page-out: %v", id, err)
	}
	t.Logf("decision frees %d MiB of a %d MiB working set; page-out %v: %d MiB paged out, %d MiB freed; working set %d -> %d MiB",
		ds[0].Frees>>20, ds[0].WorkingSet>>20, outs[0].Duration, outs[0].Bytes>>20, outs[0].Freed>>20, before.WorkingSet>>20, after.WorkingSet>>20)
	if outs[0].Bytes < 48<<20 || after.WorkingSet > before.WorkingSet/2 {
		t.Errorf("page-out moved %d MiB and left a working set of %d of %d MiB", outs[0].Bytes>>20, after.WorkingSet>>20, before.WorkingSet>>20)
	}

	// The compressed copy is charged honestly: the domain's swapped bytes
	// at zram's ratio (replay.CgroupDomain.Available subtracts it).
	dm, err := e.dom.Group().Memory()
	if err != nil {
		t.Fatal(err)
	}
	mm, ok, err := swap.NewManager(nil).MMStat()
	if !ok || err != nil {
		t.Fatalf("zram mm_stat: %v, %v", ok, err)
	}
	cost := mm.Cost(dm.Swap)
	t.Logf("domain swap %d MiB; zram orig %d MiB, compressed %d MiB, used %d MiB; charged %d MiB",
		dm.Swap>>20, mm.OrigDataSize>>20, mm.ComprDataSize>>20, mm.MemUsedTotal>>20, cost>>20)
	if dm.Swap < 48<<20 || cost <= 0 || cost >= dm.Swap {
		t.Errorf("domain swap %d MiB charged %d MiB, want 0 < charge < swap >= 48 MiB", dm.Swap>>20, cost>>20)
	}

	p.set(residency.Yellow) // a demand page-in may run
	start := time.Now()
	out, id2 := act(t, m, b, a, 2, "ps -e -o comm= 2>/dev/null || ls /proc")
	ins := of(residency.EventPageIn)
	for _, in := range ins {
		t.Logf("page-in (%s) %v: %d MiB faulted back; the action after it returned in %v", in.Reason, in.Duration, in.Bytes>>20, time.Since(start))
	}
	if id2 != id {
		t.Errorf("the agent's sandbox changed from %s to %s", id, id2)
	}
	if len(ins) != 1 || ins[0].Bytes < 48<<20 {
		t.Errorf("page_in events = %+v, want one of at least 48 MiB", ins)
	}
	if ps, err := b.Procs(lctx(t), id); err != nil || len(ps) != 1 {
		t.Errorf("after page-in the sandbox holds %+v, %v; want the holder", ps, err)
	}
	if out == "" || strings.Contains(out, "frozen") {
		t.Errorf("action output %q", out)
	}
}

// TestLiveWaitPagesOut is the daemon's path on the process backend with
// zram swap on, in green pressure: a boundary with no predicted wait keeps
// the sandbox; the begin of a model wait predicted long enough pages it
// out (it keeps a 64 MiB background process, so it is not restart-safe);
// the end of the wait pages it back in (Prefetch), and the next action
// finds its files and its process.
func TestLiveWaitPagesOut(t *testing.T) {
	anchortest.Swap(t, 512<<20, "live wait page-out test")
	e := newLiveEnv(t)
	b := e.backend()
	n := newNotes()
	var p pressureVar // green
	var mu sync.Mutex
	var events []residency.Event
	m, err := NewManager(Config{StateDir: e.resDir(), Residency: residency.Config{
		Sink: func(ev residency.Event) { mu.Lock(); events = append(events, ev); mu.Unlock() },
	}}, n.host(b, "wt"), p.get, e.log)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	count := func(k residency.EventKind) int {
		mu.Lock()
		defer mu.Unlock()
		c := 0
		for _, ev := range events {
			if ev.Kind == k {
				c++
			}
		}
		return c
	}

	a := agent("waiter", 4)
	for i := range a.Workflow.Actions {
		a.Workflow.Actions[i].Wait = 0 // a daemon's agent: no recorded waits
	}
	act(t, m, b, a, 0, "echo kept > /workspace/note.txt && echo tmp > /tmp/t.txt")
	_, id := act(t, m, b, a, 1, "/usr/local/bin/tenon tool mem --peak 64MiB --ramp 0 --hold forever >/dev/null 2>&1 </dev/null &")
	act(t, m, b, a, 2, "sleep 1") // the holder is at its peak at this boundary
	m.Residency().Wait()
	if m.PagedOut(a.ID) || count(residency.EventPageOut) != 0 {
		t.Fatal("green with no predicted wait: the sandbox was paged out at the boundary")
	}

	m.WaitBegin(a, 30*time.Second)
	m.Residency().Wait()
	if !m.PagedOut(a.ID) || count(residency.EventPageOut) != 1 {
		t.Fatalf("after a 30 s wait began: paged out %v, %d page_out events (failures %d)",
			m.PagedOut(a.ID), count(residency.EventPageOut), count(residency.EventPageOutFailed))
	}
	st, err := b.Stats(lctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("paged out: working set %d MiB", st.WorkingSet>>20)

	m.WaitEnd(a)
	m.Residency().Wait()
	if m.PagedOut(a.ID) || count(residency.EventPageIn) != 1 {
		t.Fatalf("after the wait ended: paged out %v, %d page_in events", m.PagedOut(a.ID), count(residency.EventPageIn))
	}
	out, id2 := act(t, m, b, a, 3, "cat /workspace/note.txt /tmp/t.txt")
	if id2 != id || out != "kept\ntmp\n" {
		t.Errorf("next action in %s (was %s) read %q, want the same sandbox and both files", id2, id, out)
	}
	if ps, err := b.Procs(lctx(t), id); err != nil || len(ps) != 1 {
		t.Errorf("after the page-in the sandbox holds %+v, %v; want the holder", ps, err)
	}
}
