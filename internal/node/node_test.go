package node

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/controller/controllertest"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// fakeAdopter holds adopted paths and memory readings set by the test.
type fakeAdopter struct {
	mu      sync.Mutex
	paths   map[string]string
	mem     map[string]cgroup.MemoryStats
	removed []string
}

func (f *fakeAdopter) Add(id, path string, labels map[string]string) (sandbox.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paths[id] = path
	return sandbox.Info{ID: id, CgroupPath: path, Labels: labels}, nil
}

func (f *fakeAdopter) Remove(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.paths, id)
	f.removed = append(f.removed, id)
	return nil
}

func (f *fakeAdopter) Memory(id string) (cgroup.MemoryStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.paths[id]; !ok {
		return cgroup.MemoryStats{}, sandbox.ErrNotFound
	}
	return f.mem[id], nil
}

func (f *fakeAdopter) set(id string, m cgroup.MemoryStats) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mem[id] = m
}

// fakePolicy records SandboxUp and SandboxDown.
type fakePolicy struct {
	controllertest.Nop
	up, down []string
}

func (p *fakePolicy) Name() string                                     { return "fake" }
func (p *fakePolicy) SandboxUp(_ *controller.Agent, info sandbox.Info) { p.up = append(p.up, info.ID) }
func (p *fakePolicy) SandboxDown(_ *controller.Agent, id string)       { p.down = append(p.down, id) }

type collect struct {
	mu   sync.Mutex
	reps []Report
}

func (c *collect) Report(r Report) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reps = append(c.reps, r)
}

func (c *collect) kinds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.reps {
		out = append(out, r.Kind+":"+string(r.Cause))
	}
	return out
}

func TestNodeLifecycle(t *testing.T) {
	clk := clocktest.NewManual(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	ad := &fakeAdopter{paths: map[string]string{}, mem: map[string]cgroup.MemoryStats{}}
	pol := &fakePolicy{}
	live := &controller.LiveSet{}
	rep := &collect{}
	var domHits int64
	n := New(Config{Domain: "tenon-node", DomainHits: func() (int64, error) { return domHits, nil },
		Backend: ad, Policy: pol, Live: live, Reporter: rep, Clock: clk})
	pod := PodRef{Namespace: "ns", Name: "agent-1", UID: "u1"}
	agent := map[string]string{AnnotationAgent: "true"}

	if _, ok := n.Create(PodRef{Namespace: "ns", Name: "web"}, nil, "web1"); ok {
		t.Error("a pod without the annotation was moved")
	}
	if err := n.Start(PodRef{Namespace: "ns", Name: "web"}, "c", "web1", "/kubepods/pod2/web1"); err != nil || live.Len() != 0 {
		t.Errorf("a container outside the domain was adopted (%v, %d live)", err, live.Len())
	}
	path, ok := n.Create(pod, agent, "c1")
	if !ok || path != "/tenon-node/c1" {
		t.Fatalf("Create = %q, %v", path, ok)
	}
	clk.Advance(150 * time.Millisecond)
	if err := n.Start(pod, "tool", "c1", path); err != nil {
		t.Fatal(err)
	}
	ls := live.List()
	if len(ls) != 1 || ls[0].Info.ID != "c1" || !ls[0].Running || ad.paths["c1"] != "tenon-node/c1" || len(pol.up) != 1 {
		t.Fatalf("after Start: live %+v, adopted %v, policy up %v", ls, ad.paths, pol.up)
	}
	if r := rep.reps[0]; r.Kind != KindAdopted || r.Took != 150*time.Millisecond || r.Pod != pod {
		t.Errorf("adoption report = %+v, want adopted after 150ms", r)
	}

	// The gate's first allow is not news; a pause and the thaw after it are.
	n.Emit(controller.Event{Kind: controller.EventResume, Sandbox: "c1", Reason: "gate allow (green)"})
	n.Emit(controller.Event{Kind: controller.EventPause, Sandbox: "c1", Reason: "gate deny (yellow)"})
	n.Emit(controller.Event{Kind: controller.EventResume, Sandbox: "c1", Reason: "gate allow (green)"})
	n.Emit(controller.Event{Kind: controller.EventPause, Sandbox: "other", Reason: "gate deny (yellow)"})

	// A kill at its own limit (the peak reaches it), then one at the
	// budget after the hold's release.
	ad.set("c1", cgroup.MemoryStats{Limit: 64 << 20, Peak: 64 << 20, OOMKills: 1})
	clk.Advance(100 * time.Millisecond)
	n.checkOOM()
	clk.Advance(2 * HitWindow)
	domHits = 10
	n.checkOOM()
	n.Emit(controller.Event{Kind: controller.EventHold, Reason: holdReleased})
	ad.set("c1", cgroup.MemoryStats{Limit: 64 << 20, Peak: 64 << 20, OOMKills: 2})
	clk.Advance(100 * time.Millisecond)
	n.checkOOM()

	if err := n.Stop(context.Background(), "c1", "stopped by the runtime"); err != nil {
		t.Fatal(err)
	}
	if live.Len() != 0 || len(ad.removed) != 1 || len(pol.down) != 1 {
		t.Errorf("after Stop: %d live, removed %v, policy down %v", live.Len(), ad.removed, pol.down)
	}
	want := []string{"adopted:", "paused:", "resumed:", "oom_killed:container-limit", "oom_killed:node-budget", "released:"}
	got := rep.kinds()
	if len(got) != len(want) {
		t.Fatalf("reports %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("report %d = %s, want %s (all: %v)", i, got[i], want[i], got)
		}
	}
	if r := rep.reps[4]; r.Reason != CauseNodeBudget.Reason(true) {
		t.Errorf("budget kill reason = %q, want the hold's release named", r.Reason)
	}
	st := n.Status()
	if len(st) != 1 || st[0].Paused != 1 || st[0].OOMKills[CauseContainerLimit] != 1 || st[0].OOMKills[CauseNodeBudget] != 1 || st[0].Containers != 0 {
		t.Errorf("status = %+v", st)
	}
}
