package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
	"github.com/tenon-dev/tenon/workloads"
)

func init() {
	register(&command{name: "run", summary: "the main job: replay the bundled workload oversubscribed, Eager vs tenon, and compare", run: runMain})
}

func runMain(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "run", "",
		"Replay the bundled workload under an oversubscribing budget, without control (Eager) and with tenon, and compare.",
		`The bundled workload is 12 SWE-like agent workflows (workloads/default.jsonl,
embedded in the binary) whose profiled peaks add up to 4.75x a 2 GiB budget.
Each policy replays it in real sandboxes (the embedded process backend) under a
fresh workload-domain cgroup limited to --budget; workflows hit by an OOM kill
or a sandbox timeout (--action-timeout) are retried up to 5 times. The table
compares makespan, goodput, latency, peak memory, OOM kills and timeouts;
makespan and latency are over every workflow, so a policy that gave up on one
shows "dnf" and "did not finish N of M" instead of a speedup. The plot shows
domain memory and running actions over time.
Needs root. Takes a few minutes.`)
	budget := units.Size(2 * units.GiB)
	fs.Var(&budget, "budget", budgetHelp)
	pols := newListFlag("eager", "tenon")
	fs.Var(pols, "policy", "comma-separated `policies` to compare")
	backend := fs.String("backend", "process", "sandbox backend: "+app.BackendNames)
	stateDir := fs.String("state-dir", "/var/lib/tenon", "where sandboxes' writable layers and workspaces live during the run")
	scale := fs.Float64("time-scale", 1, "multiply arrivals, model waits and tool times")
	plot := fs.String("plot", "tenon-run.png", "write a PNG of memory and concurrency over time (\"\" for none)")
	events := fs.String("events", "", "write the event log (JSONL) to this file")
	var timeout timeoutFlag
	fs.Var(&timeout, "action-timeout", actionTimeoutHelp)
	idle := fs.Bool("idle-loop", false, idleLoopHelp)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if *scale <= 0 {
		return fmt.Errorf("--time-scale must be positive")
	}
	wfs, err := trajectory.Load(bytes.NewReader(workloads.Default))
	if err != nil {
		return fmt.Errorf("bundled workload: %w", err)
	}
	fmt.Fprintf(env.stderr, "tenon run: %d workflows, budget %s, oversubscription %.2fx, policies %s\n",
		len(wfs), units.FormatSize(int64(budget)), trajectory.Oversubscription(wfs, int64(budget)), pols)
	c, err := app.Replay(ctx, app.ReplayConfig{
		Workflows: wfs, Policies: pols.items, Budget: int64(budget),
		Backend: *backend, Domain: "tenon-run", StateDir: *stateDir, TimeScale: *scale, ActionTimeout: timeout.config(), EventLog: *events, IdleLoop: *idle,
		Progress: env.stderr, Log: env.log,
	})
	if c != nil {
		if werr := writeComparison(env, c, *asJSON, *plot); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}
