package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenon-dev/tenon/internal/bench"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// The shared real-tools inputs, next to the repository's worktrees.
const (
	sharedRepos  = "../../../shared/repos"
	sharedTraces = "../../../shared/traces/agentcgroup-haiku"
)

// TestRealToolsImage: tenon workload real --image and tenon bench
// --only real-tools --image run every workflow, every replicated copy
// included, in the image.
func TestRealToolsImage(t *testing.T) {
	for _, d := range []string{sharedRepos, sharedTraces} {
		if _, err := os.Stat(d); err != nil {
			t.Skipf("the real-tools inputs are missing: %v", err)
		}
	}
	out := filepath.Join(t.TempDir(), "real.jsonl")
	env := newTestEnv()
	if err := runWorkloadReal(context.Background(), &env.cliEnv, []string{"--repos", sharedRepos, "--traces", sharedTraces, "--image", "tenon-real:1", "-o", out}); err != nil {
		t.Fatal(err)
	}
	wfs, err := trajectory.LoadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wfs {
		if w.Image != "tenon-real:1" {
			t.Errorf("workload real: %s runs in %q", w.ID, w.Image)
		}
	}
	cases, err := benchCases(&env.cliEnv, map[string]bool{"only": true}, benchFlagValues{only: []string{bench.GroupRealTools},
		realRepos: sharedRepos, realTraces: sharedTraces, realAgents: 16, image: "tenon-real:1", backend: "process"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 1 || len(cases[0].Workflows) != 16 {
		t.Fatalf("cases %d, want one of 16 workflows", len(cases))
	}
	for _, w := range cases[0].Workflows {
		if w.Image != "tenon-real:1" {
			t.Errorf("bench: %s runs in %q", w.ID, w.Image)
		}
	}
}
