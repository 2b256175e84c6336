package managed

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/residency"
)

// TestKeepWorkspaces: with Config.KeepWorkspaces the workspace the driver
// names stays in place through a teardown (not captured: the record says
// WorkspaceKept), the rematerialized sandbox is built over it, and
// Release leaves it to its owner; a workspace the host picked is still
// removed with its sandbox.
func TestKeepWorkspaces(t *testing.T) {
	root := t.TempDir()
	b, n, p := newDirBackend(filepath.Join(root, "backend")), newNotes(), &pressureVar{}
	m, err := NewManager(Config{StateDir: filepath.Join(root, "residency"), KeepWorkspaces: true, TimeScale: 60}, n.host(b, "k"), p.get, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	e := &unitEnv{b: b, n: n, p: p, m: m}
	if !m.KeepsWorkspaces() {
		t.Fatal("KeepsWorkspaces() = false")
	}
	ctx := context.Background()

	a := agent("kept", 3)
	a.Workspace = filepath.Join(root, "agents", "kept")
	if err := os.MkdirAll(a.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	id := e.ensure(t, a, true)
	if !m.Host().KeepsWorkspace(id) {
		t.Errorf("KeepsWorkspace(%s) = false for the driver's workspace", id)
	}
	p.set(residency.Yellow)
	if err := m.Boundary(ctx, a, controller.Outcome{Sandbox: id}); err != nil {
		t.Fatal(err)
	}
	m.Residency().Wait()
	rec, err := m.st.LatestRecord(a.ID)
	if err != nil || !rec.WorkspaceKept || len(rec.Artifacts) != 1 {
		t.Fatalf("record after teardown = %+v, %v; want the writable layer alone, WorkspaceKept", rec, err)
	}
	if b, err := os.ReadFile(filepath.Join(a.Workspace, "marker")); err != nil || string(b) != a.ID {
		t.Errorf("workspace while torn down: marker %q, %v; want it kept in place", b, err)
	}
	p.set(residency.Green)
	id2 := e.ensure(t, a, false)
	if id2 == id || !e.hasMarkers(t, id2) {
		t.Errorf("rematerialized %s (was %s): layer and workspace markers %v, want both", id2, id, e.hasMarkers(t, id2))
	}
	if _, ws, _ := m.Host().Paths(ctx, id2); ws != a.Workspace {
		t.Errorf("rematerialized over %s, want %s", ws, a.Workspace)
	}
	if err := m.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(a.Workspace, "marker")); err != nil {
		t.Errorf("Release removed the driver's workspace: %v", err)
	}

	other := agent("picked", 1)
	id3 := e.ensure(t, other, true)
	if m.Host().KeepsWorkspace(id3) {
		t.Errorf("KeepsWorkspace(%s) = true for a workspace the host picked", id3)
	}
	_, ws3, _ := m.Host().Paths(ctx, id3)
	if err := m.Release(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws3); !os.IsNotExist(err) {
		t.Errorf("host-picked workspace %s after Release: %v, want removed", ws3, err)
	}
}
