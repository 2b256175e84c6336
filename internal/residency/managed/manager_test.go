package managed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
	"github.com/tenon-dev/tenon/internal/store"
)

type unitEnv struct {
	b *dirBackend
	n *notes
	p *pressureVar
	m *Manager
}

func newUnitEnv(t *testing.T, scale float64) *unitEnv {
	t.Helper()
	root := t.TempDir()
	e := &unitEnv{b: newDirBackend(filepath.Join(root, "backend")), n: newNotes(), p: &pressureVar{}}
	m, err := NewManager(Config{StateDir: filepath.Join(root, "residency"), TimeScale: scale}, e.n.host(e.b, "u"), e.p.get, nil)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	e.m = m
	return e
}

// ensure runs Ensure and writes a marker into the new sandbox's layer and
// workspace when write is set.
func (e *unitEnv) ensure(t *testing.T, a *controller.Agent, write bool) string {
	t.Helper()
	id, err := e.m.Ensure(context.Background(), a)
	if err != nil {
		t.Fatalf("Ensure(%s): %v", a.ID, err)
	}
	if a.SandboxID != id {
		t.Errorf("a.SandboxID = %q, want %q", a.SandboxID, id)
	}
	if write {
		up, ws, err := e.m.Host().Paths(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(up, "opt"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(up, "opt", "marker"), []byte(a.ID), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "marker"), []byte(a.ID), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func (e *unitEnv) hasMarkers(t *testing.T, id string) bool {
	t.Helper()
	up, ws, err := e.m.Host().Paths(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	_, e1 := os.Stat(filepath.Join(up, "opt", "marker"))
	_, e2 := os.Stat(filepath.Join(ws, "marker"))
	return e1 == nil && e2 == nil
}

func TestBoundaryVerdicts(t *testing.T) {
	tests := []struct {
		name         string
		outcome      func(o *controller.Outcome)
		background   int
		wantTeardown bool
	}{
		{"finished", func(*controller.Outcome) {}, 0, true},
		{"non-zero exit finished", func(o *controller.Outcome) { o.Exit = 2 }, 0, true},
		{"background process", func(*controller.Outcome) {}, 1, false},
		{"sandbox error", func(o *controller.Outcome) { o.Err = errors.New("lost") }, 0, false},
		{"oom", func(o *controller.Outcome) { o.OOM = true }, 0, false},
		{"timeout", func(o *controller.Outcome) { o.TimedOut = true }, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newUnitEnv(t, 60) // 60 s waits: yellow reclaims (they amortize the way back)
			e.p.set(residency.Yellow)
			a := agent("a", 3)
			id := e.ensure(t, a, true)
			e.b.setBackground(id, tt.background)
			o := controller.Outcome{Index: 0, Sandbox: id}
			tt.outcome(&o)
			if err := e.m.Boundary(context.Background(), a, o); err != nil {
				t.Fatalf("Boundary: %v", err)
			}
			e.m.Residency().Wait()
			if gone := !alive(e.b, id); gone != tt.wantTeardown {
				t.Fatalf("sandbox torn down: %v, want %v", gone, tt.wantTeardown)
			}
			if live := e.n.live(t); slices.Contains(live, id) == tt.wantTeardown {
				t.Errorf("Up/Down say live %v; torn down %v", live, tt.wantTeardown)
			}
			a.Next = 1
			id2 := e.ensure(t, a, false)
			if (id2 != id) != tt.wantTeardown {
				t.Errorf("second Ensure: sandbox %s, first %s, teardown %v", id2, id, tt.wantTeardown)
			}
			if !e.hasMarkers(t, id2) {
				t.Errorf("files lost in sandbox %s", id2)
			}
			if !slices.Contains(e.n.live(t), id2) {
				t.Errorf("sandbox %s not announced", id2)
			}
			if err := e.m.Release(context.Background(), a); err != nil {
				t.Errorf("Release: %v", err)
			}
			if live := e.n.live(t); len(live) != 0 || e.b.count() != 0 {
				t.Errorf("after Release: live %v, backend holds %d", live, e.b.count())
			}
		})
	}
}

// TestPredictedWait: a replay's boundary hands residency the wait learned
// from the agent's earlier waits (scaled), never the next action's own.
func TestPredictedWait(t *testing.T) {
	tests := []struct {
		name    string
		waits   []float64 // seconds, of each action
		scale   float64
		index   int
		reclaim bool
	}{
		// default cost priors: 0.5 s teardown + 1 s rematerialization
		{"long wait amortizes", []float64{100, 100, 100}, 1, 0, true},
		{"scaled down wait does not", []float64{100, 100, 100}, 0.001, 0, false},
		{"short wait does not", []float64{1, 1, 1}, 1, 0, false},
		{"last action has no next wait", []float64{100, 100, 100}, 1, 2, false},
		// What was seen, not what comes: a short wait then a long one is
		// predicted short, a long one then a short one long.
		{"the next long wait is not known", []float64{1, 100, 100}, 1, 0, false},
		{"the next short wait is not known", []float64{100, 1, 1}, 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newUnitEnv(t, tt.scale)
			a := agent("w", 3)
			for i := range a.Workflow.Actions {
				a.Workflow.Actions[i].Wait = tt.waits[i]
			}
			a.Next = tt.index
			id := e.ensure(t, a, false)
			if err := e.m.Boundary(context.Background(), a, controller.Outcome{Index: tt.index, Sandbox: id}); err != nil {
				t.Fatal(err)
			}
			e.m.Residency().Wait()
			if gone := !alive(e.b, id); gone != tt.reclaim {
				t.Errorf("reclaimed under green: %v, want %v", gone, tt.reclaim)
			}
		})
	}
}

func TestReleaseStartsClean(t *testing.T) {
	e := newUnitEnv(t, 60) // 60 s waits: yellow reclaims (they amortize the way back)
	e.p.set(residency.Yellow)
	a := agent("r", 3)
	id := e.ensure(t, a, true)
	if err := e.m.Boundary(context.Background(), a, controller.Outcome{Sandbox: id}); err != nil {
		t.Fatal(err)
	}
	e.m.Residency().Wait()
	if _, err := e.m.st.LatestRecord(a.ID); err != nil {
		t.Fatalf("no record after teardown: %v", err)
	}
	if err := e.m.Release(context.Background(), a); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if a.SandboxID != "" {
		t.Errorf("SandboxID %q after Release", a.SandboxID)
	}
	if _, err := e.m.st.LatestRecord(a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("record after Release: %v", err)
	}
	a.Attempt, a.Next = 2, 0
	id2 := e.ensure(t, a, false)
	if e.hasMarkers(t, id2) {
		t.Errorf("a new attempt sees the old attempt's files")
	}
	if err := e.m.Release(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Release(context.Background(), agent("never-ensured", 1)); err != nil {
		t.Errorf("Release of an unknown agent: %v", err)
	}
}

// noRestore hides SupportsRootfsFrom.
type noRestore struct{ *dirBackend }

func (noRestore) SupportsRootfsFrom() bool { return false }

func TestNewHostNeedsLayers(t *testing.T) {
	tests := []struct {
		name string
		b    sandbox.Backend
		want error
	}{
		{"no writable layer", fake.New(fake.Options{}), ErrNoWritableLayer},
		{"no restore", noRestore{newDirBackend(t.TempDir())}, ErrNoRestore},
		{"ok", newDirBackend(t.TempDir()), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewHost(HostConfig{Backend: tt.b, Dir: t.TempDir()})
			if !errors.Is(err, tt.want) {
				t.Errorf("NewHost: %v, want %v", err, tt.want)
			}
		})
	}
}
