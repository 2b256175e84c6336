package main

import (
	"context"
	"fmt"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "replay", summary: "replay a trajectory file under one or more policies and a memory budget", run: runReplay})
}

func policyHelp() string {
	var s string
	for _, p := range app.Policies() {
		s += fmt.Sprintf("\n  %-20s %s", p.Name, p.Help)
	}
	return s
}

// imageHelp documents --image of replay and bench.
const imageHelp = "run every workflow in this base `image` instead of the one it names " +
	"(imported traces name their SWE image; host: the process backend's only image)"

// overrideImage applies --image (none when image is "") and says on
// stderr what it replaced.
func overrideImage(env *cliEnv, cmd string, wfs []trajectory.Workflow, image string) []trajectory.Workflow {
	if image == "" {
		return wfs
	}
	out, n := app.OverrideImage(wfs, image)
	fmt.Fprintf(env.stderr, "%s: --image %s: %d of %d workflows named another image; every workflow runs in %q\n",
		cmd, image, n, len(wfs), image)
	return out
}

func runReplay(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "replay", "",
		"Replay recorded or generated agent workflows in real sandboxes under a memory budget.",
		`Each workflow arrives at its offset, sleeps its model waits (compressed by
--time-scale), runs each action in its sandbox through the policy, and is
retried with a fresh sandbox after an OOM kill or a timeout (up to --retries
times). Several policies (--policy a,b,c) replay one after the other on the
same schedule and budget, each in a fresh workload domain, and are compared.
Policies:`+policyHelp())
	wl := fs.String("workload", "", "trajectory file (JSONL); required")
	pols := newListFlag("eager", "tenon")
	fs.Var(pols, "policy", "comma-separated `policies` to compare")
	budget := units.Size(2 * units.GiB)
	fs.Var(&budget, "budget", budgetHelp)
	backend := fs.String("backend", "process", "sandbox backend: "+app.BackendNames)
	domain := fs.String("domain", "tenon-replay", "name of the workload domain cgroup")
	stateDir := fs.String("state-dir", "/var/lib/tenon", "where sandboxes' writable layers and workspaces live during the run")
	scale := fs.Float64("time-scale", 1, "multiply arrivals, model waits and tool times (0.5 replays twice as fast)")
	retries := fs.Int("retries", 5, "retries of a failed workflow after its first attempt (0: none)")
	var timeout timeoutFlag
	fs.Var(&timeout, "action-timeout", actionTimeoutHelp)
	params := paramFlag{}
	fs.Var(params, "param", "policy parameter key=value, repeatable: yellow=, red=, window=, beta=, margin=, light-margin=, hold=, hold-max=, held-budget=, task-reserve=, rollback=, cpu-pacing= (e.g. yellow=0.1; see internal/policy/params.go)")
	events := fs.String("events", "", "write the event log (JSONL) to this file")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	plot := fs.String("plot", "", "write a PNG of memory and concurrency over time")
	image := fs.String("image", "", imageHelp)
	actuator := fs.String("actuator", "auto", actuatorHelp)
	idle := fs.Bool("idle-loop", false, idleLoopHelp)
	perAgent := fs.Bool("per-agent", false, "also print, per policy with residency, each agent's floor, teardowns and page-outs")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if *wl == "" {
		fmt.Fprintln(env.stderr, "tenon replay: give the workload with --workload FILE (e.g. workloads/default.jsonl)")
		return errUsage
	}
	if *scale <= 0 {
		return fmt.Errorf("--time-scale must be positive")
	}
	if *retries < 0 {
		return fmt.Errorf("--retries must be >= 0")
	}
	wfs, err := trajectory.LoadFile(*wl)
	if err != nil {
		return err
	}
	wfs = overrideImage(env, "tenon replay", wfs, *image)
	r := *retries
	if r == 0 {
		r = -1 // replay.Config: negative means none
	}
	c, err := app.Replay(ctx, app.ReplayConfig{
		Workflows: wfs, Policies: pols.items, Params: params, Budget: int64(budget),
		Backend: *backend, Domain: *domain, StateDir: *stateDir, TimeScale: *scale,
		Retries: r, ActionTimeout: timeout.config(), EventLog: *events, Actuator: *actuator, IdleLoop: *idle, Progress: env.stderr, Log: env.log,
	})
	if c != nil {
		if werr := writeComparison(env, c, *asJSON, *plot); werr != nil && err == nil {
			err = werr
		}
		if *perAgent && !*asJSON { // the JSON has them anyway
			if werr := report.WriteAgents(env.stdout, c); werr != nil && err == nil {
				err = werr
			}
		}
	}
	return err
}
