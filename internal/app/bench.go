package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/bench"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/sim"
)

// BenchFallbackStatic replaces the best static when no static sweep ran.
const BenchFallbackStatic = "static-4"

// benchRetries is how often a bench run retries a workflow after an OOM
// kill or a timeout, live or simulated.
const benchRetries = 5

// BenchConfig is a run of the benchmark matrix.
type BenchConfig struct {
	Cases    []bench.Case
	Backend  string // one of BackendNames
	Domain   string // name of the workload domain cgroup
	StateDir string // where each replay's run directory is made
	// ActionTimeout is ReplayConfig's: 0 the default, negative none.
	ActionTimeout time.Duration
	// OutDir receives the results files (bench.WriteResults); EventsDir,
	// when set, each case's event log as <case>.jsonl.
	OutDir, EventsDir string
	// Meta describes the run in the results files; Commit, Dirty, Machine,
	// Started and Wall are filled in by Run.
	Meta bench.Meta
	// Sim runs every case on the simulated host (Simulate, at the case's
	// time scale, with the simulator's measured lifecycle costs) instead
	// of replaying it: no sandbox, no root, seconds per case. Backend,
	// Domain, StateDir and EventsDir are then unused.
	Sim bool
	// Actuator is how the gate holds denied sandboxes back in every live
	// replay (one of ActuatorNames). "" is the freezer, not auto as for
	// tenon replay: by default the bench's results compare across hosts,
	// with and without sched_ext. The simulator has only the freezer.
	Actuator string
	// IdleLoop: the process backend's executors make way for the idle
	// loop between actions in every live replay (process.Config.IdleLoop;
	// the simulated host has no executor to replace).
	IdleLoop bool

	// Resume are the outcomes of an earlier run of the same commit and
	// command (tenon bench --resume; bench.Config.Done): its complete
	// cases are taken, not replayed. ResumedFrom describes that run for
	// the results files ("the run started ... on ...").
	Resume      []bench.Outcome
	ResumedFrom string

	// Progress receives the estimate and a progress bar per replay; nil
	// shows none.
	Progress io.Writer
	Log      *slog.Logger // nil discards
}

// BenchPlan is a benchmark run ready to start: every policy of every case
// built once, so that a bad name or parameter fails before any replay.
type BenchPlan struct {
	cfg  BenchConfig
	runs map[string]map[string]policyRun // case name -> policy -> its run
	// pacing is the gate's actuator (openActuator) for every live
	// replay, nil for the freezer; closeActuator unloads it (Close).
	pacing        *live.Pacing
	closeActuator func()
}

// PlanBench builds the policies of every case, and loads the gate's
// actuator (Actuator) for them: the caller must Close the plan. The static
// sweep's best (bench.BestStatic) is known only once the sweep ran; it is
// built when its case starts.
func PlanBench(cfg BenchConfig) (plan *BenchPlan, err error) {
	p := &BenchPlan{cfg: cfg, runs: map[string]map[string]policyRun{}, closeActuator: func() {}}
	if cfg.Sim {
		if cfg.Actuator != "" && cfg.Actuator != "freezer" {
			return nil, fmt.Errorf("actuator %q: the simulated host has only the freezer", cfg.Actuator)
		}
		if cfg.IdleLoop {
			return nil, errors.New("--idle-loop: the simulated host has no sandbox executor to replace")
		}
		return p, checkSimPolicies(cfg.Cases)
	}
	if cfg.IdleLoop && cfg.Backend != "process" {
		return nil, fmt.Errorf("--idle-loop: the %s backend has no idle loop, only the process backend has", cfg.Backend)
	}
	kind := cfg.Actuator
	if kind == "" {
		kind = "freezer"
	}
	var names []string
	for _, c := range cfg.Cases {
		names = append(names, c.Policies...)
	}
	if p.pacing, p.closeActuator, err = openActuator(kind, names, discardLog(cfg.Log)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	p.cfg.Cases = slices.Clone(cfg.Cases)
	for i, c := range p.cfg.Cases {
		wfs, err := checkImages(cfg.Backend, cfg.StateDir, c.Workflows)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.Name, err)
		}
		c.Workflows = wfs
		p.cfg.Cases[i] = c
		rc := p.replayConfig(c, 0, "")
		p.runs[c.Name] = map[string]policyRun{}
		for _, name := range c.Policies {
			if name == bench.BestStatic {
				continue
			}
			r, err := rc.buildRun(name, p.pacing)
			if err != nil {
				return nil, fmt.Errorf("case %s: %w", c.Name, err)
			}
			p.runs[c.Name][name] = r
		}
	}
	return p, nil
}

// Close unloads the gate's actuator, if the plan loaded one (the sched_ext
// scheduler); call it once the plan has run or will not.
func (p *BenchPlan) Close() {
	p.closeActuator()
	p.closeActuator = func() {}
}

// replayConfig is repetition rep (from 0) of case c; label prefixes its
// progress bars.
func (p *BenchPlan) replayConfig(c bench.Case, rep int, label string) ReplayConfig {
	return ReplayConfig{
		Workflows: c.Workflows, Params: c.Params, Budget: c.Budget,
		Backend: p.cfg.Backend, Domain: p.cfg.Domain, StateDir: p.cfg.StateDir, TimeScale: c.TimeScale,
		Retries: benchRetries, ActionTimeout: p.cfg.ActionTimeout, Label: label, EventLog: caseEventLog(p.cfg.EventsDir, c, rep),
		IdleLoop: p.cfg.IdleLoop, Progress: p.cfg.Progress, Log: p.cfg.Log,
	}
}

// BenchRun is what a benchmark run produced.
type BenchRun struct {
	Meta    bench.Meta
	Results *bench.Results
	Files   []string // the results files written, the Markdown and JSON first
}

// Run replays every case under its policies and writes the results files.
// A failed case does not stop the run; a cancelled context stops it after
// the replay in flight and the results so far are written, marked partial.
// The run is returned also with an error when cases failed or the run was
// interrupted; it is nil when the results could not be written.
func (p *BenchPlan) Run(ctx context.Context) (*BenchRun, error) {
	cfg := p.cfg
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating --out-dir: %w", err)
	}
	if cfg.EventsDir != "" {
		if err := os.MkdirAll(cfg.EventsDir, 0o755); err != nil {
			return nil, fmt.Errorf("creating --events-dir: %w", err)
		}
	}
	meta := cfg.Meta
	meta.Commit, meta.Dirty, meta.Started = GitCommit(), GitDirty(), time.Now()
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	if cfg.Sim {
		fmt.Fprintf(progress, "tenon bench: %d cases, simulated\n", len(cfg.Cases))
	} else {
		fmt.Fprintf(progress, "tenon bench: %d cases, estimated %s\n", len(cfg.Cases), bench.Estimate(cfg.Cases).Round(time.Minute))
	}
	var label string
	host := Host() // the same for every case of this run
	resumed := func(r *bench.Results) {
		n, reps := 0, 0
		for _, o := range r.Outcomes {
			switch {
			case o.Resumed:
				n++
			case o.ResumedReps > 0:
				reps++
			}
		}
		var parts []string
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d cases taken from it", n, r.Cases))
		}
		if reps > 0 {
			parts = append(parts, fmt.Sprintf("%d case(s) went on from the repetitions it had completed", reps))
		}
		meta.Resumed = ""
		if len(parts) > 0 {
			meta.Resumed = fmt.Sprintf("%s: %s", cfg.ResumedFrom, strings.Join(parts, "; "))
		}
	}
	for _, o := range cfg.Resume {
		if o.Err != nil && o.Complete > 0 && o.Host != "" && o.Host != host {
			fmt.Fprintf(progress, "tenon bench: %s: the earlier run's %d repetitions of it were made on another machine (%s; this one: %s), so it runs whole\n",
				o.Case.Name, o.Complete, o.Host, host)
		}
	}
	res := bench.Run(ctx, cfg.Cases, bench.Config{
		FallbackStatic: BenchFallbackStatic,
		Done:           cfg.Resume,
		Host:           host,
		AfterCase: func(r *bench.Results) {
			if last := r.Outcomes[len(r.Outcomes)-1]; last.Resumed {
				fmt.Fprintf(progress, "[%d/%d] %s: taken from the earlier run\n", len(r.Outcomes), r.Cases, last.Case.Name)
			}
		},
		// After each case and each repetition the results so far are
		// written, as at the end: a run stopped for good (a killed
		// process, a lost machine) leaves them for --resume.
		Checkpoint: func(r *bench.Results) {
			if !r.Partial() {
				return // written below
			}
			resumed(r)
			m := meta
			m.Wall, m.Machine = time.Since(meta.Started), Machine()
			if _, err := bench.WriteResults(cfg.OutDir, m, r); err != nil {
				fmt.Fprintf(progress, "tenon bench: writing the checkpoint: %v\n", err)
			}
		},
		Progress: func(i, n int, c bench.Case, rep int) {
			label = fmt.Sprintf("[%d/%d] %s", i+1, n, c.Name)
			if c.Reps > 1 {
				label += fmt.Sprintf(" rep %d/%d", rep+1, c.Reps)
			}
		},
		Run: func(ctx context.Context, c bench.Case, rep int) (*report.Comparison, error) {
			if cfg.Sim {
				fmt.Fprintf(progress, "%s: simulating %s\n", label, strings.Join(c.Policies, ", "))
				return simulateCase(ctx, cfg, c)
			}
			return p.replayCase(ctx, c, rep, label)
		},
	})
	meta.Wall = time.Since(meta.Started)
	meta.Machine = Machine()
	resumed(res)
	files, err := bench.WriteResults(cfg.OutDir, meta, res)
	if err != nil {
		return nil, err
	}
	run := &BenchRun{Meta: meta, Results: res, Files: files}
	if res.Interrupted {
		return run, fmt.Errorf("interrupted: partial results (%d of %d cases) written: %w", len(res.Outcomes), res.Cases, context.Cause(ctx))
	}
	failed := 0
	for _, o := range res.Outcomes {
		if o.Err != nil {
			failed++
		}
	}
	if failed > 0 {
		return run, fmt.Errorf("%d of %d cases failed (their errors are in %s)", failed, len(res.Outcomes), files[0])
	}
	return run, nil
}

// replayCase replays repetition rep of case c (its policies resolved by
// bench.Run) with the policies the plan built for the first; the static
// sweep's best, and every policy of a later repetition, are built here.
func (p *BenchPlan) replayCase(ctx context.Context, c bench.Case, rep int, label string) (*report.Comparison, error) {
	rc := p.replayConfig(c, rep, label)
	runs := make([]policyRun, 0, len(c.Policies))
	for _, name := range c.Policies {
		r, ok := p.runs[c.Name][name]
		if !ok {
			var err error
			if r, err = rc.buildRun(name, p.pacing); err != nil {
				return nil, err
			}
		}
		runs = append(runs, r)
	}
	delete(p.runs, c.Name) // a policy replays once; later repetitions build their own
	if len(runs) == 0 {
		return nil, errors.New("no policy to replay")
	}
	return rc.replayRuns(ctx, runs)
}

// caseEventLog is the event log path of repetition rep of case c under dir
// ("" when dir is): the case name with its slashes turned into dashes, and
// "-rep<N>" (from 1) when the case repeats.
func caseEventLog(dir string, c bench.Case, rep int) string {
	if dir == "" {
		return ""
	}
	name := strings.ReplaceAll(c.Name, "/", "-")
	if c.Reps > 1 {
		name += fmt.Sprintf("-rep%d", rep+1)
	}
	return filepath.Join(dir, name+".jsonl")
}

// checkSimPolicies fails when a case names a policy the simulator does not
// know, before any case runs; the static sweep's best is resolved later.
func checkSimPolicies(cases []bench.Case) error {
	for _, c := range cases {
		for _, name := range c.Policies {
			if name == bench.BestStatic {
				continue
			}
			if _, err := sim.ParsePolicy(name); err != nil {
				return fmt.Errorf("case %s: %w", c.Name, err)
			}
		}
	}
	return nil
}

// simulateCase runs case c (its policies resolved by bench.Run) on the
// simulated host as a live replay would: the same workflows, time scale,
// budget, parameters and retries.
func simulateCase(ctx context.Context, cfg BenchConfig, c bench.Case) (*report.Comparison, error) {
	res, err := Simulate(ctx, SimConfig{
		Workflows: c.Workflows, TimeScale: c.TimeScale, Policies: c.Policies, Params: c.Params, Budget: c.Budget,
		Seed: 1, Retries: benchRetries, Create: sim.DefaultCreate, Teardown: sim.DefaultTeardown, Rematerialize: sim.DefaultRematerialize,
		ActionTimeout: cfg.ActionTimeout, Train: "auto", Warn: cfg.Progress, Log: cfg.Log,
	})
	if err != nil {
		return nil, err
	}
	return res.Comparison, nil
}

// CheckResume reports whether results made as meta may be resumed by a
// run of command from commit (dirty: its tree had uncommitted changes): a
// results file names one commit and one command, so the cases it takes
// from an earlier run must come from both.
func CheckResume(meta bench.Meta, commit string, dirty bool, command string) error {
	switch {
	case meta.Command != command:
		return fmt.Errorf("it was made by %q, this run is %q; resume with the same flags", meta.Command, command)
	case meta.Commit != commit:
		return fmt.Errorf("its results are from commit %s, this binary is from %s; build tenon at %s (go build -buildvcs=true) to go on", meta.Commit, commit, meta.Commit)
	case meta.Dirty || dirty:
		return fmt.Errorf("a resumed run and the run it goes on from must both be built from a clean tree (theirs dirty: %v, this one: %v)", meta.Dirty, dirty)
	}
	return nil
}
