package residency

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenon-dev/tenon/internal/store"
)

// keepingHost is a fake host that keeps each agent's workspace in place
// (<root>/kept-<agent>) across its sandboxes (WorkspaceKeeper).
type keepingHost struct{ *fakeHost }

func (k keepingHost) KeepsWorkspace(string) bool { return true }

func (k keepingHost) Create(ctx context.Context, spec Spec) (string, error) {
	if spec.WorkspaceFrom != "" {
		return "", errors.New("fake: a kept workspace was restored")
	}
	id, err := k.fakeHost.Create(ctx, spec)
	if err != nil {
		return "", err
	}
	kept := filepath.Join(k.root, "kept-"+spec.AgentID)
	if err := os.MkdirAll(kept, 0o755); err != nil {
		return "", err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.boxes[id]
	if err := os.Remove(b.ws); err != nil {
		return "", err
	}
	b.ws = kept
	return id, nil
}

// TestTeardownKeptWorkspace: with a host that keeps workspaces, a teardown
// captures and parks only the writable layer (the record says
// WorkspaceKept), the workspace stays where it is with its files, and the
// rematerialized sandbox restores the writable layer and is built over
// the same workspace (no WorkspaceFrom).
func TestTeardownKeptWorkspace(t *testing.T) {
	ctx := context.Background()
	e := newEnvWith(t, nil, func(h *fakeHost) Host { return keepingHost{h} })
	id, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	populate(t, e.host, id)
	upper, ws, _ := e.host.Paths(ctx, id)
	wantU, wantW := tree(t, upper), tree(t, ws)
	if _, err := e.m.Boundary(ctx, "a", clean); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Teardown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	rec, err := e.st.LatestRecord("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rec.Artifact(store.ArtifactWorkspace); ok || !rec.WorkspaceKept || len(rec.Artifacts) != 1 {
		t.Errorf("record = %+v, want the writable layer alone and WorkspaceKept", rec)
	}
	sameTree(t, "kept workspace while absent", wantW, tree(t, ws))
	if ps, _ := filepath.Glob(filepath.Join(e.dir, "state/parked/*-"+store.ArtifactWorkspace)); len(ps) != 0 {
		t.Errorf("kept workspace parked: %v", ps)
	}
	if mt := e.m.Metrics(); mt.BytesCaptured != rec.Artifacts[0].Ref.Written {
		t.Errorf("bytes captured %d, want the writable layer's %d", mt.BytesCaptured, rec.Artifacts[0].Ref.Written)
	}

	id2, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	upper2, ws2, _ := e.host.Paths(ctx, id2)
	if ws2 != ws {
		t.Errorf("rematerialized over workspace %s, want the kept %s", ws2, ws)
	}
	sameTree(t, "writable layer", wantU, tree(t, upper2))
	sameTree(t, "workspace", wantW, tree(t, ws2))
	if last := e.host.created[len(e.host.created)-1]; last.UpperFrom == "" || last.WorkspaceFrom != "" {
		t.Errorf("remat spec = %+v, want a restored writable layer and no WorkspaceFrom", last)
	}
	dirEmpty(t, filepath.Join(e.dir, "state/staging"))
}
