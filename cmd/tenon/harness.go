//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/harness"
	"github.com/tenon-dev/tenon/internal/anchor/heap"
	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "harness heap", summary: "harness stand-in: hold a checksummed heap, touch part of it each step", run: runHarnessHeap})
	register(&command{name: "harness replay", summary: "replay trajectories against a harness with and without memory intents; backing memory and harness time", run: runHarnessReplay})
}

func runHarnessHeap(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "harness heap", "", "Hold a heap of known content, touch part of it each step, verify it on SIGUSR1 or a line on stdin.",
		`Prints "heap ready ... sum=HEX" once filled and "heap verify ok ... sum=HEX" after each
full verification; exits non-zero on "heap verify FAILED".`)
	size := units.Size(300 * units.MiB)
	fs.Var(&size, "heap", "heap size, e.g. 300MiB")
	touch := fs.String("touch", "20%", "share of the heap touched (verified and rewritten) per step")
	step := fs.Duration("step", time.Second, "pause between steps")
	steps := fs.Int("steps", 0, "stop after this many steps (0: until killed)")
	seed := fs.Uint64("seed", 1, "content seed")
	rpp := fs.Int("random-per-page", 4096, "random bytes at the start of each 4 KiB page (4096: incompressible, 1024: ~4x)")
	stdin := fs.Bool("stdin", false, "also verify on every line read from stdin")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	pct, err := parsePercent(*touch)
	if err != nil {
		return fmt.Errorf("--touch: %w", err)
	}
	o := heap.HeapOptions{
		SizeMiB: int(int64(size) / units.MiB), TouchPercent: pct, Step: *step, Steps: *steps,
		Seed: *seed, RandomPerPage: *rpp, Signals: true, Out: env.stdout,
	}
	if *stdin {
		o.In = os.Stdin
	}
	return heap.RunHeap(ctx, o)
}

// parsePercent reads "20%" or "20".
func parsePercent(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if err != nil || n <= 0 || n > 100 {
		return 0, fmt.Errorf("%q is not a percentage in 1..100", s)
	}
	return n, nil
}

type replayFlags struct {
	heap             units.Size
	touch            string
	heapStep         time.Duration
	rpp              int
	swe, tracesN     int
	seed             int64
	traces           string
	maxActions       int
	maxWait, maxTool time.Duration
	waitScale        float64
	grace, lead      time.Duration
	sample           time.Duration
	swapSize         units.Size
	budget           units.Size
	jsonOut, mdOut   string
}

func runHarnessReplay(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "harness replay", "", "Replay trajectories against a harness holding a heap, in a process sandbox, without and with memory intents.",
		`Each workflow runs twice in fresh sandboxes: baseline (no scopes, no page-out) and
intents (tools in per-tool scopes; the harness is frozen and paged out after the
broker's grace during a model wait, prefetched when the reasoning ends, thawed
when the response arrives). Reports the sandbox's backing-memory integral above
its floor (RAM, and RAM plus the zram-compressed swap) and the harness time.
Needs root and swap; --swap sets up zram for the run and always removes it.`)
	var f replayFlags
	f.heap = units.Size(300 * units.MiB)
	fs.Var(&f.heap, "heap", "harness heap size")
	fs.StringVar(&f.touch, "touch", "20%", "share of the heap the harness touches per step")
	fs.DurationVar(&f.heapStep, "heap-step", time.Second, "harness step period")
	fs.IntVar(&f.rpp, "random-per-page", 1024, "random bytes per 4 KiB heap page (1024 compresses ~4x, like an interpreter heap)")
	fs.IntVar(&f.swe, "swe", 2, "number of generated swe workflows")
	fs.Int64Var(&f.seed, "seed", 1, "workload seed")
	fs.StringVar(&f.traces, "traces", "/work/shared/traces/agentcgroup-haiku", "AgentCgroup trace directory (\"\" for none)")
	fs.IntVar(&f.tracesN, "traces-n", 2, "number of imported workflows")
	fs.IntVar(&f.maxActions, "max-actions", 8, "replay the first N actions of each workflow")
	fs.DurationVar(&f.maxWait, "max-wait", 6*time.Second, "cap each model wait")
	fs.Float64Var(&f.waitScale, "wait-scale", 1, "multiply model waits")
	fs.DurationVar(&f.maxTool, "max-tool", 3*time.Second, "cap each tool's ramp+hold")
	fs.DurationVar(&f.grace, "grace", 500*time.Millisecond, "broker grace before a waiting harness is suspended")
	fs.DurationVar(&f.lead, "lead", time.Second, "prefetch this long before the model's response (reasoning end)")
	fs.DurationVar(&f.sample, "sample", 50*time.Millisecond, "memory sampling period")
	f.swapSize = units.Size(2 * units.GiB)
	fs.Var(&f.swapSize, "swap", "zram swap to set up when no swap is on (0: require swap)")
	f.budget = units.Size(4 * units.GiB)
	fs.Var(&f.budget, "budget", "workload domain memory limit")
	fs.StringVar(&f.jsonOut, "json", "", "write results as JSON to this file")
	fs.StringVar(&f.mdOut, "md", "", "write a Markdown report to this file")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	pct, err := parsePercent(f.touch)
	if err != nil {
		return fmt.Errorf("--touch: %w", err)
	}
	res, err := app.HarnessReplay(ctx, app.HarnessConfig{
		SWE: f.swe, Seed: f.seed, Traces: f.traces, TracesN: f.tracesN,
		Heap:  harness.HeapSpec{MiB: int(int64(f.heap) / units.MiB), TouchPercent: pct, Step: f.heapStep, RandomPerPage: f.rpp},
		Plan:  harness.PlanOptions{Exe: "/usr/local/bin/tenon", MaxActions: f.maxActions, WaitScale: f.waitScale, MaxWait: f.maxWait, MaxTool: f.maxTool},
		Grace: f.grace, Lead: f.lead, Sample: f.sample, Swap: int64(f.swapSize), Budget: int64(f.budget),
		Progress: env.stderr, Log: env.log,
	})
	if err != nil {
		return err
	}
	var table bytes.Buffer
	harness.WriteTable(&table, res.Pairs, res.Totals)
	fmt.Fprint(env.stdout, table.String())
	fmt.Fprintf(env.stdout, "evaluation wall time %.0f s\n", res.Wall.Seconds())
	if f.jsonOut != "" {
		b, err := json.MarshalIndent(map[string]any{"command": strings.Join(os.Args, " "), "commit": app.GitCommit(), "machine": app.Machine(),
			"pairs": res.Pairs, "totals": res.Totals, "wall_s": res.Wall.Seconds()}, "", "  ")
		if err != nil {
			return err
		}
		if err := writeFileBytes(f.jsonOut, append(b, '\n')); err != nil {
			return err
		}
	}
	if f.mdOut != "" {
		md := fmt.Sprintf("# Memory intents: backing memory and harness time\n\nCommand: `%s`\n\nCommit: `%s`\n\nMachine: %s\n\nEvaluation wall time: %.0f s\n\n%s",
			strings.Join(os.Args, " "), app.GitCommit(), app.Machine(), res.Wall.Seconds(), table.String())
		if err := writeFileBytes(f.mdOut, []byte(md)); err != nil {
			return err
		}
	}
	return nil
}
