package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/fsutil"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TestSimClusterCommand runs tenon sim cluster on a small generated
// workload: the table names every placement and node policy run.
func TestSimClusterCommand(t *testing.T) {
	wfs, err := app.GenerateWorkload("swe", 8, 1, 0, 3, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "w.jsonl")
	if err := fsutil.WriteFile(file, 0o644, func(w io.Writer) error { return trajectory.Write(w, wfs) }); err != nil {
		t.Fatal(err)
	}
	env := newTestEnv()
	if err := runSimCluster(t.Context(), &env.cliEnv, []string{"--workload", file, "--nodes", "2", "--budget", "512MiB", "--request", "p50"}); err != nil {
		t.Fatalf("%v (stderr %s)", err, env.errOut.String())
	}
	out := env.out.String()
	for _, want := range []string{"2 nodes × 512.0 MiB", "headroom        tenon", "requests        tenon", "requests        eager", "request p50 ="} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	env = newTestEnv()
	if err := runSimCluster(t.Context(), &env.cliEnv, []string{"--nodes", "2"}); err == nil || !strings.Contains(env.errOut.String(), "--workload") {
		t.Errorf("no --workload: %v, stderr %q; want a usage error naming --workload", err, env.errOut.String())
	}
}
