package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayImageFlag: a workload naming an SWE image fails on the process
// backend with an error that names --image; with --image host (here on
// the fake backend) stderr says what it replaced.
func TestReplayImageFlag(t *testing.T) {
	dir := filepath.Join("..", "..", "internal", "trajectory", "agentcgroup", "testdata", "runs")
	wl := filepath.Join(t.TempDir(), "imported.jsonl")
	env := newTestEnv()
	if err := runTraceImport(context.Background(), &env.cliEnv, []string{"-o", wl, dir}); err != nil {
		t.Fatal(err)
	}
	common := []string{"--workload", wl, "--policy", "eager", "--time-scale", "0.001", "--state-dir", t.TempDir()}

	env = newTestEnv()
	err := runReplay(context.Background(), &env.cliEnv, append(common, "--backend", "process"))
	if err == nil || !strings.Contains(err.Error(), "--image host") || !strings.Contains(err.Error(), "example/alpha:1") {
		t.Fatalf("err %v; want the image and --image host named", err)
	}

	env = newTestEnv()
	if err := runReplay(context.Background(), &env.cliEnv, append(common, "--backend", "fake", "--image", "host")); err != nil {
		t.Fatalf("%v (stderr %q)", err, env.errOut.String())
	}
	if want := `tenon replay: --image host: 1 of 2 workflows named another image; every workflow runs in "host"`; !strings.Contains(env.errOut.String(), want) {
		t.Errorf("stderr %q lacks %q", env.errOut.String(), want)
	}
}
