package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/residency"
)

type fakeSandboxes struct {
	mu      sync.Mutex
	patches []string
}

func (f *fakeSandboxes) SetSandboxMode(_ context.Context, ref SandboxRef, mode string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.patches = append(f.patches, ref.String()+" "+mode)
	return nil
}

func (f *fakeSandboxes) WatchSandboxes(ctx context.Context, _ func(SandboxEvent)) error {
	<-ctx.Done()
	return ctx.Err()
}

func (f *fakeSandboxes) take() (p []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, f.patches = f.patches, nil
	return p
}

// sandboxJSON builds a watched Sandbox.
func sandboxJSON(t *testing.T, name, node, mode string, restartSafe bool, claim string, ready bool) *Sandbox {
	t.Helper()
	obj := map[string]any{
		"metadata": map[string]any{"name": name, "namespace": "agents"},
		"spec":     map[string]any{"operatingMode": mode},
		"status":   map[string]any{"nodeName": node},
	}
	md := obj["metadata"].(map[string]any)
	if restartSafe {
		md["annotations"] = map[string]string{RestartSafeAnnotation: "true"}
	}
	if claim != "" {
		md["ownerReferences"] = []map[string]any{{"kind": "SandboxClaim", "uid": claim, "controller": true}}
	}
	if ready {
		obj["status"].(map[string]any)["conditions"] = []map[string]string{{"type": "Ready", "status": "True"}}
	}
	b, _ := json.Marshal(obj)
	var s Sandbox
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestResidencySuspendsUnderPressureAndResumes(t *testing.T) {
	clk := clocktest.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	sb := &fakeSandboxes{}
	pressure := gate.Green
	r, err := NewResidency(ResidencyConfig{Node: "n1", Sandboxes: sb, Pressure: func() gate.Pressure { return pressure }, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.Observe(SandboxEvent{Added, sandboxJSON(t, "safe", "n1", ModeRunning, true, "", true)})
	r.Observe(SandboxEvent{Added, sandboxJSON(t, "unsafe", "n1", ModeRunning, false, "", true)}) // no annotation
	r.Observe(SandboxEvent{Added, sandboxJSON(t, "bg", "n1", ModeRunning, true, "", true)})      // a background process lives
	r.Observe(SandboxEvent{Added, sandboxJSON(t, "elsewhere", "n2", ModeRunning, true, "", true)})
	quiet := residency.Observation{ActionExited: true, ResultRecorded: true}
	for _, name := range []string{"safe", "unsafe", "elsewhere"} {
		r.Idle(SandboxRef{"agents", name}, quiet, 1<<30, 0)
	}
	r.Idle(SandboxRef{"agents", "bg"}, residency.Observation{ActionExited: true, ResultRecorded: true,
		Procs: []residency.ProcInfo{{PID: 7, Comm: "server"}}}, 1<<30, 0)
	if st := r.Stats(); st.Tracked != 3 {
		t.Errorf("tracked %d sandboxes, want 3 (not the other node's)", st.Tracked)
	}
	r.Step(ctx)
	if p := sb.take(); len(p) != 0 {
		t.Fatalf("green: %v", p)
	}
	pressure = gate.Red
	clk.Advance(time.Second)
	r.Step(ctx)
	if p := sb.take(); !slices.Equal(p, []string{"agents/safe Suspended"}) {
		t.Fatalf("red: %v, want only the restart-safe one suspended", p)
	}
	// The suspended Sandbox's pod is gone: nodeName clears; still tenon's.
	r.Observe(SandboxEvent{Modified, sandboxJSON(t, "safe", "", ModeSuspended, true, "", false)})
	if !r.Resume(SandboxRef{"agents", "safe"}) {
		t.Fatal("Resume: not tracked")
	}
	if r.Resume(SandboxRef{"agents", "elsewhere"}) {
		t.Error("Resume of another node's sandbox")
	}
	r.Step(ctx)
	if p := sb.take(); len(p) != 0 {
		t.Fatalf("red resumed: %v", p)
	}
	pressure = gate.Yellow
	r.Step(ctx)
	if p := sb.take(); !slices.Equal(p, []string{"agents/safe Running"}) {
		t.Fatalf("yellow: %v, want the resume", p)
	}
	if st := r.Stats(); st.Suspends != 1 || st.Resumes != 1 || st.Failures != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestResidencyResumesAClaimedSandbox(t *testing.T) {
	r, sb := greenResidency(t)
	r.Observe(SandboxEvent{Added, sandboxJSON(t, "s", "n1", ModeSuspended, true, "claim-1", false)})
	r.Step(context.Background())
	if p := sb.take(); len(p) != 0 {
		t.Fatalf("suspended sandbox resumed unasked: %v", p)
	}
	r.Observe(SandboxEvent{Modified, sandboxJSON(t, "s", "n1", ModeSuspended, true, "claim-2", false)})
	r.Step(context.Background())
	if p := sb.take(); !slices.Equal(p, []string{"agents/s Running"}) {
		t.Errorf("after a new claim: %v, want the resume", p)
	}
	r.Observe(SandboxEvent{Deleted, sandboxJSON(t, "s", "n1", ModeRunning, true, "claim-2", false)})
	if st := r.Stats(); st.Tracked != 0 {
		t.Errorf("deleted sandbox still tracked")
	}
}

func TestResumeHandler(t *testing.T) {
	r, sb := greenResidency(t)
	r.Observe(SandboxEvent{Added, sandboxJSON(t, "s", "n1", ModeSuspended, true, "", false)})
	mux := http.NewServeMux()
	mux.Handle(ResumePattern, ResumeHandler(r))
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/v1/sandboxes/agents/s/resume", http.StatusAccepted},
		{"/v1/sandboxes/agents/other/resume", http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tc.path, nil))
		if rec.Code != tc.code {
			t.Errorf("POST %s: %d %s, want %d", tc.path, rec.Code, rec.Body, tc.code)
		}
	}
	r.Step(context.Background())
	if p := sb.take(); !slices.Equal(p, []string{"agents/s Running"}) {
		t.Errorf("after the resume request: %v", p)
	}
}

// greenResidency is a Residency of node n1 under green pressure.
func greenResidency(t *testing.T) (*Residency, *fakeSandboxes) {
	t.Helper()
	sb := &fakeSandboxes{}
	r, err := NewResidency(ResidencyConfig{Node: "n1", Sandboxes: sb, Pressure: func() gate.Pressure { return gate.Green }})
	if err != nil {
		t.Fatal(err)
	}
	return r, sb
}
