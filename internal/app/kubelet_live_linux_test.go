package app

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/tenon-dev/tenon/internal/kube"
	"github.com/tenon-dev/tenon/internal/kube/kubetest"
	"github.com/tenon-dev/tenon/internal/node/containerdtest"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestLiveKubelet runs one agent pod end to end on a real node: tenon
// node (--policy tenon, with the node agent's RBAC) publishes the node's
// agent slots from its own state; the default scheduler (kube-scheduler
// v1.37.2) binds the agent pod, which requests one slot, to that node; a
// real kubelet (v1.37.2) runs it through the test's containerd and reports
// it Running and Ready; its agent container is adopted by tenon node
// through NRI (its cgroup under the workload domain, the pause container's
// under the kubelet's pod cgroup); its deletion stops it.
func TestLiveKubelet(t *testing.T) {
	assets := kubetest.Assets(t)
	kubetest.Binary(t, assets, "kubelet")
	kubetest.Binary(t, assets, "kube-scheduler")
	layout, domain, d := startContainerd(t, "a real kubelet")
	cp := kubetest.StartControlPlane(t, assets)
	adm := kubetest.NewAdmin(t, cp)
	const nodeName = "tenon-kubelet-node"
	kubetest.SetUp(t, adm, assets, "../kube/testdata", nodeName, "agents")
	kubetest.StartKubelet(t, assets, cp, nodeName, d.Socket, d.CgroupParent)
	kubetest.StartScheduler(t, assets, cp)
	startNode(t, d, NodeConfig{Domain: domain, Budget: 256 * units.MiB, Policy: "tenon", StateDir: t.TempDir(),
		Kube: &kube.Config{Server: cp.Server, CAFile: cp.CAFile, TokenFile: cp.NodeTokenFile}, NodeName: nodeName, KubePoll: 100 * time.Millisecond})
	var n struct {
		Status struct{ Allocatable map[string]string }
	}
	kubetest.WaitFor(t, "the node registered by the kubelet, with agent slots published by tenon node", 2*time.Minute, func() bool {
		if err := adm.Get("/api/v1/nodes/"+nodeName, &n); err != nil {
			t.Fatal(err)
		}
		return n.Status.Allocatable["pods"] != "" && n.Status.Allocatable[kube.SlotsResource] != "" && n.Status.Allocatable[kube.SlotsResource] != "0"
	})
	t.Logf("node allocatable: pods %s, %s %s", n.Status.Allocatable["pods"], kube.SlotsResource, n.Status.Allocatable[kube.SlotsResource])
	start := time.Now()
	one := map[string]string{kube.SlotsResource: "1"}
	adm.CreateJSON("/api/v1/namespaces/agents/pods", map[string]any{
		"metadata": map[string]any{"name": "agent", "annotations": map[string]string{"tenon.dev/agent": "true"}},
		"spec": map[string]any{"hostNetwork": true, "terminationGracePeriodSeconds": 2,
			// No node lifecycle controller runs to take the not-ready taint
			// off (the node's network is not ready: no CNI).
			"tolerations": []map[string]string{{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}},
			"containers": []map[string]any{{"name": "agent", "image": pauseImage, "imagePullPolicy": "Never", "command": containerdtest.PauseCmd,
				"resources": map[string]any{"requests": one, "limits": one}}}},
	})
	var p struct {
		Spec   struct{ NodeName string }
		Status struct {
			Phase      string
			Conditions []struct{ Type, Status string }
		}
	}
	get := func() {
		if err := adm.Get("/api/v1/namespaces/agents/pods/agent", &p); err != nil {
			t.Fatal(err)
		}
	}
	kubetest.WaitFor(t, "the agent pod bound by the scheduler", time.Minute, func() bool { get(); return p.Spec.NodeName != "" })
	t.Logf("pod created to bound to %s by kube-scheduler: %v", p.Spec.NodeName, time.Since(start).Round(time.Millisecond))
	if p.Spec.NodeName != nodeName {
		t.Fatalf("pod bound to %s, want %s", p.Spec.NodeName, nodeName)
	}
	ready := func() bool {
		get()
		for _, c := range p.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				return p.Status.Phase == "Running"
			}
		}
		return false
	}
	kubetest.WaitFor(t, "the agent pod Running and Ready (by the kubelet)", 2*time.Minute, ready)
	t.Logf("pod created to Running and Ready (scheduler, kubelet, containerd, NRI adoption): %v", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := d.Runtime.ListContainers(ctx, &cri.ListContainersRequest{Filter: &cri.ContainerFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.name": "agent", "io.kubernetes.container.name": "agent"}}})
	if err != nil || len(cs.Containers) != 1 {
		t.Fatalf("the agent container in containerd: %v, %v", cs, err)
	}
	checkUnder(t, layout, domain, cs.Containers[0].Id, true)
	pause, _ := filepath.Glob("/sys/fs/cgroup/memory" + d.CgroupParent + "/kubepods/besteffort/pod*/" + cs.Containers[0].PodSandboxId)
	if len(pause) != 1 {
		t.Errorf("the pod's pause container is not under the kubelet's pod cgroup (%s/kubepods/besteffort/pod<uid>)", d.CgroupParent)
	}
	start = time.Now()
	if err := adm.Do(context.Background(), http.MethodDelete, "/api/v1/namespaces/agents/pods/agent", "", nil, nil); err != nil {
		t.Fatal(err)
	}
	kubetest.WaitFor(t, "the agent pod gone (the kubelet stopped it)", 2*time.Minute, func() bool {
		return adm.Get("/api/v1/namespaces/agents/pods/agent", &struct{}{}) != nil
	})
	t.Logf("pod deleted to gone: %v", time.Since(start).Round(time.Millisecond))
}
