package api

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
)

func TestWaitLearner(t *testing.T) {
	l := newWaitLearner()
	if got := l.predict("a"); got != 0 {
		t.Fatalf("nothing seen: predict = %v, want 0", got)
	}
	l.observe("a", 4*time.Second)
	l.observe("a", 0) // ignored
	l.observe("a", 2*time.Second)
	if got, want := l.predict("a"), 3400*time.Millisecond; got != want {
		t.Errorf("predict(a) = %v, want %v (EWMA, alpha 0.3)", got, want)
	}
	if got, want := l.predict("b"), 3400*time.Millisecond; got != want {
		t.Errorf("unseen agent: predict = %v, want the average over all agents %v", got, want)
	}
	l.observe("b", 10*time.Second)
	if got := l.predict("b"); got != 10*time.Second {
		t.Errorf("predict(b) = %v, want its own first wait 10s", got)
	}
	l.forget("b")
	if got, want := l.predict("b"), time.Duration(0.3*10e9+0.7*3.4e9); got != want {
		t.Errorf("forgotten agent: predict = %v, want the overall average %v", got, want)
	}
}

// waitRecorder is a keep-resident sandbox manager that records what the
// daemon tells residency about model waits.
type waitRecorder struct {
	*controller.Resident
	mu       sync.Mutex
	calls    []string        // "begin <predicted>" / "end"
	nextWait []time.Duration // Agent.NextWait at each boundary
	paged    bool
}

func (r *waitRecorder) WaitBegin(_ *controller.Agent, predicted time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, "begin "+predicted.String())
}

func (r *waitRecorder) WaitEnd(*controller.Agent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, "end")
}

func (r *waitRecorder) Boundary(ctx context.Context, a *controller.Agent, o controller.Outcome) error {
	r.mu.Lock()
	r.nextWait = append(r.nextWait, a.NextWait)
	r.mu.Unlock()
	return r.Resident.Boundary(ctx, a, o)
}

func (r *waitRecorder) PagedOut(string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paged
}

// recordingPolicy hands the daemon a waitRecorder as its sandbox manager.
type recordingPolicy struct {
	controller.Policy
	rec *waitRecorder
}

func (p *recordingPolicy) SandboxManager(h controller.SandboxHost) controller.Sandboxes {
	p.rec.Resident = controller.NewResident(h)
	return p.rec
}

// TestModelWaitsDriveResidency steps a manual clock through an agent's
// actions and model waits and checks what residency is told: each wait's
// begin with the learned length, its end (Prefetch), the learned wait at
// each boundary (announced waits, else the idle gap), and that a paged-out
// sandbox shows in Status and the metrics.
func TestModelWaitsDriveResidency(t *testing.T) {
	clk := clocktest.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	be := fake.New(fake.Options{Budget: 1 << 30, SandboxBytes: 16 << 20})
	t.Cleanup(func() { be.Close() })
	p, err := live.Build("eager", policy.Options{Budget: 1 << 30}, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &waitRecorder{}
	ctx := context.Background()
	s, err := New(ctx, Config{
		StateDir: t.TempDir(), Backend: be, Policy: &recordingPolicy{Policy: p, rec: rec}, Budget: 1 << 30,
		Clock: clk, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	rec2 := record{ID: "ag-000000000001", Backend: be.Name(), Created: clk.Now()}
	ag := s.addAgent(rec2, true)
	exec := func() {
		t.Helper()
		if _, err := s.runAction(ctx, ag, ExecRequest{Command: "true"}); err != nil {
			t.Fatal(err)
		}
	}
	exec()                // nothing learned: boundary wait 0
	s.modelWait(ag, true) // begin: predicted 0
	s.modelWait(ag, true) // an overlapping call: no second begin
	clk.Advance(4 * time.Second)
	s.modelWait(ag, false)
	s.modelWait(ag, false) // the wait ends here: learned 4s
	exec()                 // boundary: 4s
	s.modelWait(ag, true)  // begin: predicted 4s
	clk.Advance(2 * time.Second)
	s.modelWait(ag, false) // learned 0.3*2 + 0.7*4 = 3.4s
	exec()                 // boundary: 3.4s
	clk.Advance(10 * time.Second)
	exec() // no announced wait: the 10s idle gap is learned, boundary 0.3*10 + 0.7*3.4 = 5.38s

	rec.mu.Lock()
	calls, waits := rec.calls, rec.nextWait
	rec.mu.Unlock()
	wantCalls := []string{"begin 0s", "end", "begin 4s", "end"}
	if strings.Join(calls, ",") != strings.Join(wantCalls, ",") {
		t.Errorf("residency told %v, want %v", calls, wantCalls)
	}
	wantWaits := []time.Duration{0, 4 * time.Second, 3400 * time.Millisecond, 5380 * time.Millisecond}
	if len(waits) != len(wantWaits) {
		t.Fatalf("boundaries saw NextWait %v, want %v", waits, wantWaits)
	}
	for i := range waits {
		if d := waits[i] - wantWaits[i]; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("boundary %d: NextWait %v, want %v", i, waits[i], wantWaits[i])
		}
	}

	rec.mu.Lock()
	rec.paged = true
	rec.mu.Unlock()
	st := s.Status(ctx)
	if st.PagedOut != 1 || st.Resident != 1 || st.Absent != 0 || st.Agents[0].Residency != ResidencyPagedOut {
		t.Errorf("status: resident %d paged out %d absent %d, agent %q", st.Resident, st.PagedOut, st.Absent, st.Agents[0].Residency)
	}
	if absent, paged := s.residencyCounts(); absent != 0 || paged != 1 {
		t.Errorf("metrics counts: absent %d paged out %d, want 0 and 1", absent, paged)
	}
}

// TestLearnedWaitsSurviveRestart: the waits learned per agent and over all
// agents are stored in the registry (every waitSaveEvery and at shutdown)
// and a server started again on the same state directory predicts them;
// a deleted agent's is gone.
func TestLearnedWaitsSurviveRestart(t *testing.T) {
	clk := clocktest.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	state := t.TempDir()
	ctx := context.Background()
	start := func() *Server {
		t.Helper()
		be := fake.New(fake.Options{Budget: 1 << 30, SandboxBytes: 16 << 20})
		t.Cleanup(func() { be.Close() })
		p, err := live.Build("eager", policy.Options{Budget: 1 << 30}, live.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(ctx, Config{StateDir: state, Backend: be, Policy: p, Budget: 1 << 30, Clock: clk, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := start()
	wait := func(id string, d time.Duration) {
		ag := s.lookup(id)
		s.modelWait(ag, true)
		clk.Advance(d)
		s.modelWait(ag, false)
	}
	for _, id := range []string{"ag-00000000000a", "ag-00000000000b"} {
		rec := record{ID: id, Backend: "fake", Created: clk.Now()}
		if err := s.reg.put(rec); err != nil {
			t.Fatal(err)
		}
		s.addAgent(rec, false)
	}
	wait("ag-00000000000a", 4*time.Second)
	// the periodic save stores it without a shutdown; the clock is advanced
	// on every poll, since the saver's ticker may not exist yet at the first
	waitUntil(t, func() bool {
		clk.Advance(waitSaveEvery)
		got, err := s.reg.waits()
		return err == nil && got["ag-00000000000a"] == 4*time.Second && got[allWaitsKey] == 4*time.Second
	})
	wait("ag-00000000000b", 10*time.Second)
	wait("ag-00000000000a", 2*time.Second) // 0.3*2 + 0.7*4 = 3.4 s
	// ag-b is deleted as handleDelete does it
	s.waits.forget("ag-00000000000b")
	if err := s.reg.delete("ag-00000000000b"); err != nil {
		t.Fatal(err)
	}
	all := s.waits.predict("never-seen")
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	s = start()
	defer s.Shutdown(ctx)
	if got := s.waits.predict("ag-00000000000a"); got != 3400*time.Millisecond {
		t.Errorf("after the restart ag-a's wait = %v, want the learned 3.4s", got)
	}
	if got := s.waits.predict("ag-00000000000b"); got != all || all == 0 {
		t.Errorf("after the restart the deleted ag-b's wait = %v, want the learned average over all agents %v", got, all)
	}
	st := s.Status(ctx)
	if len(st.Agents) != 1 {
		t.Fatalf("recovered %d agents, want ag-a alone", len(st.Agents))
	}
	if got := s.describe(ctx, s.lookup("ag-00000000000a")).PredictedWaitS; got != 3.4 {
		t.Errorf("agent predicted_wait_s = %v, want 3.4", got)
	}
}

// waitUntil polls cond for up to 30 s, the margin of the external tests'
// waitFor (e2e_test.go; a package apart, so the helper is written twice).
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
