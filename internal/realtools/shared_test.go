package realtools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/edittool"
)

// The shared inputs, next to the repository's worktrees; read at run time.
const (
	sharedRepos  = "../../../shared/repos"
	sharedTraces = "../../../shared/traces/agentcgroup-haiku"
)

// sharedInputs skips unless the shared repositories and traces are there.
func sharedInputs(t *testing.T) {
	t.Helper()
	for _, d := range []string{sharedRepos, sharedTraces} {
		if _, err := os.Stat(d); err != nil {
			t.Skipf("the real-tools inputs are missing: %v", err)
		}
	}
}

// TestBuildShared converts the eight shared tasks and applies each one's
// edits, in order, to its unpacked repository: every edit the agent made
// lands, except those into the virtualenv the agent built (scrapy's
// testenv/), which the offline replay does not have.
func TestBuildShared(t *testing.T) {
	sharedInputs(t)
	wfs, m, err := Build(sharedRepos, sharedTraces)
	if err != nil {
		t.Fatal(err)
	}
	if len(wfs) != len(m.Repos) || len(wfs) != 8 {
		t.Fatalf("%d workflows for %d repos, want 8", len(wfs), len(m.Repos))
	}
	for i, w := range wfs {
		repo := m.Repos[i]
		t.Run(repo.Name, func(t *testing.T) {
			runs := 0
			for _, a := range w.Actions {
				if a.Run != "" && a.Class != "install" {
					runs++
				}
			}
			if runs != len(repo.Run) {
				t.Errorf("%d commands, want the %d of the run list", runs, len(repo.Run))
			}
			dir := filepath.Join(t.TempDir(), "ws")
			f, err := os.Open(w.Workspace.Archive)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := archive.ExtractTar(context.Background(), f, dir, w.Workspace.Strip); err != nil {
				t.Fatal(err)
			}
			for j, a := range w.Actions {
				if a.Edit == nil {
					continue
				}
				err := edittool.Apply(dir, *a.Edit)
				inVenv := strings.HasPrefix(a.Edit.Path, "testenv/")
				if (err != nil) != inVenv {
					t.Errorf("action %d, edit of %s: %v", j, a.Edit.Path, err)
				}
				if err == nil && a.Edit.New != "" {
					b, _ := os.ReadFile(filepath.Join(dir, a.Edit.Path))
					if !strings.Contains(string(b), a.Edit.New) {
						t.Errorf("action %d: %s lacks the new text after the edit", j, a.Edit.Path)
					}
				}
			}
		})
	}
}
