package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/bench"
	"github.com/tenon-dev/tenon/internal/realtools"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "bench", summary: "run the benchmark matrix: every policy, workloads × budgets, ablations, load and region sweeps; results file and plots", run: runBench})
}

func runBench(ctx context.Context, env *cliEnv, args []string) error {
	def := bench.DefaultMatrix()
	fs := newFlags(env, "bench", "",
		"Replay a matrix of workloads, budgets and policies in real sandboxes and write a results file with tables, goals and plots.",
		`Groups of cases, run in this order (--only picks some):
  static-sweep  Static-N for N in 1,2,3,4,6 on the headline workload (the first of
                --workloads) at the tightest budget; the fastest that completes
                every workflow becomes "static-best" in the later groups.
  main          every workload at the tightest budget under all policies (eager,
                static-best, agent-reservation, agentcgroup, gate, admission,
                tenon); the headline workload at the larger budgets under the
                core set (eager, static-best, agent-reservation, agentcgroup,
                tenon); --every-budget replays every workload at every budget.
  ablation      tenon-no-admission, tenon-no-gate, tenon-always-resident,
                tenon-static-pred, tenon-history-pred on the headline workload.
  load          eager, static-best and tenon at 8, 12 and 16 workflows of the
                headline workload at the tightest budget; the headline case
                (--n workflows, about 9x oversubscribed) is the sweep's last point.
  region        tenon with yellow = red = 5, 10, 15, 20, 25% of the budget.
  traces        not run unless --only names it (hours): every real trace set in
                --trace-sets (default ../shared/traces, read at run time), each
                imported, replicated twice (ids -r0, -r1; arrivals 0.5 s apart,
                the second copy 30 s later; the backend's default image), at
                1 and 2 GiB (or --budgets) under the core set, compressed so the
                longest workflow replays in 60 s (--traces-length); workflows
                that cannot fit a budget are reported as infeasible.
  real-tools    not run unless --only names it: the recorded tasks of
                --real-repos (default ../shared/repos) replayed with their own
                edits and commands on their repositories (tenon workload real;
                root, the manifest's Debian packages on the host or in
                --image: tenon image build --manifest), replicated to
                --real-agents agents (default 32) arriving 5 s apart, under
                every policy (or --policies), at a budget their profiled peaks
                oversubscribe 4x; the results list each action's measured peak
                beside the manifest's figure.

Budgets 1, 1.5 and 2 GiB stand for the paper's 4U8G, 6U12G and 8U16G (the same
1 : 1.5 : 2 ratio) on one workload, so oversubscription falls as the budget
rises. Workloads (generated, memory x10, action peaks capped at 600 MiB):
swe (--n workflows), science (0.7 n, heavier and longer actions), rl (0.6 n,
synchronized bursts), swe-duplicate (0.5 n copies of the heaviest swe workflow,
all at once: the adversarial burst); with --traces DIR, the AgentCgroup traces
in DIR (workload "traces", compressed so the longest replays in --traces-length, only on
budgets its largest action fits). Every policy replays each case in a fresh
workload domain with up to 5 retries per workflow after an OOM kill or a
sandbox timeout (--action-timeout); --time-scale compresses arrivals, waits and
action times. Makespan and latency are over every workflow: a policy that gave
up on one has no makespan ("dnf"), and a speedup over it is reported as "did
not finish N of M".

Writes <out-dir>/<name>.md (command, commit, machine, goals, one table per case),
<name>.json (the headline case's "results" per policy, the "goals", and every
case under "cases") and <name>-{workloads,ablation,load,region}.png (seed 000
Figures 9, 11, 13, 14). Every case is replayed --reps times (3; once with
--quick) and reported as the median with its min–max per metric; the goals are
judged on the medians. Ctrl-C stops the running replay and writes what
finished, marked partial. --dry-run prints the cases and an estimated duration
of every repetition, from a model calibrated on this 2-core machine (how long
tenon's controller takes varies most). --quick: 8 swe workflows at 1 GiB
(about 4x oversubscribed, time scale 0.25), eager and tenon, once, a few
minutes. Needs root, but for --sim: every case then runs on the simulated host
(the same decision code as tenon sim, at the case's time scale, with the
simulator's measured sandbox costs) in seconds, once unless --reps, and the
results files are written as for a live run (backend "sim").
--replot FILE.json redraws the plots of an earlier run from its results JSON,
next to it, and runs nothing.`)
	quick := fs.Bool("quick", false, "run the small CI subset instead of the full matrix")
	name := fs.String("name", "", `results file base name (default "bench", or "bench-quick" with --quick)`)
	outDir := fs.String("out-dir", filepath.Join("bench", "results"), "directory for the results files")
	eventsDir := fs.String("events-dir", "", "also write each case's event log (JSONL, every policy of the case) to DIR/<case>.jsonl")
	backend := fs.String("backend", "process", "sandbox backend: "+app.BackendNames)
	var budgets, workloadsFlag, pols, only listFlag
	fs.Var(&budgets, "budgets", "comma-separated `budgets`, e.g. 1GiB,1.5GiB,2GiB (default 1GiB,1.5GiB,2GiB; 1GiB with --quick)")
	fs.Var(&workloadsFlag, "workloads", "comma-separated `workloads`: "+strings.Join(bench.WorkloadNames, ", ")+" (default all; swe with --quick); the first is the headline")
	fs.Var(&pols, "policies", "comma-separated `policies` replacing the main group's (static-best: the static sweep's best)")
	traces := fs.String("traces", "", "directory of AgentCgroup trace runs to add as workload \"traces\"")
	traceSets := fs.String("trace-sets", defaultTraceSets(), "`directory` of real trace sets (<set>/<task>/attempt_N/) for the traces group, relative to the working directory ($TENON_TRACES overrides the default)")
	realRepos := fs.String("real-repos", "../shared/repos", "`directory` of the real-tools repositories (manifest.json, NAME.tar.gz, pylib/)")
	realTraces := fs.String("real-traces", "", "`directory` of the real-tools tasks' trace runs (default: agentcgroup-haiku in --trace-sets)")
	realAgents := fs.Int("real-agents", bench.RealToolsAgents, "agents the real-tools tasks are replicated to")
	image := fs.String("image", "", imageHelp+"; applies to --traces and real-tools")
	scale := fs.Float64("time-scale", def.TimeScale, "multiply arrivals, model waits and tool times of every case (0.25 with --quick)")
	tracesLen := fs.Duration("traces-length", bench.TracesMaxLength, "replay the real-length cases (traces, real-tools, swe-real) at --time-scale or faster so that their longest workflow takes this long; longer replays closer to the agents' own pace, where tool starts and page faults are spread as thinly as in use")
	n := fs.Int("n", def.N, "workflows of the swe workload (others scale from it; 8 with --quick)")
	seed := fs.Int64("seed", def.Seed, "workload generator seed")
	reps := fs.Int("reps", def.Reps, "replay every case this many times and report medians with min–max (1 with --quick)")
	stateDir := fs.String("state-dir", "/var/lib/tenon", "where sandboxes' writable layers and workspaces live during the run")
	domain := fs.String("domain", "tenon-bench", "name of the workload domain cgroup")
	everyBudget := fs.Bool("every-budget", false, "replay every workload at every budget (default: only the headline workload at the larger budgets)")
	fs.Var(&only, "only", "comma-separated `groups` to run: "+strings.Join(bench.Groups, ", "))
	var timeout timeoutFlag
	fs.Var(&timeout, "action-timeout", actionTimeoutHelp+" (per case)")
	simulate := fs.Bool("sim", false, "run every case on the simulated host (as tenon sim, at the case's time scale) instead of in sandboxes: seconds, no root; once unless --reps")
	actuator := fs.String("actuator", "freezer", actuatorHelp+"; the bench freezes unless told, so that its results compare across hosts")
	idle := fs.Bool("idle-loop", false, idleLoopHelp)
	dryRun := fs.Bool("dry-run", false, "print the cases and an estimated duration, run nothing")
	replot := fs.String("replot", "", "redraw the plots of an earlier run from its results JSON (written next to it), run nothing")
	resume := fs.String("resume", "", "go on from the results `JSON` of an earlier run of the same command by a binary of the same commit (clean trees), stopped before its end: its complete cases are taken as they are, the case it stopped in goes on from its complete repetitions (on the same machine), the rest run (the bench writes its results after every repetition)")
	asJSON := fs.Bool("json", false, "print JSON (the case list with --dry-run, else the results) on stdout")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *replot != "" {
		files, err := bench.Replot(*replot)
		for _, f := range files {
			fmt.Fprintf(env.stdout, "wrote %s\n", f)
		}
		return err
	}
	if *quick && !set["name"] {
		*name = "bench-quick"
	}
	if *name == "" {
		*name = "bench"
	}
	if strings.ContainsAny(*name, `/\`) || strings.TrimSpace(*name) == "" {
		return fmt.Errorf("--name %q: want a plain file name without directories", *name)
	}
	cases, err := benchCases(env, set, benchFlagValues{
		image: *image, quick: *quick, everyBudget: *everyBudget, traces: *traces, traceSets: *traceSets, backend: *backend,
		realRepos: *realRepos, realTraces: *realTraces, realAgents: *realAgents,
		budgets: budgets.items, workloads: workloadsFlag.items, policies: pols.items, only: only.items,
		timeScale: *scale, tracesLength: *tracesLen, n: *n, seed: *seed, reps: *reps, sim: *simulate,
	})
	if err != nil {
		return err
	}
	meta := bench.Meta{Name: *name, Command: "tenon bench " + quoteArgs(dropFlag(args, "resume")), Backend: *backend}
	if *simulate {
		meta.Backend = "sim"
	}
	bc := app.BenchConfig{
		Cases: cases, Backend: *backend, Domain: *domain, StateDir: *stateDir, OutDir: *outDir, EventsDir: *eventsDir, ActionTimeout: timeout.config(),
		Meta: meta, Sim: *simulate, Actuator: *actuator, IdleLoop: *idle, Progress: env.stderr, Log: env.log,
	}
	if *resume != "" {
		if bc.Resume, bc.ResumedFrom, err = loadResume(*resume, meta.Command, cases); err != nil {
			return err
		}
	}
	plan, err := app.PlanBench(bc)
	if err != nil {
		return err
	}
	defer plan.Close()
	if *dryRun {
		return printBenchPlan(env, cases, *asJSON)
	}
	run, err := plan.Run(ctx)
	if run == nil {
		return err
	}
	if *asJSON {
		if werr := bench.WriteJSON(env.stdout, run.Meta, run.Results); werr != nil {
			return werr
		}
	} else {
		printBenchSummary(env.stdout, run.Results, run.Files)
	}
	return err
}

// benchFlagValues are the flags that pick the cases.
type benchFlagValues struct {
	quick, everyBudget, sim            bool
	traces, traceSets, backend, image  string
	realRepos, realTraces              string
	budgets, workloads, policies, only []string
	timeScale                          float64
	tracesLength                       time.Duration
	n, reps, realAgents                int
	seed                               int64
}

// benchCases builds the matrix the flags ask for and returns its cases.
func benchCases(env *cliEnv, set map[string]bool, v benchFlagValues) ([]bench.Case, error) {
	m := bench.DefaultMatrix()
	if v.quick {
		m = bench.QuickMatrix()
	}
	if err := applyBenchFlags(&m, set, v); err != nil {
		return nil, err
	}
	m.EveryBudget = v.everyBudget
	if !app.KnownBackend(v.backend) {
		return nil, fmt.Errorf("--backend %q: want %s", v.backend, app.BackendNames)
	}
	if v.traces != "" {
		wfs, _, err := agentcgroup.Import(v.traces)
		if err != nil {
			return nil, fmt.Errorf("--traces: %w", err)
		}
		m.Traces = overrideImage(env, "tenon bench", wfs, v.image)
		if !slices.Contains(m.Workloads, bench.WorkloadTraces) {
			m.Workloads = append(m.Workloads, bench.WorkloadTraces)
		}
	}
	if m.Wants(bench.GroupTraces) {
		dir, err := filepath.Abs(v.traceSets)
		if err != nil {
			return nil, fmt.Errorf("--trace-sets: %w", err)
		}
		sets, err := bench.LoadTraceSets(dir)
		if err != nil {
			return nil, fmt.Errorf("--only %s: %w; point --trace-sets (or $TENON_TRACES) at a directory of AgentCgroup trace sets", bench.GroupTraces, err)
		}
		m.TraceSets = sets
	}
	if m.Wants(bench.GroupRealTools) {
		if err := loadRealTools(&m, v); err != nil {
			return nil, err
		}
	}
	cases, err := m.Cases()
	if err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("no case to run: --only %q selects nothing for these workloads", strings.Join(v.only, ","))
	}
	return cases, nil
}

// loadRealTools builds the real-tools group's workflows from --real-repos
// and --real-traces (tenon workload real).
func loadRealTools(m *bench.Matrix, v benchFlagValues) error {
	traces := v.realTraces
	if traces == "" {
		traces = filepath.Join(v.traceSets, "agentcgroup-haiku")
	}
	wfs, man, err := realtools.Build(v.realRepos, traces)
	if err != nil {
		return fmt.Errorf("--only %s: %w; point --real-repos and --real-traces at the repositories and their traces", bench.GroupRealTools, err)
	}
	if v.image != "" {
		wfs, _ = app.OverrideImage(wfs, v.image) // they name none
	}
	m.RealTools, m.RealToolsAgents = wfs, v.realAgents
	m.RealToolsMiB = map[string]float64{}
	for _, r := range man.Repos {
		m.RealToolsMiB[r.Task] = r.FigureMiB()
	}
	return nil
}

// defaultTraceSets is --trace-sets' default: $TENON_TRACES, or
// bench.DefaultTracesDir.
func defaultTraceSets() string {
	if d := os.Getenv("TENON_TRACES"); d != "" {
		return d
	}
	return bench.DefaultTracesDir
}

// applyBenchFlags overrides the matrix with the flags the user set.
func applyBenchFlags(m *bench.Matrix, set map[string]bool, v benchFlagValues) error {
	if set["budgets"] {
		m.Budgets = nil
		for _, s := range v.budgets {
			b, err := units.ParseSize(s)
			if err != nil || b <= 0 {
				return fmt.Errorf("--budgets: %q is not a positive size such as 1.5GiB", s)
			}
			m.Budgets = append(m.Budgets, b)
		}
		if len(m.Budgets) == 0 {
			return errors.New("--budgets: give at least one budget, e.g. 1GiB")
		}
	}
	if set["workloads"] {
		m.Workloads = v.workloads
		if len(m.Workloads) == 0 {
			return errors.New("--workloads: give at least one workload")
		}
	}
	if set["policies"] {
		m.Policies = v.policies
		if len(m.Policies) == 0 {
			return errors.New("--policies: give at least one policy")
		}
	}
	if set["only"] {
		m.Only = v.only
	}
	if set["budgets"] {
		m.TraceBudgets = m.Budgets
	}
	if set["time-scale"] {
		m.TimeScale = v.timeScale
	}
	if set["traces-length"] {
		if v.tracesLength <= 0 {
			return fmt.Errorf("--traces-length %v: want a positive duration such as 3m", v.tracesLength)
		}
		m.TracesLength = v.tracesLength
	}
	if set["n"] {
		m.N = v.n
	}
	if set["seed"] {
		m.Seed = v.seed
	}
	if set["reps"] {
		m.Reps = v.reps
	} else if v.sim {
		m.Reps = 1 // the simulator is deterministic
	}
	if !(m.TimeScale > 0) {
		return errors.New("--time-scale must be positive")
	}
	if m.N <= 0 {
		return errors.New("--n must be positive")
	}
	if m.Reps <= 0 {
		return errors.New("--reps must be positive")
	}
	return nil
}

type planCase struct {
	bench.Case
	Workflows        int     `json:"workflows"`
	Oversubscription float64 `json:"oversubscription"`
	EstimateS        float64 `json:"estimate_s"`
}

func printBenchPlan(env *cliEnv, cases []bench.Case, asJSON bool) error {
	total := bench.Estimate(cases)
	if asJSON {
		var pcs []planCase
		for _, c := range cases {
			pcs = append(pcs, planCase{Case: c, Workflows: len(c.Workflows), Oversubscription: c.Oversubscription(), EstimateS: bench.Estimate([]bench.Case{c}).Seconds()})
		}
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Cases     []planCase `json:"cases"`
			EstimateS float64    `json:"estimate_s"`
		}{pcs, total.Seconds()})
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tworkflows\tbudget\toversub\ttime scale\treps\testimate\tpolicies")
	replays := 0
	for _, c := range cases {
		replays += max(c.Reps, 1) * len(c.Policies)
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.2fx\t%.3g\t%d\t%s\t%s\n", c.Name, len(c.Workflows), units.FormatSize(c.Budget),
			c.Oversubscription(), c.TimeScale, max(c.Reps, 1), bench.Estimate([]bench.Case{c}).Round(time.Second), strings.Join(c.Policies, ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "\n%d cases, %d replays, estimated %s (static-best estimated as static-3)\n", len(cases), replays, total.Round(time.Minute))
	return nil
}

func printBenchSummary(w io.Writer, res *bench.Results, files []string) {
	if res.Partial() {
		fmt.Fprintf(w, "PARTIAL: %d of %d cases ran\n", len(res.Outcomes), res.Cases)
	}
	for _, o := range res.Outcomes {
		if o.Err != nil {
			fmt.Fprintf(w, "case %s failed: %v\n", o.Case.Name, o.Err)
		}
	}
	if goals := bench.Goals(res); bench.Judged(goals) {
		fmt.Fprintln(w, "goals (headline case, on medians over the repetitions):")
		for _, g := range goals {
			fmt.Fprintf(w, "  %-46s target %-8s %s: %s\n", g.Name, g.Target, g.Measured, g.Status())
		}
	} else {
		fmt.Fprintln(w, bench.NotJudged)
	}
	for _, f := range files {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
}

// quoteArgs renders args for a shell.
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// loadResume reads the results JSON of an earlier run for --resume and
// returns its outcomes and a description of the run. The run must have
// been made by the same command (command: this run's, without --resume)
// from the same commit as this binary, both trees clean, and at least one
// of its cases must stand for one of this run's (bench.Reusable), or be
// one this run goes on from (bench.Resumable).
func loadResume(path, command string, cases []bench.Case) ([]bench.Outcome, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("--resume: %w", err)
	}
	defer f.Close()
	meta, res, err := bench.ReadJSONMeta(f)
	if err != nil {
		return nil, "", fmt.Errorf("--resume %s: %w", path, err)
	}
	if sameMeasurement(meta.Command, command) {
		command = meta.Command
	}
	if err := app.CheckResume(meta, app.GitCommit(), app.GitDirty(), command); err != nil {
		return nil, "", fmt.Errorf("--resume %s: %w", path, err)
	}
	// Complete cases are taken; one it stopped in goes on from its
	// complete repetitions (bench.Resumable).
	done := slices.DeleteFunc(res.Outcomes, func(o bench.Outcome) bool { return o.Err != nil && o.Complete == 0 })
	for i := range done {
		if done[i].Host == "" {
			// A file from before cases named their host: the run's.
			done[i].Host = app.HostOf(meta.Machine)
		}
	}
	n := 0
	for _, c := range cases {
		// Policies resolve to the static sweep's best in the run; a
		// static-best case matches only once resolved, so count on names.
		for _, o := range done {
			if o.Case.Name == c.Name {
				n++
				break
			}
		}
	}
	if n == 0 {
		return nil, "", fmt.Errorf("--resume %s: none of its %d cases is one of this run's %d", path, len(res.Outcomes), len(cases))
	}
	return done, fmt.Sprintf("the run started %s on %s (%s)", meta.Started.UTC().Format("2006-01-02 15:04 UTC"), meta.Machine, path), nil
}

// outputFlags name where a bench writes, which does not change what it
// measures: a resume may write elsewhere than the run it goes on from.
var outputFlags = []string{"out-dir", "events-dir"}

// sameMeasurement reports whether two bench commands (as quoteArgs
// renders them) differ at most in outputFlags.
func sameMeasurement(a, b string) bool {
	key := func(c string) []string {
		args := splitQuoted(c)
		for _, f := range outputFlags {
			args = dropFlag(args, f)
		}
		return args
	}
	return slices.Equal(key(a), key(b))
}

// splitQuoted splits a command quoteArgs rendered back into its words:
// spaces separate them outside single quotes, and a backslash outside
// quotes escapes the next character (quoteArgs writes a quote inside a
// quoted word as close quote, backslash, quote, open quote).
func splitQuoted(s string) []string {
	var out []string
	var w strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			w.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case c == ' ':
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, w.String())
	}
	return out
}

// dropFlag returns args without flag name and its value ("--name V",
// "-name V", "--name=V", "-name=V").
func dropFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-"+name || a == "--"+name:
			i++ // and its value
		case strings.HasPrefix(a, "-"+name+"=") || strings.HasPrefix(a, "--"+name+"="):
		default:
			out = append(out, a)
		}
	}
	return out
}
