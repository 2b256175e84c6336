package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/fsutil"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/sim"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "sim", summary: "run policies on a simulated host (same decision code, simulated clock)", run: runSim})
}

func runSim(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "sim", "",
		"Run memory policies against a discrete-event model of the workload domain.",
		`The gate, admission and predictors are the live decision code, driven by a
simulated clock: no sandboxes are created and runs take seconds, not hours.
Each sandbox follows its actions' memory profiles; the domain OOM-kills the
largest sandbox when usage exceeds the budget and the workflow is retried.
Policies with the gate arm the domain's OOM hold, as live on cgroup v1: an
allocation past the budget waits, and the gate releases the hold to the OOM
killer only after hold= (default the gate's DMax) with nothing progressing (no
sandbox using CPU or resting at its peak while its action runs), or after
hold-max= (default a hundred times hold=, or the action timeout when longer) however busy the others are. With
--cgroup v2 the domain is pure cgroup v2, which has no oom_kill_disable: the
hold is memory.high an eighth below the budget, where the kernel throttles
allocators and the policy freezes them (the freezing hold), and a release lets
them grow on to the budget and the OOM killer.
Policies: `+strings.Join(sim.PolicyNames(), ", ")+`.`)
	file := fs.String("workload", "", "trajectory file (JSONL); empty generates one with --kind, --n, --seed")
	kind := fs.String("kind", "swe", "generated workload kind: swe, science or rl; add the suffix -real (as in swe-real) for the traces' memory scale, action counts and waits")
	n := fs.Int("n", 12, "generated workflows")
	seed := fs.Int64("seed", 1, "seed for generation and the predictors' split")
	timeScale := fs.Float64("time-scale", 1, "compress arrivals, waits and actions by this factor, as a live replay's --time-scale (the gate runs on the compressed clock)")
	var pols listFlag
	fs.Var(&pols, "policy", "policy to run (repeatable or comma list; default eager,static-4,tenon)")
	budget := units.Size(2 << 30)
	fs.Var(&budget, "budget", "workload domain memory budget, e.g. 2GiB")
	retries := fs.Int("retries", sim.DefaultRetries, "retries of a failed workflow after its first attempt")
	create := fs.Duration("create-cost", sim.DefaultCreate, "sandbox creation time")
	teardown := fs.Duration("teardown-cost", sim.DefaultTeardown, "sandbox teardown time")
	remat := fs.Duration("remat-cost", sim.DefaultRematerialize, "sandbox rematerialization time")
	pageOut := fs.Bool("page-out", true, "the host has compressed swap (zram): residency may page idle sandboxes out (false: swap off, the tier is skipped)")
	swapRatio := fs.Float64("swap-ratio", sim.DefaultSwapRatio, "page-out: compressed size over original, what a paged-out sandbox still costs the budget")
	var base units.Size
	fs.Var(&base, "sandbox-mem", "memory of an idle fresh sandbox, e.g. 8MiB")
	var timeout timeoutFlag
	fs.Var(&timeout, "action-timeout", actionTimeoutHelp+" (simulated time, time scale 1)")
	period := fs.Duration("gate-period", 0, "gate sampling period (0: Table 5's 100ms; coarser is faster and less exact)")
	horizon := fs.Duration("horizon", 0, "stop at this simulated time and count unfinished workflows as stalled (0: max(24h, 20x lower bound))")
	train := fs.String("train", "auto", "predictor training: live (policy.TrainPredictor on every workflow, as tenon run/replay), sampled (at most 200 workflows per fold), auto (live up to 1000 workflows)")
	memScale := fs.Float64("mem-scale", 0, "generated workload: multiply every peak and retained amount (0: 1)")
	oversub := fs.Float64("oversub", 0, "generated workload: scale memory so the profiled peaks sum to this multiple of the budget (overrides --mem-scale)")
	params := paramFlag{}
	fs.Var(params, "param", "policy parameter key=value, repeatable, as tenon replay (yellow=, red=, window=, beta=, margin=, light-margin=, hold=, hold-max=, held-budget=, task-reserve=, rollback=; not the live cpu-pacing=)")
	jsonOut := fs.Bool("json", false, "print JSON instead of a table")
	trace := fs.Bool("trace", false, "write a line per simulated lifecycle event (agent start, action queued for admission, start and end, page-out and page-in, freeze and thaw, hold, workflow done) and OOM kill (with every sandbox's memory) to stderr")
	plotOut := fs.String("plot", "", "write a PNG of memory and running actions over time")
	cgroupVer := fs.String("cgroup", "v1", "the domain's cgroup version: v1 (the OOM hold waits at the budget, memory.oom_control) or v2 (the freezing hold at memory.high)")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if len(pols.items) == 0 {
		pols.items = []string{"eager", "static-4", "tenon"}
	}
	if *cgroupVer != "v1" && *cgroupVer != "v2" {
		return fmt.Errorf("--cgroup %q: want v1 or v2 (the workload domain's cgroup version)", *cgroupVer)
	}
	cfg := app.SimConfig{
		WorkloadFile: *file, Kind: *kind, N: *n, Seed: *seed, MemScale: *memScale, Oversub: *oversub, TimeScale: *timeScale,
		Policies: pols.items, Params: params, Budget: int64(budget), Retries: *retries,
		Create: *create, Teardown: *teardown, Rematerialize: *remat, SandboxBase: int64(base),
		Swap:          sim.Swap{Off: !*pageOut, Ratio: *swapRatio},
		ActionTimeout: timeout.config(), GatePeriod: *period, Horizon: *horizon, Train: *train,
		CgroupV2: *cgroupVer == "v2", Warn: env.stderr, Log: env.log,
	}
	if *trace {
		cfg.Trace = env.stderr
	}
	res, err := app.Simulate(ctx, cfg)
	if err != nil {
		return err
	}
	if *plotOut != "" {
		if err := fsutil.WriteFile(*plotOut, 0o644, func(w io.Writer) error { return report.WritePlot(w, res.Comparison) }); err != nil {
			return err
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(simJSON{Comparison: res.Comparison, Holds: res.Holds, Idle: res.Idle})
	}
	if err := report.WriteTable(env.stdout, res.Comparison); err != nil {
		return err
	}
	if err := writeHolds(env.stdout, res.Holds); err != nil {
		return err
	}
	return writeIdle(env.stdout, res.Idle, res.Comparison.BudgetBytes)
}

func init() {
	register(&command{name: "sim scale", summary: "measure the gate's control-iteration cost against the number of sandboxes", run: runSimScale})
}

func runSimScale(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "sim scale", "",
		"Measure gate.Controller.Step wall time per control period for 100 to 10,000 sandboxes.",
		`Each size runs --iters control periods of synthetic sandboxes (half growing),
once with ample memory (green: everything permitted) and once under pressure
(the selection walk of Algorithm 1 over every candidate).`)
	sizes := newListFlag("100", "200", "500", "1000", "2000", "5000", "10000")
	fs.Var(sizes, "sizes", "comma-separated sandbox `counts`")
	iters := fs.Int("iters", 50, "control periods measured per size")
	plotOut := fs.String("plot", "", "write a PNG of step time against sandboxes")
	jsonOut := fs.Bool("json", false, "print JSON")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	counts, err := sizes.ints("--sizes")
	if err != nil {
		return err
	}
	var pts []scalePoint
	for _, n := range counts {
		g, _ := sim.StepCost(n, *iters, gate.Green)
		pr, pp := sim.StepCost(n, *iters, gate.Red)
		pts = append(pts, scalePoint{Sandboxes: n, GreenMS: ms(g), PressureMS: ms(pr), Pressure: pp.String()})
	}
	if *plotOut != "" {
		if err := writeScalePlot(*plotOut, pts); err != nil {
			return err
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(pts)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sandboxes\tgreen step\tpressure step\tpressure\t")
	for _, p := range pts {
		fmt.Fprintf(tw, "%d\t%.3f ms\t%.3f ms\t%s\t\n", p.Sandboxes, p.GreenMS, p.PressureMS, p.Pressure)
	}
	return tw.Flush()
}

type scalePoint struct {
	Sandboxes  int     `json:"sandboxes"`
	GreenMS    float64 `json:"green_step_ms"`
	PressureMS float64 `json:"pressure_step_ms"`
	Pressure   string  `json:"pressure"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func writeScalePlot(path string, pts []scalePoint) error {
	p := plot.New()
	p.Title.Text = "gate control iteration (gate.Controller.Step) cost"
	p.X.Label.Text = "live sandboxes"
	p.Y.Label.Text = "wall time per step (ms)"
	p.Legend.Top = true
	p.Legend.Left = true
	green, press := make(plotter.XYs, len(pts)), make(plotter.XYs, len(pts))
	for i, q := range pts {
		green[i] = plotter.XY{X: float64(q.Sandboxes), Y: q.GreenMS}
		press[i] = plotter.XY{X: float64(q.Sandboxes), Y: q.PressureMS}
	}
	if err := plotutil.AddLinePoints(p, "green (all permitted)", green, "under pressure (selection walk)", press); err != nil {
		return fmt.Errorf("plotting: %w", err)
	}
	// The image format follows the file's extension, as plot.Save does.
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	c, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, format)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return fsutil.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	})
}
