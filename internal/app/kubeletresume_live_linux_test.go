//go:build linux

package app

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/tenon-dev/tenon/internal/kube"
	"github.com/tenon-dev/tenon/internal/kube/kubetest"
	"github.com/tenon-dev/tenon/internal/node"
	"github.com/tenon-dev/tenon/internal/node/containerdtest"
	"github.com/tenon-dev/tenon/internal/units"
)

// kubeletPodSpec is the spec of a pod the real kubelet of these tests
// runs on node: host network (no CNI), the not-ready taint tolerated (no
// node lifecycle controller takes it off), the locally imported image
// never pulled, a 2 s grace period.
func kubeletPodSpec(nodeName string, ctr map[string]any, volumes []map[string]any) map[string]any {
	ctr["imagePullPolicy"] = "Never"
	return map[string]any{"nodeName": nodeName, "hostNetwork": true, "terminationGracePeriodSeconds": 2,
		"tolerations": []map[string]string{{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}},
		"containers":  []map[string]any{ctr}, "volumes": volumes}
}

// runningContainer is the id of pod's running container "agent" in
// containerd ("" when there is none).
func runningContainer(ctx context.Context, t *testing.T, d *containerdtest.Daemon, pod string) string {
	t.Helper()
	cs, err := d.Runtime.ListContainers(ctx, &cri.ListContainersRequest{Filter: &cri.ContainerFilter{
		State:         &cri.ContainerStateValue{State: cri.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{"io.kubernetes.pod.name": pod, "io.kubernetes.container.name": "agent"}}})
	if err != nil {
		t.Fatalf("listing pod %s's containers: %v", pod, err)
	}
	if len(cs.Containers) == 0 {
		return ""
	}
	return cs.Containers[0].Id
}

// TestLiveKubeletResume is TestLiveNodeHarness's suspend and resume with
// the real kubelet (v1.37.2) running the pods instead of the test: tenon
// node (--policy tenon, the node agent's RBAC, its harness API) manages an
// agent-sandbox Sandbox whose pod the kubelet runs through the test's
// containerd. Each round, a pod the kubelet runs fills the budget; the
// residency policy suspends the idle restart-safe agent (its Sandbox
// Suspended, agent-sandbox's controller deletes the pod, the kubelet
// stops it); the filler pod is deleted; the agent's harness asks for its
// next action, which switches the Sandbox back to Running: the controller
// creates the pod, the kubelet runs it, tenon node adopts the new
// container through NRI and admits the action, and the test runs the
// action's command in it. It measures pressure → suspended and resume
// request → the command ran.
func TestLiveKubeletResume(t *testing.T) {
	assets := kubetest.Assets(t)
	kubetest.Binary(t, assets, "kubelet")
	kubetest.Binary(t, assets, "agent-sandbox-controller")
	layout, domain, d := startContainerd(t, "a real kubelet")
	const budget = 256 * units.MiB
	const nodeName = "tenon-kubelet-resume-node"
	cp := kubetest.StartControlPlane(t, assets)
	adm := kubetest.NewAdmin(t, cp)
	kubetest.SetUp(t, adm, assets, "../kube/testdata", nodeName)
	kubetest.StartKubelet(t, assets, cp, nodeName, d.Socket, d.CgroupParent)
	kubetest.StartSandboxController(t, assets, cp)
	h := startHarnessNode(t, d, cp, domain, nodeName, budget)

	adm.CreateJSON("/apis/agents.x-k8s.io/v1beta1/namespaces/default/sandboxes", map[string]any{
		"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
		"metadata": map[string]any{"name": "agent-a", "annotations": map[string]string{kube.RestartSafeAnnotation: "true"}},
		"spec": map[string]any{"podTemplate": map[string]any{
			"metadata": map[string]any{"annotations": map[string]string{node.AnnotationAgent: "true"}},
			"spec":     kubeletPodSpec(nodeName, map[string]any{"name": "agent", "image": pauseImage, "command": containerdtest.PauseCmd}, nil)}},
	})
	sandbox := func() *kube.Sandbox {
		var s kube.Sandbox
		if err := adm.Get("/apis/agents.x-k8s.io/v1beta1/namespaces/default/sandboxes/agent-a", &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer rcancel()
	kubetest.WaitFor(t, "the Sandbox Ready (its pod run by the kubelet, its container adopted)", 2*time.Minute, func() bool {
		return sandbox().Ready() && runningContainer(rctx, t, d, "agent-a") != ""
	})

	// action runs one action of agent-a: start (admission, and the pod's
	// return if it was suspended), `true` in its running container
	// through CRI, done. It returns the grant and when the command ran.
	action := func() (node.ActionGrant, time.Time) {
		var g node.ActionGrant
		h.post("/v1/pods/default/agent-a/actions", node.ActionRequest{Command: "sh -c true", Class: "bash"}, &g)
		// tenon node adopts the container in NRI's StartContainer, before
		// the kubelet's CRI call that started it returns.
		var ctr string
		kubetest.WaitFor(t, "agent-a's container running", 10*time.Second, func() bool {
			ctr = runningContainer(rctx, t, d, "agent-a")
			return ctr != ""
		})
		r, err := d.Runtime.ExecSync(rctx, &cri.ExecSyncRequest{ContainerId: ctr, Cmd: []string{"true"}, Timeout: 10})
		ran := time.Now()
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("running true in agent-a: %v (exit %d, %s)", err, r.GetExitCode(), r.GetStderr())
		}
		h.post("/v1/pods/default/agent-a/actions/"+g.ID+"/done", node.ActionResult{}, nil)
		return g, ran
	}
	action()

	// The filler runs this test binary's memory tool, mounted from the
	// host.
	var mounts, volumes []map[string]any
	for host, at := range memToolMounts(t) {
		name := fmt.Sprintf("host-%d", len(volumes))
		volumes = append(volumes, map[string]any{"name": name, "hostPath": map[string]string{"path": host}})
		mounts = append(mounts, map[string]any{"name": name, "mountPath": at, "readOnly": true})
	}
	const rounds = 3
	var toSuspend, toGrant, toRan []time.Duration
	for i := range rounds {
		// Pressure: a pod (no Sandbox: the gate alone acts on it) fills
		// most of the budget and holds it.
		name := fmt.Sprintf("filler-%d", i)
		start := time.Now()
		adm.CreateJSON("/api/v1/namespaces/default/pods", map[string]any{
			"metadata": map[string]any{"name": name, "annotations": map[string]string{node.AnnotationAgent: "true"}},
			"spec": kubeletPodSpec(nodeName, map[string]any{"name": "agent", "image": pauseImage,
				"command":      []string{"/bin/sh", "-c", "/tenon/app.test; exec sleep 3600"},
				"env":          []map[string]string{{"name": memToolEnv, "value": "--peak 200MiB --ramp 500ms --hold forever"}},
				"volumeMounts": mounts}, volumes),
		})
		kubetest.WaitFor(t, "agent-a suspended under pressure, its container stopped", 2*time.Minute, func() bool {
			return sandbox().Suspended() && runningContainer(rctx, t, d, "agent-a") == ""
		})
		toSuspend = append(toSuspend, time.Since(start))
		t.Logf("round %d: filler pod created → agent-a's Sandbox Suspended and its container stopped: %v", i, toSuspend[i].Round(time.Millisecond))
		if err := adm.Do(rctx, http.MethodDelete, "/api/v1/namespaces/default/pods/"+name, "application/json",
			[]byte(`{"gracePeriodSeconds":0}`), nil); err != nil {
			t.Fatal(err)
		}
		grant, ran := resumeRound(t, i, layout, domain, budget, action)
		toGrant, toRan = append(toGrant, grant), append(toRan, ran)
	}
	logMeasured(t, "pressure (the filler pod created) → Sandbox Suspended and its container stopped", toSuspend)
	logMeasured(t, "resume request (the harness's POST .../actions) → action admitted (200)", toGrant)
	logMeasured(t, "resume request → the action's command ran in the new container (CRI ExecSync returned)", toRan)
}
