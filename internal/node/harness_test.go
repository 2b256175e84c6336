package node

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/controller/controllertest"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// harnessPolicy records the policy calls the harness makes.
type harnessPolicy struct {
	controllertest.Nop
	mu    sync.Mutex
	calls []string
	done  []controller.Outcome
	ended []string
}

func (p *harnessPolicy) Name() string { return "harness" }

func (p *harnessPolicy) note(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, s)
}

func (p *harnessPolicy) AgentReady(_ context.Context, a *controller.Agent) error {
	p.note("agent-ready " + a.ID)
	return nil
}

func (p *harnessPolicy) ActionReady(_ context.Context, a *controller.Agent, act *trajectory.Action) (controller.Grant, error) {
	p.note("action-ready " + a.ID + " " + a.SandboxID + " " + act.Class)
	return controller.Grant{ID: 1, Charge: 1 << 20}, nil
}

func (p *harnessPolicy) ActionDone(a *controller.Agent, g controller.Grant, o controller.Outcome) {
	p.note("action-done " + a.ID)
	p.mu.Lock()
	p.done = append(p.done, o)
	p.mu.Unlock()
}

func (p *harnessPolicy) AgentDone(a *controller.Agent, _ error) {
	p.note("agent-done " + a.ID)
	p.mu.Lock()
	p.ended = append(p.ended, a.ID)
	p.mu.Unlock()
}

func (p *harnessPolicy) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// fakeSuspender plays kube.Residency: it records the boundaries and
// resume requests; suspended is what the test says it suspended.
type fakeSuspender struct {
	mu        sync.Mutex
	idle      []string
	waits     []time.Duration
	ws        []int64
	resumes   int
	suspended map[string]bool
}

func (s *fakeSuspender) Idle(pod PodRef, o residency.Observation, ws int64, wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle = append(s.idle, pod.String()+" "+residency.Check(o).Label())
	s.waits, s.ws = append(s.waits, wait), append(s.ws, ws)
}

func (s *fakeSuspender) Resume(pod PodRef) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resumes++
	return s.suspended[pod.String()]
}

func (s *fakeSuspender) Suspended(pod PodRef) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.suspended[pod.String()]
}

type harnessRig struct {
	n   *Node
	clk *clocktest.Manual
	ad  *fakeAdopter
	pol *harnessPolicy
	sus *fakeSuspender
	rep *collect
}

func newHarnessRig(t *testing.T) *harnessRig {
	t.Helper()
	r := &harnessRig{clk: clocktest.NewManual(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)),
		ad:  &fakeAdopter{paths: map[string]string{}, mem: map[string]cgroup.MemoryStats{}},
		pol: &harnessPolicy{}, sus: &fakeSuspender{suspended: map[string]bool{}}, rep: &collect{}}
	r.n = New(Config{Domain: "tenon-node", DomainHits: func() (int64, error) { return 0, nil },
		Backend: r.ad, Policy: r.pol, Live: &controller.LiveSet{}, Reporter: r.rep, Clock: r.clk, Suspender: r.sus})
	return r
}

// adopt runs a container of pod ns/NAME through Create and Start.
func (r *harnessRig) adopt(t *testing.T, name, ctr string) {
	t.Helper()
	pod := PodRef{Namespace: "ns", Name: name, UID: "uid-" + ctr}
	path, _ := r.n.Create(pod, map[string]string{AnnotationAgent: "true"}, ctr)
	if err := r.n.Start(pod, "agent", ctr, path); err != nil {
		t.Fatal(err)
	}
}

// The harness drives the policy: the agent's first action passes agent
// pacing, every action admission; the node's own samples measure the
// action's memory; each boundary goes to residency with the expected wait.
func TestHarnessDrivesThePolicy(t *testing.T) {
	r := newHarnessRig(t)
	r.adopt(t, "a", "c1")
	ctx := context.Background()
	g, err := r.n.ActionStart(ctx, "ns", "a", ActionRequest{Command: "pytest", Class: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.n.ActionStart(ctx, "ns", "a", ActionRequest{}); !errors.Is(err, ErrActionRunning) {
		t.Errorf("a second action while one runs: %v, want ErrActionRunning", err)
	}
	for _, mib := range []int64{100, 300, 200} {
		r.ad.set("c1", cgroup.MemoryStats{Usage: mib << 20})
		r.clk.Advance(100 * time.Millisecond)
		r.n.checkOOM()
	}
	r.ad.set("c1", cgroup.MemoryStats{Usage: 150 << 20})
	if err := r.n.ActionEnd("ns", "a", "nope", ActionResult{}); !errors.Is(err, ErrNoAction) {
		t.Errorf("ending an unknown action: %v, want ErrNoAction", err)
	}
	if err := r.n.ActionEnd("ns", "a", g.ID, ActionResult{ExitCode: 1}); err != nil {
		t.Fatal(err)
	}
	if err := r.n.Wait("ns", "a", WaitRequest{State: "begin", ExpectedS: 30}); err != nil {
		t.Fatal(err)
	}
	g2, err := r.n.ActionStart(ctx, "ns", "a", ActionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.n.ActionEnd("ns", "a", g2.ID, ActionResult{PeakBytes: 1 << 30, Background: true}); err != nil {
		t.Fatal(err)
	}
	want := []string{"agent-ready ns/a", "action-ready ns/a c1 test", "action-done ns/a", "action-ready ns/a c1 bash", "action-done ns/a"}
	if got := r.pol.log(); !slices.Equal(got, want) {
		t.Errorf("policy calls %v, want %v", got, want)
	}
	o := r.pol.done[0]
	if o.PeakBytes != 300<<20 || o.AvgBytes != 200<<20 || o.Duration != 300*time.Millisecond || o.Exit != 1 || o.Sandbox != "c1" || o.Err != nil {
		t.Errorf("first outcome %+v: want peak 300 MiB, avg 200 MiB, 300ms, exit 1 in c1", o)
	}
	if r.pol.done[1].PeakBytes != 1<<30 {
		t.Errorf("the harness's own peak was not taken: %d", r.pol.done[1].PeakBytes)
	}
	wantIdle := []string{"ns/a restartable", "ns/a restartable", "ns/a resident_only"}
	if !slices.Equal(r.sus.idle, wantIdle) || !slices.Equal(r.sus.waits, []time.Duration{0, 30 * time.Second, 0}) || r.sus.ws[0] != 150<<20 {
		t.Errorf("boundaries %v waits %v working sets %v, want %v, [0 30s 0], 150 MiB first", r.sus.idle, r.sus.waits, r.sus.ws, wantIdle)
	}
}

// A pod tenon suspended keeps its agent (and its pacing count); the
// harness's next action asks for it back, waits for its new container and
// runs there. A pod that goes otherwise ends its agent.
func TestHarnessResumesASuspendedPod(t *testing.T) {
	r := newHarnessRig(t)
	r.adopt(t, "a", "c1")
	r.adopt(t, "b", "d1")
	ctx := context.Background()
	for _, pod := range []string{"a", "b"} {
		g, err := r.n.ActionStart(ctx, "ns", pod, ActionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.n.ActionEnd("ns", pod, g.ID, ActionResult{}); err != nil {
			t.Fatal(err)
		}
	}
	r.sus.suspended["ns/a"] = true
	if err := r.n.Stop(ctx, "c1", "pod deleted"); err != nil {
		t.Fatal(err)
	}
	if err := r.n.Stop(ctx, "d1", "pod deleted"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.pol.ended, []string{"ns/b"}) {
		t.Fatalf("agents ended %v, want only ns/b (ns/a was suspended)", r.pol.ended)
	}
	if _, err := r.n.ActionStart(ctx, "ns", "b", ActionRequest{}); !errors.Is(err, ErrUnknownPod) {
		t.Errorf("an action of a pod gone for good: %v, want ErrUnknownPod", err)
	}
	type result struct {
		g   ActionGrant
		err error
	}
	got := make(chan result, 1)
	go func() {
		g, err := r.n.ActionStart(ctx, "ns", "a", ActionRequest{Class: "edit"})
		got <- result{g, err}
	}()
	// The request waits for the pod; the resume was asked for.
	deadline := time.Now().Add(5 * time.Second)
	for r.resumes() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	select {
	case res := <-got:
		t.Fatalf("the action started before its pod came back: %+v", res)
	default:
	}
	r.clk.Advance(2 * time.Second)
	r.sus.mu.Lock()
	r.sus.suspended["ns/a"] = false
	r.sus.mu.Unlock()
	r.adopt(t, "a", "c2")
	var res result
	select {
	case res = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the action did not start once its pod's new container was adopted")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	if !res.g.Resumed || res.g.ResumedS != 2 {
		t.Errorf("grant %+v: want resumed after 2 s", res.g)
	}
	calls := r.pol.log()
	if last := calls[len(calls)-1]; last != "action-ready ns/a c2 edit" {
		t.Errorf("last policy call %q: want the action admitted in the new container c2", last)
	}
	if n := slices.Index(calls, "agent-ready ns/a"); n < 0 || slices.Index(calls[n+1:], "agent-ready ns/a") >= 0 {
		t.Errorf("agent pacing asked %v: want once (the suspended agent kept its start)", calls)
	}
	if k := r.rep.kinds(); !slices.Contains(k, KindSuspended+":") || !slices.Contains(k, KindUnsuspended+":") {
		t.Errorf("reports %v: want the suspend and the return of pod a", k)
	}
}

func (r *harnessRig) resumes() int {
	r.sus.mu.Lock()
	defer r.sus.mu.Unlock()
	return r.sus.resumes
}

// The harness API's routes and statuses.
func TestHarnessAPI(t *testing.T) {
	r := newHarnessRig(t)
	r.adopt(t, "a", "c1")
	mux := http.NewServeMux()
	r.n.HandleHarness(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	post := func(path, body string) (int, string) {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("/v1/pods/ns/a/actions", `{"command":"make","class":"build"}`); code != 200 || !strings.Contains(body, `"id":"a1"`) {
		t.Errorf("action start: %d %s", code, body)
	}
	if code, _ := post("/v1/pods/ns/a/actions", `{}`); code != http.StatusConflict {
		t.Errorf("second action start: %d, want 409", code)
	}
	if code, _ := post("/v1/pods/ns/nope/actions", `{}`); code != http.StatusNotFound {
		t.Errorf("unknown pod: %d, want 404", code)
	}
	if code, _ := post("/v1/pods/ns/a/actions", `{"class":`); code != http.StatusBadRequest {
		t.Errorf("malformed body: %d, want 400", code)
	}
	if code, body := post("/v1/pods/ns/a/actions/a1/done", `{"exit_code":0}`); code != 200 {
		t.Errorf("action end: %d %s", code, body)
	}
	if code, _ := post("/v1/pods/ns/a/wait", `{"state":"sideways"}`); code != http.StatusBadRequest {
		t.Errorf("bad wait state: %d, want 400", code)
	}
	if code, _ := post("/v1/pods/ns/a/wait", `{"state":"begin","expected_s":12.5}`); code != 200 || r.sus.waits[len(r.sus.waits)-1] != 12500*time.Millisecond {
		t.Errorf("wait begin: %d, waits %v", code, r.sus.waits)
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/v1/pods/ns/a", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !slices.Equal(r.pol.ended, []string{"ns/a"}) {
		t.Errorf("end: %d, agents ended %v", resp.StatusCode, r.pol.ended)
	}
}
