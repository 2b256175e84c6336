package node

import (
	"context"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/controller"
)

func TestPlugin(t *testing.T) {
	ad := &fakeAdopter{paths: map[string]string{}, mem: map[string]cgroup.MemoryStats{}}
	live := &controller.LiveSet{}
	n := New(Config{Domain: "tenon-node", DomainHits: func() (int64, error) { return 0, nil }, Backend: ad,
		Policy: &fakePolicy{}, Live: live, Clock: clocktest.NewManual(time.Unix(0, 0))})
	p := plugin{n}
	ctx := context.Background()
	agentPod := &api.PodSandbox{Id: "p1", Name: "agent", Namespace: "ns", Annotations: map[string]string{AnnotationAgent: "true"}}
	plainPod := &api.PodSandbox{Id: "p2", Name: "web", Namespace: "ns"}

	adj, upd, err := p.CreateContainer(ctx, agentPod, &api.Container{Id: "c1", PodSandboxId: "p1", Name: "tool"})
	if err != nil || len(upd) != 0 || adj.GetLinux().GetCgroupsPath() != "/tenon-node/c1" {
		t.Fatalf("agent's CreateContainer = %v, %v, %v; want the cgroups path under the domain", adj, upd, err)
	}
	if adj, _, err := p.CreateContainer(ctx, plainPod, &api.Container{Id: "w1", PodSandboxId: "p2"}); adj != nil || err != nil {
		t.Errorf("plain pod's CreateContainer = %v, %v; want no adjustment", adj, err)
	}
	started := &api.Container{Id: "c1", PodSandboxId: "p1", Name: "tool", Linux: &api.LinuxContainer{CgroupsPath: "/tenon-node/c1"}}
	if err := p.StartContainer(ctx, agentPod, started); err != nil || live.Len() != 1 {
		t.Fatalf("StartContainer = %v with %d live, want adopted", err, live.Len())
	}
	if _, err := p.StopContainer(ctx, agentPod, started); err != nil || live.Len() != 0 {
		t.Fatalf("StopContainer = %v with %d live, want released", err, live.Len())
	}
	// A restart: Synchronize re-adopts running agent containers under the
	// domain, and nothing else.
	running := func(id, pod, path string) *api.Container {
		return &api.Container{Id: id, PodSandboxId: pod, Name: id, State: api.ContainerState_CONTAINER_RUNNING,
			Linux: &api.LinuxContainer{CgroupsPath: path}}
	}
	ctrs := []*api.Container{running("c2", "p1", "/tenon-node/c2"), running("w2", "p2", "/kubepods/pod2/w2"),
		{Id: "c3", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_STOPPED, Linux: &api.LinuxContainer{CgroupsPath: "/tenon-node/c3"}}}
	if _, err := p.Synchronize(ctx, []*api.PodSandbox{agentPod, plainPod}, ctrs); err != nil {
		t.Fatal(err)
	}
	if ls := live.List(); len(ls) != 1 || ls[0].Info.ID != "c2" {
		t.Errorf("after Synchronize: %+v, want c2 alone", ls)
	}
	if st := n.Status(); len(st) != 1 || st[0].Containers != 1 || st[0].Last != "re-adopted after a restart of tenon node" {
		t.Errorf("status = %+v", st)
	}
}
