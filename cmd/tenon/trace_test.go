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

// TestTraceReplicate: "trace replicate FILE --copies 3 -o OUT" writes
// three copies of every workflow, renamed and respaced; a bad count fails.
func TestTraceReplicate(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
	env := newTestEnv()
	runs := filepath.Join("..", "..", "internal", "trajectory", "agentcgroup", "testdata", "runs")
	if err := runTraceImport(context.Background(), &env.cliEnv, []string{runs, "-o", in}); err != nil {
		t.Fatal(err)
	}
	env = newTestEnv()
	if err := runTraceReplicate(context.Background(), &env.cliEnv, []string{in, "--copies", "3", "--offset", "10", "-o", out}); err != nil {
		t.Fatalf("%v (stderr %q)", err, env.errOut.String())
	}
	wfs, err := trajectory.LoadFile(out)
	if err != nil || len(wfs) != 6 {
		t.Fatalf("%d workflows, %v; want 6", len(wfs), err)
	}
	if w := wfs[5]; w.ID != "gamma__three-3.attempt_2-r2" || w.Arrival != 20.5 || w.Image != "" {
		t.Errorf("last copy %s at %g s, image %q", w.ID, w.Arrival, w.Image)
	}
	env = newTestEnv()
	if err := runTraceReplicate(context.Background(), &env.cliEnv, []string{in, "--copies", "0"}); err == nil || !strings.Contains(err.Error(), "--copies 0") {
		t.Errorf("--copies 0: %v", err)
	}
}
