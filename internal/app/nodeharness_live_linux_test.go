//go:build linux

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/kube"
	"github.com/tenon-dev/tenon/internal/kube/kubetest"
	"github.com/tenon-dev/tenon/internal/node"
	"github.com/tenon-dev/tenon/internal/node/containerdtest"
	"github.com/tenon-dev/tenon/internal/units"
)

const harnessNode = "tenon-harness-node"

// criKubelet runs the pods the test kubelet is given through containerd:
// a pod sandbox and one container "agent" each.
type criKubelet struct {
	d     *containerdtest.Daemon
	image string

	mu   sync.Mutex
	pods map[string]string // pod uid -> pod sandbox id
	ctrs map[string]string // pod name -> its running agent container
}

func (k *criKubelet) run(ctx context.Context, p *kubetest.Pod) error {
	k.mu.Lock()
	_, ok := k.pods[p.Metadata.UID]
	k.mu.Unlock()
	if ok {
		return nil
	}
	cfg := k.d.PodConfig(p.Metadata.Name, p.Metadata.UID, k.d.CgroupParent+"/pod-"+p.Metadata.UID, p.Metadata.Annotations)
	r, err := k.d.Runtime.RunPodSandbox(ctx, &cri.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		return fmt.Errorf("RunPodSandbox %s: %w", p.Metadata.Name, err)
	}
	id, err := k.d.StartContainer(ctx, r.PodSandboxId, cfg, containerdtest.Container{Name: "agent", Image: k.image, Command: containerdtest.PauseCmd})
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pods[p.Metadata.UID], k.ctrs[p.Metadata.Name] = r.PodSandboxId, id
	return nil
}

func (k *criKubelet) stop(ctx context.Context, p *kubetest.Pod) error {
	k.mu.Lock()
	id, ok := k.pods[p.Metadata.UID]
	k.mu.Unlock()
	if !ok {
		return nil
	}
	if _, err := k.d.Runtime.StopPodSandbox(ctx, &cri.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
		return err
	}
	if _, err := k.d.Runtime.RemovePodSandbox(ctx, &cri.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.pods, p.Metadata.UID)
	delete(k.ctrs, p.Metadata.Name)
	return nil
}

func (k *criKubelet) container(pod string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ctrs[pod]
}

// harnessClient is an agent's harness talking to the node agent's API.
type harnessClient struct {
	t           *testing.T
	base, token string
}

func (h harnessClient) post(path string, body, out any) {
	h.t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, h.base+path, bytes.NewReader(b))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	c := http.Client{Timeout: time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		h.t.Fatalf("POST %s: %s: %s", path, resp.Status, e.Error)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			h.t.Fatal(err)
		}
	}
}

// freeAddr is a loopback address free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestLiveNodeHarness runs tenon node with --policy tenon against a real
// containerd (NRI), kube-apiserver and etcd, and agent-sandbox's
// controller; the test plays the kubelet (kubetest.Kubelet running each
// pod through containerd's CRI; no scheduler: pods name the node) and two
// agents' harnesses. It checks that the node's agent slots are published
// from the node agent's own state (they drop when a pod fills the budget),
// that under that pressure the idle restart-safe agent's Sandbox is
// suspended (its pod deleted, its container gone) and the other one is
// not, and that the harness's next action request resumes it: the request
// returns once the pod's new container is adopted and the action
// admitted. It measures the time from that request to the action's
// command having run in the new container.
func TestLiveNodeHarness(t *testing.T) {
	assets := kubetest.Assets(t)
	layout, domain, d := startContainerd(t, "tenon node's harness test")
	const budget = 256 * units.MiB
	cp := kubetest.StartControlPlane(t, assets)
	adm := kubetest.NewAdmin(t, cp)
	kubetest.SetUp(t, adm, assets, "../kube/testdata", harnessNode)
	kubetest.StartSandboxController(t, assets, cp)
	h := startHarnessNode(t, d, cp, domain, harnessNode, budget)

	kl := &criKubelet{d: d, image: pauseImage, pods: map[string]string{}, ctrs: map[string]string{}}
	kctx, stopKubelet := context.WithCancel(context.Background())
	var kwg sync.WaitGroup
	kwg.Go(func() { kubetest.Kubelet{Namespace: "default", Run: kl.run, Stop: kl.stop}.Serve(kctx, t, adm) })
	t.Cleanup(func() { stopKubelet(); kwg.Wait() })

	agent := map[string]string{node.AnnotationAgent: "true"}
	adm.CreateSandbox("default", "agent-a", harnessNode, pauseImage, map[string]string{kube.RestartSafeAnnotation: "true"}, agent)
	adm.CreateSandbox("default", "agent-b", harnessNode, pauseImage, nil, agent)
	sandbox := func(name string) *kube.Sandbox {
		var s kube.Sandbox
		if err := adm.Get("/apis/agents.x-k8s.io/v1beta1/namespaces/default/sandboxes/"+name, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	kubetest.WaitFor(t, "both Sandboxes Ready, their containers adopted", 2*time.Minute, func() bool {
		return sandbox("agent-a").Ready() && sandbox("agent-b").Ready()
	})

	rctx, rcancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer rcancel()
	// action runs one action of pod's agent: start (admission, and the
	// pod's return if it was suspended), the command in its container
	// through CRI, done. It returns the grant and when the command ran.
	action := func(pod string, cmd ...string) (node.ActionGrant, time.Time) {
		var g node.ActionGrant
		h.post("/v1/pods/default/"+pod+"/actions", node.ActionRequest{Command: "sh -c true", Class: "bash"}, &g)
		// The node adopts the container in NRI's StartContainer, before
		// the CRI call that started it returns to the test kubelet.
		var ctr string
		kubetest.WaitFor(t, "pod "+pod+"'s container known to the test kubelet", 10*time.Second, func() bool {
			ctr = kl.container(pod)
			return ctr != ""
		})
		r, err := d.Runtime.ExecSync(rctx, &cri.ExecSyncRequest{ContainerId: ctr, Cmd: cmd, Timeout: 10})
		ran := time.Now()
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("running %v in pod %s: %v (exit %d, %s)", cmd, pod, err, r.GetExitCode(), r.GetStderr())
		}
		h.post("/v1/pods/default/"+pod+"/actions/"+g.ID+"/done", node.ActionResult{}, nil)
		return g, ran
	}
	slots := func() int {
		var n struct {
			Status struct{ Allocatable map[string]string }
		}
		if err := adm.Get("/api/v1/nodes/"+harnessNode, &n); err != nil {
			t.Fatal(err)
		}
		v, err := strconv.Atoi(n.Status.Allocatable[kube.SlotsResource])
		if err != nil {
			return -1
		}
		return v
	}
	for _, pod := range []string{"agent-a", "agent-b"} {
		action(pod, "true")
	}
	// Both agents started under pacing and measured their floors: the
	// slots the node publishes come from that state.
	var idle int
	kubetest.WaitFor(t, "the node's agent slots published", 30*time.Second, func() bool { idle = slots(); return idle > 0 })
	t.Logf("agent slots with both agents idle: %d", idle)

	mounts := memToolMounts(t)
	const rounds = 3
	var toSuspend, toGrant, toRan []time.Duration
	for i := range rounds {
		// Pressure: a pod (no Sandbox: the gate alone acts on it) fills
		// most of the budget and holds it.
		name := fmt.Sprintf("hog-%d", i)
		cfg := d.PodConfig(name, "uid-"+name, d.CgroupParent+"/pod-"+name, map[string]string{node.AnnotationAgent: "true"})
		hog := d.RunPod(rctx, t, cfg)
		start := time.Now()
		d.RunContainer(rctx, t, hog, cfg, containerdtest.Container{Name: "tool", Image: pauseImage,
			Command: []string{"/bin/sh", "-c", "/tenon/app.test; exec sleep 3600"},
			Env:     map[string]string{memToolEnv: "--peak 200MiB --ramp 500ms --hold forever"}, Mounts: mounts})
		kubetest.WaitFor(t, "agent-a suspended under pressure, its container gone", time.Minute, func() bool {
			return sandbox("agent-a").Suspended() && kl.container("agent-a") == ""
		})
		toSuspend = append(toSuspend, time.Since(start))
		t.Logf("round %d: hog container's CRI create → agent-a's Sandbox Suspended and its pod's container stopped: %v", i, toSuspend[i].Round(time.Millisecond))
		if i == 0 {
			kubetest.WaitFor(t, "fewer agent slots under pressure", 30*time.Second, func() bool { return slots() < idle })
			t.Logf("agent slots under pressure: %d (idle: %d)", slots(), idle)
		}
		if sandbox("agent-b").Suspended() {
			t.Fatal("agent-b, without the restart-safe annotation, was suspended")
		}
		// Relief, then the harness's next action.
		if _, err := d.Runtime.StopPodSandbox(rctx, &cri.StopPodSandboxRequest{PodSandboxId: hog}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Runtime.RemovePodSandbox(rctx, &cri.RemovePodSandboxRequest{PodSandboxId: hog}); err != nil {
			t.Fatal(err)
		}
		grant, ran := resumeRound(t, i, layout, domain, budget, func() (node.ActionGrant, time.Time) { return action("agent-a", "true") })
		toGrant, toRan = append(toGrant, grant), append(toRan, ran)
	}
	logMeasured(t, "pressure (the hog container's CRI create) → Sandbox Suspended and its container gone", toSuspend)
	logMeasured(t, "resume request (the harness's POST .../actions) → action admitted (200)", toGrant)
	logMeasured(t, "resume request → the action's command ran in the new container (CRI ExecSync returned)", toRan)
}

// logMeasured logs the median, min and max of the rounds' times ds.
func logMeasured(t *testing.T, what string, ds []time.Duration) {
	t.Helper()
	s := slices.Clone(ds)
	slices.Sort(s)
	t.Logf("measured: %s, %d rounds: median %v, min %v, max %v", what, len(s), s[len(s)/2].Round(time.Millisecond), s[0].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

// startHarnessNode runs tenon node --policy tenon for the harness tests
// on nodeName with the node agent's RBAC only and its harness API on a
// free loopback port, and returns the agents' harness client.
func startHarnessNode(t *testing.T, d *containerdtest.Daemon, cp *kubetest.ControlPlane, domain, nodeName string, budget int64) harnessClient {
	t.Helper()
	listen := freeAddr(t)
	startNode(t, d, NodeConfig{Domain: domain, Budget: budget, Policy: "tenon", StateDir: t.TempDir(),
		Kube:     &kube.Config{Server: cp.Server, CAFile: cp.CAFile, TokenFile: cp.NodeTokenFile},
		NodeName: nodeName, KubePoll: 50 * time.Millisecond, Listen: listen, Token: "harness-token"})
	return harnessClient{t, "http://" + listen, "harness-token"}
}

// memToolMounts are the host paths a container needs to run this test
// binary's memory tool (memToolEnv) as /tenon/app.test: the binary, and
// the C library and loader it links.
func memToolMounts(t *testing.T) map[string]string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{exe: "/tenon/app.test", "/usr/lib/x86_64-linux-gnu": "/lib/x86_64-linux-gnu", "/lib64": "/lib64"}
}

// resumeRound is the end of round i of a harness test: once the domain's
// usage is below half the budget (the pressure gone), the suspended
// agent's next action (action: its request, its command, done) resumes
// it. It returns how long the request took to be admitted and to the
// command having run.
func resumeRound(t *testing.T, i int, layout *cgroup.Layout, domain string, budget int64, action func() (node.ActionGrant, time.Time)) (grant, ran time.Duration) {
	t.Helper()
	dom, err := cgroup.Open(layout, domain)
	if err != nil {
		t.Fatal(err)
	}
	kubetest.WaitFor(t, "the domain's usage below half the budget once the pressure went", time.Minute, func() bool {
		m, err := dom.Memory()
		return err == nil && m.Usage < budget/2
	})
	before := time.Now()
	g, at := action()
	if !g.Resumed {
		t.Fatalf("round %d: grant %+v: the action did not wait for the agent's return", i, g)
	}
	grant, ran = time.Duration(g.QueuedS*float64(time.Second)), at.Sub(before)
	t.Logf("round %d: resume request → action admitted %v (pod back %v), → its command ran in the new container %v",
		i, grant.Round(time.Millisecond), time.Duration(g.ResumedS*float64(time.Second)).Round(time.Millisecond), ran.Round(time.Millisecond))
	return grant, ran
}
