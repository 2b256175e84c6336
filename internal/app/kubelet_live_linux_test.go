package app

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/tenon-dev/tenon/internal/kube/kubetest"
	"github.com/tenon-dev/tenon/internal/node/containerdtest"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestLiveKubelet runs one agent pod end to end through a real kubelet
// (v1.37.2), the test's containerd and tenon node: the pod, bound to the
// kubelet's node, is run by the kubelet through CRI and reported Running
// and Ready by it; its agent container is adopted by tenon node through
// NRI (its cgroup under the workload domain, the pause container's under
// the kubelet's pod cgroup); its deletion stops it.
func TestLiveKubelet(t *testing.T) {
	assets := kubetest.Assets(t)
	kubetest.Binary(t, assets, "kubelet")
	layout, domain, d := startContainerd(t, "a real kubelet")
	startNode(t, d, NodeConfig{Domain: domain, Budget: 256 * units.MiB, Policy: "gate"})
	cp := kubetest.StartControlPlane(t, assets)
	adm := kubetest.NewAdmin(t, cp)
	adm.CreateJSON("/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "agents"}})
	const nodeName = "tenon-kubelet-node"
	kubetest.StartKubelet(t, assets, cp, nodeName, d.Socket, d.CgroupParent)
	kubetest.WaitFor(t, "the kubelet registers its node", 2*time.Minute, func() bool {
		return adm.Get("/api/v1/nodes/"+nodeName, &struct{}{}) == nil
	})
	start := time.Now()
	adm.CreateJSON("/api/v1/namespaces/agents/pods", map[string]any{
		"metadata": map[string]any{"name": "agent", "annotations": map[string]string{"tenon.dev/agent": "true"}},
		"spec": map[string]any{"nodeName": nodeName, "hostNetwork": true, "terminationGracePeriodSeconds": 2,
			"containers": []map[string]any{{"name": "agent", "image": pauseImage, "imagePullPolicy": "Never", "command": containerdtest.PauseCmd}}},
	})
	var p struct {
		Status struct {
			Phase      string
			Conditions []struct{ Type, Status string }
		}
	}
	ready := func() bool {
		if err := adm.Get("/api/v1/namespaces/agents/pods/agent", &p); err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				return p.Status.Phase == "Running"
			}
		}
		return false
	}
	kubetest.WaitFor(t, "the agent pod Running and Ready (by the kubelet)", 2*time.Minute, ready)
	t.Logf("pod created to Running and Ready through the kubelet and containerd: %v", time.Since(start).Round(time.Millisecond))
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
