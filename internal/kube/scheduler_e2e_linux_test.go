package kube

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/kube/kubetest"
	"github.com/tenon-dev/tenon/internal/policy"
)

// slotNode is a node of the scheduler test: its agent slots come from a
// node state through policy.AgentSlots (pacing's headroom, the agents'
// predicted first peak and floor), which its Publisher publishes.
type slotNode struct {
	name     string
	headroom atomic.Int64 // pacing's headroom, bytes
	pub      *Publisher
}

// slots is the node's agent slots: one agent running, a new one's first
// peak 256 MiB and floor 128 MiB: 0 slots below 384 MiB of headroom (its
// first peak and its floor), then
// one more per 128 MiB.
func (n *slotNode) slots() int {
	return policy.AgentSlots(policy.SlotsInput{Headroom: n.headroom.Load(), Need: 256 << 20, Floor: 128 << 20, Active: 1})
}

// agentPod is a pod of namespace agents that requests one agent slot and
// names no node: the scheduler places it.
func agentPod(name string) map[string]any {
	one := map[string]string{SlotsResource: "1"}
	return map[string]any{
		"metadata": map[string]any{"name": name, "annotations": map[string]string{"tenon.dev/agent": "true"}},
		"spec": map[string]any{"containers": []map[string]any{{"name": "agent", "image": "agent:e2e",
			"resources": map[string]any{"requests": one, "limits": one}}}},
	}
}

// scheduled is what the test reads of a pod: its node and the reason of
// its PodScheduled condition when that is False.
func scheduled(t *testing.T, a *kubetest.Admin, name string) (node, unschedulable string) {
	t.Helper()
	var p struct {
		Spec   struct{ NodeName string }
		Status struct {
			Conditions []struct{ Type, Status, Reason string }
		}
	}
	if err := a.Get("/api/v1/namespaces/agents/pods/"+name, &p); err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == "PodScheduled" && c.Status == "False" {
			unschedulable = c.Reason
		}
	}
	return p.Spec.NodeName, unschedulable
}

// TestSchedulerE2E runs the default scheduler (kube-scheduler, built from
// the same k8s.io/kubernetes as the API server) over two nodes whose agent
// slots tenon's Publisher publishes from each node's state: agent pods
// that request tenon.dev/agent-slots: 1 are bound only to the node with
// slots and only as many as it has; when every node publishes 0, a new
// agent pod stays Pending (Unschedulable) and is bound as soon as a node
// publishes a slot again. It logs the time from that publication (the
// API server's answer to the status patch) to the pod bound, per round.
func TestSchedulerE2E(t *testing.T) {
	assets := kubetest.Assets(t)
	kubetest.Binary(t, assets, "kube-scheduler")
	cp := kubetest.StartControlPlane(t, assets)
	adm := kubetest.NewAdmin(t, cp)
	kubetest.SetUp(t, adm, assets, "testdata", "node-a", "agents")
	adm.CreateJSON("/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": "node-b"}})
	nc, err := NewClient(Config{Server: cp.Server, CAFile: cp.CAFile, TokenFile: cp.NodeTokenFile})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nodes := []*slotNode{{name: "node-a"}, {name: "node-b"}}
	barriers := 0
	// lower publishes n's state and returns once the scheduler has seen
	// it: the scheduler's pod and node watches are separate streams, so a
	// pod deleted after the publication may reach it first and free a
	// slot the publication took away. A label set after the publication
	// and a pod placed by it (requesting no slot) are the barrier: the
	// node's watch delivers the label after the publication.
	lower := func(n *slotNode) {
		n.pub.Sync(ctx)
		barriers++
		b := fmt.Sprint("barrier-", barriers)
		adm.Patch("/api/v1/nodes/"+n.name, map[string]any{"metadata": map[string]any{"labels": map[string]string{"tenon.dev/e2e-barrier": b}}})
		adm.CreateJSON("/api/v1/namespaces/agents/pods", map[string]any{
			"metadata": map[string]any{"name": b},
			"spec": map[string]any{"nodeSelector": map[string]string{"tenon.dev/e2e-barrier": b},
				"containers": []map[string]any{{"name": "barrier", "image": "agent:e2e"}}},
		})
		kubetest.WaitFor(t, b+" bound to "+n.name, time.Minute, func() bool { got, _ := scheduled(t, adm, b); return got == n.name })
		if err := adm.Do(ctx, http.MethodDelete, "/api/v1/namespaces/agents/pods/"+b+"?gracePeriodSeconds=0", "", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	nodes[0].headroom.Store(640 << 20) // 3 slots
	for _, n := range nodes {
		// What a kubelet reports of an empty node (the scheduler fits pods
		// by allocatable pods, cpu and memory too), and the not-ready
		// taint the API server put on the new node taken off, as the node
		// lifecycle controller does once the node is Ready.
		adm.Patch("/api/v1/nodes/"+n.name, map[string]any{"spec": map[string]any{"taints": nil}})
		adm.Patch("/api/v1/nodes/"+n.name+"/status", map[string]any{"status": map[string]any{
			"capacity":    map[string]string{"cpu": "2", "memory": "8Gi", "pods": "110"},
			"allocatable": map[string]string{"cpu": "2", "memory": "8Gi", "pods": "110"},
			"conditions":  []map[string]string{{"type": "Ready", "status": "True", "reason": "KubeletReady"}}}})
		n.pub = NewPublisher(PublisherConfig{Node: n.name, Status: nc, Slots: n.slots})
		n.pub.Sync(ctx)
		if got, ok := n.pub.Published(); !ok || got != n.slots() {
			t.Fatalf("%s: published %d (%v), want %d", n.name, got, ok, n.slots())
		}
	}
	if a, b := nodes[0].slots(), nodes[1].slots(); a != 3 || b != 0 {
		t.Fatalf("node states give %d and %d slots, want 3 and 0", a, b)
	}
	kubetest.StartScheduler(t, assets, cp)

	// Three agents fit on node-a, none on node-b; the fourth (whichever
	// the scheduler tries last) waits.
	agents := []string{"agent-1", "agent-2", "agent-3", "agent-4"}
	for _, name := range agents {
		adm.CreateJSON("/api/v1/namespaces/agents/pods", agentPod(name))
	}
	var bound map[string]string
	var waiting []string
	kubetest.WaitFor(t, "3 agents bound and 1 Unschedulable", time.Minute, func() bool {
		bound, waiting = map[string]string{}, nil
		for _, name := range agents {
			switch n, why := scheduled(t, adm, name); {
			case n != "":
				bound[name] = n
			case why == "Unschedulable":
				waiting = append(waiting, name)
			}
		}
		return len(bound)+len(waiting) == len(agents) && len(bound) >= 3
	})
	for name, n := range bound {
		if n != "node-a" {
			t.Errorf("%s bound to %s, want node-a (node-b publishes 0 slots)", name, n)
		}
	}
	if len(waiting) != 1 {
		t.Fatalf("bound %v, waiting %v: want 3 bound to node-a and 1 waiting (node-a's 3 slots taken, node-b has 0)", bound, waiting)
	}
	time.Sleep(300 * time.Millisecond) // it stays so
	if n, _ := scheduled(t, adm, waiting[0]); n != "" {
		t.Fatalf("%s bound to %s with no slot left", waiting[0], n)
	}

	// Every node publishes 0: a new agent stays Pending until a node
	// publishes a slot again.
	del := func(name string) {
		if err := adm.Do(ctx, http.MethodDelete, "/api/v1/namespaces/agents/pods/"+name+"?gracePeriodSeconds=0", "", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range agents {
		del(name)
	}
	nodes[0].headroom.Store(0)
	lower(nodes[0])
	const rounds = 5
	var took []time.Duration
	for i := range rounds {
		name := "round-" + string(rune('a'+i))
		adm.CreateJSON("/api/v1/namespaces/agents/pods", agentPod(name))
		kubetest.WaitFor(t, name+" Unschedulable (every node publishes 0)", time.Minute, func() bool {
			n, why := scheduled(t, adm, name)
			if n != "" {
				t.Fatalf("%s bound to %s while every node publishes 0 slots", name, n)
			}
			return why == "Unschedulable"
		})
		time.Sleep(300 * time.Millisecond) // it stays so
		if n, _ := scheduled(t, adm, name); n != "" {
			t.Fatalf("%s bound to %s while every node publishes 0 slots", name, n)
		}
		back := nodes[i%2]
		back.headroom.Store(384 << 20) // 1 slot
		back.pub.Sync(ctx)
		published := time.Now()
		if got, _ := back.pub.Published(); got != 1 {
			t.Fatalf("%s published %d, want 1", back.name, got)
		}
		kubetest.WaitFor(t, name+" bound once "+back.name+" has a slot", time.Minute, func() bool { n, _ := scheduled(t, adm, name); return n != "" })
		took = append(took, time.Since(published))
		if n, _ := scheduled(t, adm, name); n != back.name {
			t.Errorf("%s bound to %s, want %s (the only node with a slot)", name, n, back.name)
		}
		del(name)
		back.headroom.Store(0)
		lower(back)
		t.Logf("round %d: slot published on %s to %s bound: %v", i+1, back.name, name, took[i].Round(time.Millisecond))
	}
	slices.Sort(took)
	t.Logf("slot published to pod bound, %d rounds: median %v, min %v, max %v", rounds,
		took[rounds/2].Round(time.Millisecond), took[0].Round(time.Millisecond), took[rounds-1].Round(time.Millisecond))
}
