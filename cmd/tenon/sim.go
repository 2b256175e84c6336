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

	"github.com/tenon-dev/tenon/internal/fsutil"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/sim"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
	"github.com/tenon-dev/tenon/internal/workload"
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
killer only after hold= (default the gate's DMax) with no action running, or
after ten times that.
Policies: `+strings.Join(sim.PolicyNames(), ", ")+`.`)
	file := fs.String("workload", "", "trajectory file (JSONL); empty generates one with --kind, --n, --seed")
	kind := fs.String("kind", "swe", "generated workload kind: swe, science or rl")
	n := fs.Int("n", 12, "generated workflows")
	seed := fs.Int64("seed", 1, "seed for generation and the predictors' split")
	var pols listFlag
	fs.Var(&pols, "policy", "policy to run (repeatable or comma list; default eager,static-4,tenon)")
	budget := units.Size(2 << 30)
	fs.Var(&budget, "budget", "workload domain memory budget, e.g. 2GiB")
	retries := fs.Int("retries", sim.DefaultRetries, "retries of a failed workflow after its first attempt")
	create := fs.Duration("create-cost", sim.DefaultCreate, "sandbox creation time")
	teardown := fs.Duration("teardown-cost", sim.DefaultTeardown, "sandbox teardown time")
	remat := fs.Duration("remat-cost", sim.DefaultRematerialize, "sandbox rematerialization time")
	var base units.Size
	fs.Var(&base, "sandbox-mem", "memory of an idle fresh sandbox, e.g. 8MiB")
	timeout := fs.Duration("action-timeout", 0, "fail an attempt whose action runs longer, frozen time included (0: none)")
	period := fs.Duration("gate-period", 0, "gate sampling period (0: Table 5's 100ms; coarser is faster and less exact)")
	horizon := fs.Duration("horizon", 0, "stop at this simulated time and count unfinished workflows as stalled (0: max(24h, 20x lower bound))")
	train := fs.String("train", "auto", "predictor training: live (policy.TrainPredictor on every workflow, as tenon run/replay), sampled (at most 200 workflows per fold), auto (live up to 1000 workflows)")
	memScale := fs.Float64("mem-scale", 0, "generated workload: multiply every peak and retained amount (0: 1)")
	oversub := fs.Float64("oversub", 0, "generated workload: scale memory so the profiled peaks sum to this multiple of the budget (overrides --mem-scale)")
	params := paramFlag{}
	fs.Var(params, "param", "policy parameter key=value, repeatable, as tenon replay (yellow=, red=, window=, beta=, margin=, hold=)")
	jsonOut := fs.Bool("json", false, "print JSON instead of a table")
	trace := fs.Bool("trace", false, "write a line per simulated lifecycle event and OOM kill (with every sandbox's memory) to stderr")
	plotOut := fs.String("plot", "", "write a PNG of memory and running actions over time")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(env.stderr, "tenon sim: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if len(pols.items) == 0 {
		pols.items = []string{"eager", "static-4", "tenon"}
	}
	var specs []sim.Spec
	needPred := map[string]bool{}
	for _, p := range pols.items {
		sp, err := sim.ParsePolicy(p)
		if err != nil {
			return err
		}
		specs = append(specs, sp)
		if sp.Admission {
			needPred[sp.Predictor] = true
		}
	}
	var wfs []trajectory.Workflow
	var err error
	if *file != "" {
		wfs, err = trajectory.LoadFile(*file)
	} else {
		wfs, err = generateSim(*kind, *n, *seed, *memScale, *oversub, int64(budget))
	}
	if err != nil {
		return err
	}
	var preds *sim.Predictors
	if len(needPred) > 0 {
		var kinds []string
		for _, k := range []string{sim.PredCurrent, sim.PredStatic, sim.PredHistory} {
			if needPred[k] {
				kinds = append(kinds, k)
			}
		}
		t0 := time.Now()
		switch mode := *train; {
		case mode == "live" || mode == "auto" && len(wfs) <= 1000:
			preds, err = sim.LivePredictors(wfs, int64(budget), kinds)
		case mode == "sampled" || mode == "auto":
			preds, err = sim.NewPredictors(wfs, sim.PredictorOptions{Seed: uint64(*seed), Kinds: kinds})
		default:
			return fmt.Errorf("--train %q: want live, sampled or auto", mode)
		}
		if err != nil {
			return err
		}
		env.log.Info("trained predictors", "kinds", kinds, "mode", *train, "wall", time.Since(t0))
	}
	var results []*replay.Result
	var holds []simHold
	for _, sp := range specs {
		cfg := sim.Config{Workflows: wfs, Policy: sp, Budget: int64(budget), Retries: *retries,
			Create: *create, Teardown: *teardown, Rematerialize: *remat, SandboxBase: int64(base),
			ActionTimeout: *timeout, Horizon: *horizon, Predictors: preds}
		cfg.Gate.Period = *period
		if *trace {
			name := sp.Name
			cfg.Debug = func(line string) { fmt.Fprintf(env.stderr, "%s %s\n", name, line) }
		}
		if err := cfg.ApplyParams(params); err != nil {
			return err
		}
		r, err := sim.Run(ctx, cfg)
		if err != nil {
			return fmt.Errorf("simulating %s: %w", sp.Name, err)
		}
		if r.Stalled > 0 {
			fmt.Fprintf(env.stderr, "tenon sim: %s: %d workflows unfinished at the horizon %v (counted as failed)\n",
				sp.Name, r.Stalled, r.Horizon)
		}
		env.log.Info("simulated", "policy", sp.Name, "events", r.Events, "gate_steps", r.GateSteps,
			"gate_step_wall", r.GateStepWall, "wall", r.Wall, "teardowns", r.Teardowns, "remats", r.Rematerializations, "freezes", r.Freezes, "liveness_admits", r.LivenessAdmits)
		results = append(results, r.Replay())
		holds = append(holds, simHold{Policy: sp.Name, Holds: r.Holds, Resolved: r.HoldsResolved,
			Released: r.HoldsReleased, HeldS: r.HoldTime.Seconds(), Waits: r.HoldWaits})
	}
	cmp := report.Compare(wfs, int64(budget), 1, results...)
	if *plotOut != "" {
		if err := fsutil.WriteFile(*plotOut, 0o644, func(w io.Writer) error { return report.WritePlot(w, cmp) }); err != nil {
			return err
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(simJSON{Comparison: cmp, Holds: holds})
	}
	if err := report.WriteTable(env.stdout, cmp); err != nil {
		return err
	}
	return writeHolds(env.stdout, holds)
}

// generateSim generates a workload; with oversub > 0 its memory is scaled
// so that the profiled peaks sum to oversub × budget.
func generateSim(kind string, n int, seed int64, memScale, oversub float64, budget int64) ([]trajectory.Workflow, error) {
	opts := workload.Options{MemScale: memScale}
	wfs, err := workload.Generate(kind, n, seed, opts)
	if err != nil || oversub <= 0 {
		return wfs, err
	}
	if r := trajectory.Oversubscription(wfs, budget); r > 0 {
		opts.MemScale = max(memScale, 1) * oversub / r
		return workload.Generate(kind, n, seed, opts)
	}
	return wfs, nil
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
