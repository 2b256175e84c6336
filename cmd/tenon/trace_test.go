package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TestTraceImportFlagAfterDir: "trace import agentcgroup DIR -o FILE"
// writes FILE and the summary on stderr.
func TestTraceImportFlagAfterDir(t *testing.T) {
	env := newTestEnv()
	out := filepath.Join(t.TempDir(), "imported.jsonl")
	dir := filepath.Join("..", "..", "internal", "trajectory", "agentcgroup", "testdata", "runs")
	if err := runTraceImport(context.Background(), &env.cliEnv, []string{dir, "-o", out}); err != nil {
		t.Fatalf("%v (stderr %q)", err, env.errOut.String())
	}
	wfs, err := trajectory.LoadFile(out)
	if err != nil || len(wfs) != 2 {
		t.Fatalf("%d workflows, %v; want 2", len(wfs), err)
	}
	if s := env.errOut.String(); !strings.Contains(s, "runs 3, imported 2, skipped 1") || !strings.Contains(s, "no tool_calls.json") {
		t.Errorf("summary %q", s)
	}
}
