package replay

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// repoArchive writes a git-archive-like repo.tar.gz (prefix repo/) holding
// pkg/mod.py and returns its path.
func repoArchive(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range []*tar.Header{
		{Name: "repo/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "repo/pkg/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "repo/pkg/mod.py", Typeflag: tar.TypeReg, Mode: 0o644, Size: 6},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tw.Write([]byte("x = 1\n")); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "repo.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func realWF(archive string) trajectory.Workflow {
	return trajectory.Workflow{
		Version: trajectory.Version, ID: "real-1", Kind: "real",
		Workspace: &trajectory.Workspace{Archive: archive, Strip: 1, Mount: "/testbed"},
		Env:       []string{"PYTHONPATH=/opt/pylib"},
		Binds:     []trajectory.Bind{{Source: "/srv/pylib", Target: "/opt/pylib"}},
		Actions: []trajectory.Action{
			{Class: "edit", Command: "/testbed/pkg/mod.py", Edit: &trajectory.FileEdit{Path: "pkg/mod.py", Old: "1", New: "2"}},
			{Class: "test", Command: "python3 -m pytest", Run: "python3 -m pytest"},
		},
	}
}

// TestSeededWorkspace: the archive is unpacked into the attempt's
// workspace, which the sandbox shows again at the mount; binds are
// read-only; env, the working directory and the edit's argv reach the
// requests.
func TestSeededWorkspace(t *testing.T) {
	root := t.TempDir()
	cfg, err := Config{Workflows: []trajectory.Workflow{realWF(repoArchive(t))}, Backend: nopBackend{}, Policy: eager(t), WorkspaceRoot: root}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: cfg, wfs: cfg.Workflows}
	a := &controller.Agent{ID: "real-1", Workflow: &r.wfs[0], Attempt: 1}
	a.Workspace = r.workspace(a)
	if err := seedWorkspace(context.Background(), a.Workflow.Workspace, a.Workspace); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(a.Workspace, "pkg", "mod.py")); err != nil || string(b) != "x = 1\n" {
		t.Fatalf("seeded workspace: pkg/mod.py = %q, %v", b, err)
	}
	spec := r.spec(a)
	wantBinds := []sandbox.Bind{{Source: a.Workspace, Target: "/testbed"}, {Source: "/srv/pylib", Target: "/opt/pylib", ReadOnly: true}}
	if spec.Workspace != a.Workspace || !reflect.DeepEqual(spec.Binds, wantBinds) || !reflect.DeepEqual(spec.Env, []string{"PYTHONPATH=/opt/pylib"}) {
		t.Errorf("spec = %+v", spec)
	}
	edit := r.request(a.Workflow, &a.Workflow.Actions[0])
	wantArgv := []string{DefaultToolPath, "tool", "edit", "--path", "pkg/mod.py", "--old", "1", "--new", "2"}
	if edit.Cwd != "/testbed" || !reflect.DeepEqual(edit.Argv, wantArgv) || edit.Shell != "" {
		t.Errorf("edit request = %+v", edit)
	}
	run := r.request(a.Workflow, &a.Workflow.Actions[1])
	if run.Cwd != "/testbed" || run.Shell != "python3 -m pytest" {
		t.Errorf("run request = %+v", run)
	}
}

func TestSeededWorkspaceConfig(t *testing.T) {
	wf := realWF(repoArchive(t))
	if _, err := (Config{Workflows: []trajectory.Workflow{wf}, Backend: nopBackend{}, Policy: eager(t)}).withDefaults(); !errors.Is(err, ErrConfig) {
		t.Errorf("a seeded workflow without a WorkspaceRoot: %v, want ErrConfig", err)
	}
	wf.Workspace.Archive = filepath.Join(t.TempDir(), "missing.tar.gz")
	if _, err := (Config{Workflows: []trajectory.Workflow{wf}, Backend: nopBackend{}, Policy: eager(t), WorkspaceRoot: t.TempDir()}).withDefaults(); !errors.Is(err, ErrConfig) {
		t.Errorf("a missing archive: %v, want ErrConfig", err)
	}
}

// nopBackend is a Backend that is never called: the tests above only
// build requests and specs.
type nopBackend struct{ sandbox.Backend }

// TestActionPeaks: a completed workflow's result holds each action's
// measured peak (the fake's sandbox memory: its idle footprint and the
// action's profile).
func TestActionPeaks(t *testing.T) {
	res, _, _ := replay(t, eager, []trajectory.Workflow{memWF("w", 0, 100, 50)}, nil)
	w := res.Workflows[0]
	if !w.Completed || len(w.ActionPeaks) != 2 {
		t.Fatalf("workflow %+v", w)
	}
	for i, want := range []int64{100 * units.MiB, 50 * units.MiB} {
		if got := w.ActionPeaks[i]; got < want || got > want+20*units.MiB {
			t.Errorf("action %d peak %d, want %d plus the sandbox's footprint", i, got, want)
		}
	}
}
