package kube

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/kube/kubetest"
	"github.com/tenon-dev/tenon/internal/residency"
)

const e2eNode = "tenon-e2e-node"

// sandboxOf reads the Sandbox agents/name as the admin.
func sandboxOf(t *testing.T, a *kubetest.Admin, name string) *Sandbox {
	t.Helper()
	var s Sandbox
	if err := a.Get(SandboxRef{"agents", name}.path(), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// TestControlPlaneE2E runs the node agent's control-plane side against a
// real kube-apiserver and etcd: the publisher makes the node show
// tenon.dev/agent-slots, and an idle restart-safe agent's Sandbox is
// suspended when the residency policy, under red pressure, tears it down,
// and set back to Running on a resume request (and on a new claim).
// agent-sandbox's controller runs beside them, deleting and creating the
// Sandboxes' pods; there is no scheduler (the pods name the node) and the
// kubelet is played by the test (kubetest.Kubelet: pods run and go at once, no
// container starts). The node agent uses only testdata/clusterrole.yaml's
// RBAC. It logs the times from pressure to Suspended and from a resume
// request to Running and to Ready.
func TestControlPlaneE2E(t *testing.T) {
	assets := kubetest.Assets(t)
	cp := kubetest.StartControlPlane(t, assets)
	t.Logf("etcd and kube-apiserver %s ready in %v", kubetest.Version, cp.Started.Round(time.Millisecond))
	adm := kubetest.NewAdmin(t, cp)
	kubetest.SetUp(t, adm, assets, "testdata", e2eNode, "agents")
	kubetest.StartSandboxController(t, assets, cp)
	kctx, stopKubelet := context.WithCancel(context.Background())
	var kubelet sync.WaitGroup
	kubelet.Go(func() { kubetest.Kubelet{Namespace: "agents"}.Serve(kctx, t, adm) })
	defer kubelet.Wait()
	defer stopKubelet()
	adm.CreateSandbox("agents", "agent-a", e2eNode, "agent:e2e", map[string]string{RestartSafeAnnotation: "true"}, nil)
	adm.CreateSandbox("agents", "agent-b", e2eNode, "agent:e2e", nil, nil)
	kubetest.WaitFor(t, "both Sandboxes Ready on the node", time.Minute, func() bool {
		return sandboxOf(t, adm, "agent-a").Ready() && sandboxOf(t, adm, "agent-b").Ready()
	})

	// The node agent, with its own credentials.
	nc, err := NewClient(Config{Server: cp.Server, CAFile: cp.CAFile, TokenFile: cp.NodeTokenFile})
	if err != nil {
		t.Fatal(err)
	}
	var slots atomic.Int64
	slots.Store(3)
	var pressure atomic.Int32 // a gate.Pressure
	pub := NewPublisher(PublisherConfig{Node: e2eNode, Status: nc, Slots: func() int { return int(slots.Load()) }, Poll: 20 * time.Millisecond})
	res, err := NewResidency(ResidencyConfig{Node: e2eNode, Sandboxes: nc, Pressure: func() gate.Pressure { return gate.Pressure(pressure.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(ResumePattern, ResumeHandler(res))
	api := httptest.NewServer(mux)
	defer api.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(Collectors(pub, res)...)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = pub.Run(ctx) })
	wg.Go(func() { _ = res.Run(ctx) })
	defer wg.Wait()
	defer cancel()

	// Headroom on the node's status.
	nodeSlots := func() (capacity, allocatable string) {
		var n struct {
			Status struct{ Capacity, Allocatable map[string]string }
		}
		if err := adm.Get("/api/v1/nodes/"+e2eNode, &n); err != nil {
			t.Fatal(err)
		}
		return n.Status.Capacity[SlotsResource], n.Status.Allocatable[SlotsResource]
	}
	kubetest.WaitFor(t, "node shows 3 agent slots", 30*time.Second, func() bool { c, a := nodeSlots(); return c == "3" && a == "3" })
	slots.Store(1)
	took := kubetest.WaitFor(t, "node shows 1 agent slot", 10*time.Second, func() bool { c, a := nodeSlots(); return c == "1" && a == "1" })
	t.Logf("headroom change to node status: %v (poll 20 ms)", took.Round(time.Millisecond))

	// The node agent's RBAC is all it has: it may not touch the node itself.
	var se *StatusError
	if err := nc.patch(ctx, "/api/v1/nodes/"+e2eNode, map[string]any{"metadata": map[string]any{"labels": map[string]string{"x": "y"}}}, nil); !errors.As(err, &se) || se.Code != http.StatusForbidden {
		t.Errorf("node agent patched the node object: %v (want 403: RBAC grants nodes/status only)", err)
	}

	kubetest.WaitFor(t, "residency tracks both sandboxes", 30*time.Second, func() bool { return res.Stats().Tracked == 2 })
	a, b := SandboxRef{"agents", "agent-a"}, SandboxRef{"agents", "agent-b"}
	quiet := residency.Observation{ActionExited: true, ResultRecorded: true}
	const rounds = 10
	var toSuspend, toPodGone, toResume, toReady []time.Duration
	for i := range rounds {
		res.Idle(a, quiet, 512<<20, 0)
		res.Idle(b, quiet, 1<<30, 0)
		start := time.Now()
		pressure.Store(int32(gate.Red))
		toSuspend = append(toSuspend, kubetest.WaitFor(t, "agent-a Suspended under red pressure", 10*time.Second, func() bool { return sandboxOf(t, adm, "agent-a").Suspended() }))
		kubetest.WaitFor(t, "agent-a's pod deleted", 30*time.Second, func() bool { return sandboxOf(t, adm, "agent-a").condition("Suspended") == "True" })
		toPodGone = append(toPodGone, time.Since(start))
		pressure.Store(int32(gate.Green))
		start = time.Now()
		if i == rounds-1 {
			// The last resume comes from a new claim of the Sandbox.
			ctrl := true
			adm.Patch(a.path(), map[string]any{"metadata": map[string]any{"ownerReferences": []map[string]any{{
				"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxClaim", "name": "claim", "uid": "claim-uid-1", "controller": &ctrl}}}})
		} else {
			resp, err := http.Post(api.URL+"/v1/sandboxes/agents/agent-a/resume", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("resume request through the node agent's API: %s", resp.Status)
			}
		}
		toResume = append(toResume, kubetest.WaitFor(t, "agent-a Running after the resume request", 10*time.Second, func() bool { return !sandboxOf(t, adm, "agent-a").Suspended() }))
		kubetest.WaitFor(t, "agent-a Ready again", 30*time.Second, func() bool { return sandboxOf(t, adm, "agent-a").Ready() })
		toReady = append(toReady, time.Since(start))
	}
	if sandboxOf(t, adm, "agent-b").Suspended() {
		t.Error("agent-b, without the restart-safe annotation, was suspended")
	}
	logTimes := func(what string, ds []time.Duration) {
		slices.Sort(ds)
		t.Logf("%s, %d rounds: median %v, max %v", what, len(ds), ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
	}
	logTimes("pressure to spec.operatingMode Suspended (policy period 100 ms)", toSuspend)
	logTimes("pressure to the Suspended condition True (the controller deleted the pod)", toPodGone)
	logTimes("resume request (POST /v1/sandboxes/NS/NAME/resume; the last by a claim) to spec.operatingMode Running", toResume)
	logTimes("resume request to Ready (the controller created the pod; the fake kubelet runs it at once)", toReady)
	st := res.Stats()
	if st.Suspends != rounds || st.Resumes != rounds || st.Failures != 0 {
		t.Errorf("stats %+v, want %d suspends and resumes, no failures", st, rounds)
	}
	// Residency measured the resumes to Ready: the 10 s prior moved.
	if st.ResumeCost >= 10*time.Second {
		t.Errorf("resume cost %v: Ready was not observed", st.ResumeCost)
	}
	t.Logf("residency's cost estimates: suspend %v, resume %v", st.SuspendCost.Round(time.Millisecond), st.ResumeCost.Round(time.Millisecond))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"tenon_node_agent_slots": 1, "tenon_sandbox_suspends_total": rounds, "tenon_sandbox_resumes_total": rounds}
	for _, mf := range mfs {
		m := mf.GetMetric()[0]
		v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
		if w, ok := want[mf.GetName()]; ok && v != w {
			t.Errorf("%s = %v, want %v", mf.GetName(), v, w)
		}
		delete(want, mf.GetName())
	}
	if len(want) > 0 {
		t.Errorf("metrics missing: %v", want)
	}
}
