//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/harness"
	"github.com/tenon-dev/tenon/internal/anchor/heap"
	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
	"github.com/tenon-dev/tenon/internal/swap"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
	"github.com/tenon-dev/tenon/internal/units"
	"github.com/tenon-dev/tenon/internal/workload"
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
	if err := cgroup.RequireRoot(); err != nil {
		return err
	}
	sets, err := replaySets(f)
	if err != nil {
		return err
	}
	ratio, cleanup, err := replaySwap(ctx, env, int64(f.swapSize))
	if err != nil {
		return err
	}
	defer cleanup()

	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return err
	}
	dom, err := cgroup.OpenDomain(ctx, layout, fmt.Sprintf("tenon-harness-%d", os.Getpid()), int64(f.budget), env.log)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = dom.Close(cctx)
	}()
	state, err := os.MkdirTemp("", "tenon-harness-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	be, err := process.New(process.Config{StateDir: state, CgroupParent: dom.Group().Path(), Layout: layout, Logger: env.log})
	if err != nil {
		return err
	}
	defer be.Close()

	o := harness.Options{
		Backend: be, Layout: layout, Grace: f.grace, Lead: f.lead, Sample: f.sample, Ratio: ratio, Log: env.log,
		Heap: harness.HeapSpec{MiB: int(int64(f.heap) / units.MiB), TouchPercent: pct, Step: f.heapStep, RandomPerPage: f.rpp},
	}
	plan := harness.PlanOptions{Exe: "/usr/local/bin/tenon", MaxActions: f.maxActions, WaitScale: f.waitScale, MaxWait: f.maxWait, MaxTool: f.maxTool}
	started := time.Now()
	var pairs []harness.Pair
	n := 0
	for _, s := range sets {
		for _, wf := range s.wfs {
			steps := harness.Plan(wf, plan)
			p := harness.Pair{Set: s.name}
			for _, mode := range []harness.Mode{harness.Baseline, harness.Intents} {
				n++
				fmt.Fprintf(env.stderr, "%s %s %s (%d steps)...\n", s.name, wf.ID, mode, len(steps))
				r, err := harness.Replay(ctx, o, mode, wf.ID, fmt.Sprintf("tenon-harness-%d-%d", os.Getpid(), n), steps)
				if err != nil {
					return fmt.Errorf("replaying %s (%s): %w", wf.ID, mode, err)
				}
				if mode == harness.Baseline {
					p.Baseline = r
				} else {
					p.Intents = r
				}
			}
			pairs = append(pairs, p)
		}
	}
	var totals []harness.Totals
	for _, s := range sets {
		totals = append(totals, harness.Total(pairs, s.name))
	}
	totals = append(totals, harness.Total(pairs, ""))
	var table bytes.Buffer
	harness.WriteTable(&table, pairs, totals)
	fmt.Fprint(env.stdout, table.String())
	fmt.Fprintf(env.stdout, "evaluation wall time %.0f s\n", time.Since(started).Seconds())
	if f.jsonOut != "" {
		b, err := json.MarshalIndent(map[string]any{"command": strings.Join(os.Args, " "), "commit": app.GitCommit(), "machine": app.Machine(),
			"pairs": pairs, "totals": totals, "wall_s": time.Since(started).Seconds()}, "", "  ")
		if err != nil {
			return err
		}
		if err := writeFileBytes(f.jsonOut, append(b, '\n')); err != nil {
			return err
		}
	}
	if f.mdOut != "" {
		md := fmt.Sprintf("# Memory intents: backing memory and harness time\n\nCommand: `%s`\n\nCommit: `%s`\n\nMachine: %s\n\nEvaluation wall time: %.0f s\n\n%s",
			strings.Join(os.Args, " "), app.GitCommit(), app.Machine(), time.Since(started).Seconds(), table.String())
		if err := writeFileBytes(f.mdOut, []byte(md)); err != nil {
			return err
		}
	}
	return nil
}

type workflowSet struct {
	name string
	wfs  []trajectory.Workflow
}

// replaySets generates the swe workflows and picks imported ones: the
// first tracesN (by id) with at least 4 actions.
func replaySets(f replayFlags) ([]workflowSet, error) {
	var sets []workflowSet
	if f.swe > 0 {
		wfs, err := workload.Generate("swe", f.swe, f.seed, workload.Options{})
		if err != nil {
			return nil, err
		}
		sets = append(sets, workflowSet{"swe", wfs})
	}
	if f.traces != "" && f.tracesN > 0 {
		wfs, _, err := agentcgroup.Import(f.traces)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(wfs, func(a, b trajectory.Workflow) int { return strings.Compare(a.ID, b.ID) })
		var pick []trajectory.Workflow
		for _, wf := range wfs {
			if len(wf.Actions) >= 4 && len(pick) < f.tracesN {
				pick = append(pick, wf)
			}
		}
		sets = append(sets, workflowSet{"traces", pick})
	}
	if len(sets) == 0 {
		return nil, errors.New("nothing to replay: set --swe or --traces")
	}
	return sets, nil
}

// replaySwap makes sure swap is on for the run. It first takes the lock
// every user of tenon's zram takes (live tests, other replays), so no one
// turns the swap off under the run; existing swap is then used as is,
// otherwise zram of size is set up and cleanup removes it. ratio reports
// the RAM zram spends per stored byte.
func replaySwap(ctx context.Context, env *cliEnv, size int64) (ratio func() float64, cleanup func(), err error) {
	zramRatio := func() float64 {
		st, err := swap.GetStatus()
		if err != nil || st.MM == nil || st.MM.OrigDataSize == 0 {
			return 0
		}
		return float64(st.MM.MemUsedTotal) / float64(st.MM.OrigDataSize)
	}
	unlock, err := swap.Lock()
	if err != nil {
		return nil, nil, err
	}
	st, err := swap.GetStatus()
	if err != nil {
		unlock()
		return nil, nil, err
	}
	if len(st.Swaps) > 0 {
		if st.Active {
			return zramRatio, unlock, nil
		}
		return nil, unlock, nil // disk swap costs no RAM
	}
	if size <= 0 {
		unlock()
		return nil, nil, errors.New("no swap is on: set --swap SIZE (zram, removed at the end) or run 'tenon swap enable'")
	}
	if err := swap.Enable(ctx, size, env.log); err != nil {
		unlock()
		return nil, nil, fmt.Errorf("setting up zram swap: %w", err)
	}
	return zramRatio, func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := swap.Disable(dctx); err != nil {
			fmt.Fprintf(env.stderr, "tenon harness replay: removing zram swap: %v\n", err)
		}
		unlock()
	}, nil
}
