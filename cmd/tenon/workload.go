package main

import (
	"context"
	"io"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
	"github.com/tenon-dev/tenon/internal/workload"
)

func init() {
	register(&command{name: "workload gen", summary: "generate a synthetic workload (swe, science, rl) calibrated on real traces", run: runWorkloadGen})
}

func runWorkloadGen(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "workload gen", "",
		"Generate synthetic workflows whose distributions are calibrated on real agent traces.",
		`Kinds: swe (coding tasks), science (fewer, heavier data actions), rl (synchronized
rollout bursts: every workflow arrives at once and heavy actions line up).
Every action is a mem profile, so the workload replays on any backend.`)
	kind := fs.String("kind", "swe", "workload kind: swe, science or rl; add the suffix -real (as in swe-real) for the traces' memory scale, action counts and waits")
	n := fs.Int("n", 12, "number of workflows (0 with --qps and --window: qps×window)")
	seed := fs.Int64("seed", 1, "random seed (same seed, same workload)")
	dup := fs.Bool("duplicate", false, "make every workflow identical (adversarial burst)")
	qps := fs.Float64("qps", 0, "offered load in workflows per second (0: all arrive at once)")
	window := fs.Float64("window", 0, "submission window in seconds")
	memScale := fs.Float64("mem-scale", 1, "multiply every memory amount")
	timeScale := fs.Float64("time-scale", 1, "multiply every wait and duration")
	waitScale := fs.Float64("wait-scale", 1, "multiply model waits (on top of --time-scale)")
	maxWait := fs.Float64("max-wait", 0, "cap each model wait, seconds (0: no cap)")
	maxDur := fs.Float64("max-duration", 0, "cap each action duration, seconds (0: no cap)")
	var maxPeak units.Size
	fs.Var(&maxPeak, "max-peak", "cap each action's peak memory, e.g. 1200MiB (0: no cap)")
	heavy := fs.Float64("heavy-share", 0, "share of heavy actions (0: as calibrated)")
	out := fs.String("o", "-", "output trajectory file (JSONL); - for stdout")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	wfs, err := workload.Generate(*kind, *n, *seed, workload.Options{
		Duplicate: *dup, QPS: *qps, Window: *window,
		MemScale: *memScale, TimeScale: *timeScale, WaitScale: *waitScale,
		MaxWaitS: *maxWait, MaxDurationS: *maxDur, MaxPeakMiB: float64(maxPeak) / float64(units.MiB),
		HeavyShare: *heavy,
	})
	if err != nil {
		return err
	}
	return writeOutput(env, *out, func(w io.Writer) error { return trajectory.Write(w, wfs) })
}
