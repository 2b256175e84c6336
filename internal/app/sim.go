package app

import (
	"context"
	"fmt"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"io"
	"log/slog"
	"time"

	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/sim"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/workload"
)

// SimConfig is a run of several policies on the simulated host.
type SimConfig struct {
	// Workflows, when set, are the workload; otherwise WorkloadFile is a
	// trajectory file, and "" generates Kind with N workflows from Seed,
	// memory scaled by MemScale, or by Oversub (see GenerateWorkload).
	Workflows         []trajectory.Workflow
	WorkloadFile      string
	Kind              string
	N                 int
	Seed              int64 // generation and the predictors' split
	MemScale, Oversub float64

	Policies []string // sim.ParsePolicy names
	Params   map[string]string
	Budget   int64
	// TimeScale compresses arrivals, waits and action times as a live
	// replay at that scale does (0 means 1); the lifecycle costs stay.
	TimeScale float64
	Retries   int
	// Costs of the simulated sandbox lifecycle.
	Create, Teardown, Rematerialize time.Duration
	Swap                            sim.Swap // the page-out tier's compressed swap
	SandboxBase                     int64
	// ActionTimeout fails an action that runs longer, frozen time
	// included; 0 means the live replay's default
	// (replay.DefaultActionTimeout at time scale 1), negative none.
	ActionTimeout time.Duration
	GatePeriod    time.Duration
	Horizon       time.Duration
	// Train is how the predictors are trained: live, sampled or auto.
	Train string
	// CgroupV2 simulates a pure cgroup v2 domain: the gate's OOM hold is
	// the freezing hold at cgroup.HoldHigh of the budget (sim.Config.V2).
	CgroupV2 bool

	// Trace, when set, receives a line per simulated lifecycle event and
	// OOM kill, prefixed with the policy.
	Trace io.Writer
	// Warn receives a line per policy whose run left workflows unfinished
	// at the horizon; nil shows none.
	Warn io.Writer
	Log  *slog.Logger // nil discards
}

// SimHold is what the domain's OOM hold did in one simulated run.
type SimHold struct {
	Policy   string `json:"policy"`
	Holds    int    `json:"holds"`    // waits under the hold that began
	Resolved int    `json:"resolved"` // ended with memory freed, no kill
	Released int    `json:"released"` // released to the OOM killer after the timeout
	// Preempted counts the actions the hold preempted to end a deadlock
	// (their attempts restarted, not charged a retry).
	Preempted int `json:"preempted"`
	// RolledBack counts the actions the hold rolled back, each run again
	// in its sandbox (policy's hold_rollback.go).
	RolledBack int     `json:"rolled_back"`
	HeldS      float64 `json:"held_s"` // total time under OOM, seconds
	Waits      int     `json:"waits"`  // sandboxes that waited for memory
	Froze      int     `json:"froze"`  // sandboxes the freezing hold froze (cgroup v2)
}

// SimIdle is how much memory sandboxes running nothing held in one
// simulated run (their floors), and what residency did about it.
type SimIdle struct {
	Policy    string `json:"policy"`
	AvgBytes  int64  `json:"avg_bytes"`  // time average
	PeakBytes int64  `json:"peak_bytes"` // largest sample
	Teardowns int    `json:"teardowns"`
	PageOuts  int    `json:"page_outs"`
	PagedOut  int64  `json:"paged_out_bytes"` // memory the page-outs freed
}

// SimResult is the comparison of the simulated runs, the OOM hold's
// counters and the idle memory per policy.
type SimResult struct {
	Comparison *report.Comparison
	Holds      []SimHold
	Idle       []SimIdle
}

// Simulate runs each policy on the simulated host, with the same
// workload, budget and trained predictors.
func Simulate(ctx context.Context, cfg SimConfig) (*SimResult, error) {
	log := discardLog(cfg.Log)
	specs, needPred, err := simPolicies(cfg.Policies)
	if err != nil {
		return nil, err
	}
	var wfs []trajectory.Workflow
	switch {
	case len(cfg.Workflows) > 0:
		wfs = cfg.Workflows
	case cfg.WorkloadFile != "":
		wfs, err = trajectory.LoadFile(cfg.WorkloadFile)
	default:
		wfs, err = GenerateWorkload(cfg.Kind, cfg.N, cfg.Seed, cfg.MemScale, cfg.Oversub, cfg.Budget)
	}
	if err != nil {
		return nil, err
	}
	scale := cfg.TimeScale
	if scale <= 0 {
		scale = 1
	}
	orig := wfs
	if scale != 1 {
		wfs = replay.Scale(wfs, scale)
	}
	preds, err := trainSim(orig, cfg.Budget, cfg.Seed, cfg.Train, needPred, log)
	if err != nil {
		return nil, err
	}
	var results []*replay.Result
	var holds []SimHold
	var idle []SimIdle
	timeout := actionTimeout(cfg.ActionTimeout, orig, scale)
	for _, sp := range specs {
		sc := sim.Config{Workflows: wfs, Policy: sp, Budget: cfg.Budget, Retries: cfg.Retries,
			Create: cfg.Create, Teardown: cfg.Teardown, Rematerialize: cfg.Rematerialize, SandboxBase: cfg.SandboxBase, Swap: cfg.Swap,
			ActionTimeout: timeout, Horizon: cfg.Horizon, Predictors: preds, TimeScale: scale}
		sc.Gate.Period = cfg.GatePeriod
		if cfg.CgroupV2 {
			sc.V2, sc.HoldLine = true, cgroup.HoldHigh(cfg.Budget)
		}
		if cfg.Trace != nil {
			name := sp.Name
			sc.Debug = func(line string) { fmt.Fprintf(cfg.Trace, "%s %s\n", name, line) }
		}
		if err := sc.ApplyParams(cfg.Params); err != nil {
			return nil, err
		}
		r, err := sim.Run(ctx, sc)
		if err != nil {
			return nil, fmt.Errorf("simulating %s: %w", sp.Name, err)
		}
		if r.Stalled > 0 && cfg.Warn != nil {
			fmt.Fprintf(cfg.Warn, "tenon sim: %s: %d workflows unfinished at the horizon %v (counted as failed)\n",
				sp.Name, r.Stalled, r.Horizon)
		}
		log.Info("simulated", "policy", sp.Name, "events", r.Events, "gate_steps", r.GateSteps,
			"gate_step_wall", r.GateStepWall, "wall", r.Wall, "teardowns", r.Teardowns, "remats", r.Rematerializations, "freezes", r.Freezes, "liveness_admits", r.LivenessAdmits)
		results = append(results, simReplay(r))
		holds = append(holds, SimHold{Policy: sp.Name, Holds: r.Holds, Resolved: r.HoldsResolved,
			Released: r.HoldsReleased, Preempted: r.Preempted, RolledBack: r.Rollbacks, HeldS: r.HoldTime.Seconds(), Waits: r.HoldWaits, Froze: r.HoldFroze})
		idle = append(idle, SimIdle{Policy: sp.Name, AvgBytes: r.IdleMemAvg, PeakBytes: r.IdleMemPeak,
			Teardowns: r.Teardowns, PageOuts: r.PageOuts, PagedOut: r.PagedOutBytes})
	}
	return &SimResult{Comparison: report.Compare(orig, cfg.Budget, scale, results...), Holds: holds, Idle: idle}, nil
}

// simPolicies parses the policy names and returns their specs and the
// predictor kinds they need.
func simPolicies(names []string) ([]sim.Spec, map[string]bool, error) {
	var specs []sim.Spec
	need := map[string]bool{}
	for _, p := range names {
		sp, err := sim.ParsePolicy(p)
		if err != nil {
			return nil, nil, err
		}
		specs = append(specs, sp)
		if sp.Admission {
			need[sp.Predictor] = true
		}
	}
	return specs, need, nil
}

// trainSim trains the predictor kinds in need on wfs (the workload at its
// own time) for the simulator: as the live registry does (live), at most
// 200 workflows per fold (sampled), or live up to 1000 workflows (auto).
// It returns nil when no kind is needed.
func trainSim(wfs []trajectory.Workflow, budget, seed int64, mode string, need map[string]bool, log *slog.Logger) (*sim.Predictors, error) {
	if len(need) == 0 {
		return nil, nil
	}
	var kinds []string
	for _, k := range []string{sim.PredCurrent, sim.PredStatic, sim.PredHistory} {
		if need[k] {
			kinds = append(kinds, k)
		}
	}
	t0 := time.Now()
	var preds *sim.Predictors
	var err error
	switch {
	case mode == "live" || mode == "auto" && len(wfs) <= 1000:
		preds, err = sim.LivePredictors(wfs, budget, kinds)
	case mode == "sampled" || mode == "auto":
		preds, err = sim.NewPredictors(wfs, sim.PredictorOptions{Seed: uint64(seed), Kinds: kinds})
	default:
		return nil, fmt.Errorf("--train %q: want live, sampled or auto", mode)
	}
	if err != nil {
		return nil, err
	}
	log.Info("trained predictors", "kinds", kinds, "mode", mode, "wall", time.Since(t0))
	return preds, nil
}

// GenerateWorkload generates n workflows of kind; with oversub > 0 their
// memory is scaled so that the profiled peaks sum to oversub × budget.
func GenerateWorkload(kind string, n int, seed int64, memScale, oversub float64, budget int64) ([]trajectory.Workflow, error) {
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
