package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/census"
	"github.com/tenon-dev/tenon/internal/census/swarm"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/fsutil"
)

func init() {
	register(&command{name: "census", summary: "measure how much memory a set of sibling sandboxes duplicates (seed 002)", run: runCensus})
	register(&command{name: "census swarm", summary: "launch a gopls swarm in several configurations and census it on the seed's schedule", run: runCensusSwarm})
}

func runCensus(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "census", "[CGROUP-DIR-OR-GLOB ...]",
		"Census a set of sibling sandboxes: freeze them, hash every resident page, and split the unshared duplicate into the seed's four classes.",
		`Siblings are cgroup directories (v1, e.g. /sys/fs/cgroup/memory/tenon/sb-*, or v2;
a relative path is tried under the memory hierarchy root), --domain NAME (every
child cgroup of tenon's workload domain), or bare processes (--pid). Cgroup
siblings are frozen for each sample through their freezer and always thawed,
also on error and Ctrl-C. Bare pids are sampled unfrozen: their pages can
change while they are read, so prefer cgroups for exact numbers. Needs root.`)
	var pids, shared listFlag
	fs.Var(&pids, "pid", "a process to census as its own sibling (repeatable, comma lists allowed)")
	fs.Var(&shared, "shared-dir", "a directory every sibling sees (the shared read-only layer; repeatable)")
	domain := fs.String("domain", "", "census every sandbox cgroup of this workload domain (children of <memory root>/NAME)")
	samples := fs.Int("samples", 1, "number of samples")
	interval := fs.Duration("interval", time.Minute, "pause between samples")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	plotPath := fs.String("plot", "", "write a stacked-bar PNG to this file")
	config := fs.String("config", "siblings", "configuration label for the report")
	freezeTimeout := fs.Duration("freeze-timeout", 10*time.Second, "bound on freezing and thawing the siblings")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	pidList, err := pids.ints("--pid")
	if err != nil {
		return err
	}
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return err
	}
	res, err := swarm.Resolve(layout, swarm.Targets{Cgroups: fs.Args(), Pids: pidList, Domain: *domain}, env.log)
	if err != nil {
		return err
	}
	if len(res.Unfrozen) > 0 {
		fmt.Fprintf(env.stderr, "tenon census: sampling unfrozen: %s\n", strings.Join(res.Unfrozen, ", "))
	}
	base := census.Options{Siblings: res.Siblings, Freezers: res.Freezers, SharedDirs: shared.items,
		FreezeTimeout: *freezeTimeout, Start: time.Now(), Logger: env.log}
	snaps, err := swarm.SampleRepeatedly(ctx, base, swarm.SampleOptions{Samples: *samples, Interval: *interval,
		OnSample: func(i int, s *census.Snapshot) {
			fmt.Fprintf(env.stderr, "sample %d/%d: %d pages, frozen %s, took %s\n", i+1, *samples,
				len(s.Pages), s.Freeze.Round(time.Millisecond), s.Duration.Round(time.Millisecond))
		}})
	if err != nil {
		return err
	}
	return writeCensus(env, census.Analyze(snaps, *config), *asJSON, *plotPath, "tenon census")
}

func writeCensus(env *cliEnv, samples []census.SampleResult, asJSON bool, plotPath, title string) error {
	if plotPath != "" {
		if err := fsutil.WriteFile(plotPath, 0o644, func(w io.Writer) error { return census.WritePlot(w, samples, title) }); err != nil {
			return err
		}
	}
	if asJSON {
		return census.WriteJSON(env.stdout, samples)
	}
	return census.WriteTable(env.stdout, samples)
}

// swarmReport is the JSON document of `tenon census swarm`.
type swarmReport struct {
	Command  string                `json:"command"`
	Repo     string                `json:"repo"`
	Gopls    string                `json:"gopls"`
	Schedule []float64             `json:"schedule_s"`
	Runs     []swarmRun            `json:"runs"`
	Samples  []census.SampleResult `json:"samples"`
}

type swarmRun struct {
	Config string `json:"config"`
	N      int    `json:"n"`
	*swarm.Result
	Error string `json:"error,omitempty"`
}

func runCensusSwarm(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "census swarm", "",
		"Launch N siblings of a coding-agent workload (resident gopls on one Go repository, grep, edits, builds, tests) in each configuration and census them at 15 s, 1, 5 and 10 min (seed 002).",
		`Configurations: host-overlay (host processes, one overlayfs per sibling over a
shared read-only lower), sandbox (one process-backend sandbox per sibling, its
workspace the sibling's overlay: the shared-read-only container arm), ns-overlay
(host processes with the overlay in a private mount namespace, one path for all),
copied (each sibling copies the repository; the toolchain stays shared).
The repository is a Go module copied from the module cache (default
gonum.org/v1/plot@v0.17.0), vendored, with gopls and a warm build cache in its
.tenon directory; gopls is installed into --cache with 'go install' if missing.
Everything launched is killed and every sandbox, cgroup, mount and temporary
directory removed at the end, also on Ctrl-C. Needs root.`)
	var ns, configs listFlag
	fs.Var(&ns, "n", "swarm sizes (repeatable, comma lists allowed; default 4)")
	fs.Var(&configs, "config", "configurations (repeatable; default host-overlay,sandbox,ns-overlay,copied)")
	timeScale := fs.Float64("time-scale", 1, "multiply the census schedule (0.1: 1.5 s, 6 s, 30 s, 60 s)")
	module := fs.String("repo-module", "gonum.org/v1/plot@v0.17.0", "Go module@version used as the repository")
	testPkg := fs.String("test-pkg", "./tools/bezier", "package the test step runs")
	seed := fs.Int64("seed", 1, "seed of the per-sibling file and pattern choice")
	pause := fs.Duration("round-pause", 2*time.Second, "pause between a sibling's rounds")
	goplsPath := fs.String("gopls", "", "gopls binary (default: install "+swarm.GoplsVersion+" into --cache)")
	cacheDir := fs.String("cache", defaultCacheDir(), "directory gopls is installed into")
	workDir := fs.String("workdir", "", "parent of the temporary tree (default $TMPDIR)")
	freezeTimeout := fs.Duration("freeze-timeout", 10*time.Second, "bound on freezing and thawing the siblings")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	jsonPath := fs.String("o", "", "also write the JSON report to this file")
	plotPath := fs.String("plot", "", "write a stacked-bar PNG to this file")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(env.stderr, "tenon census swarm: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if len(ns.items) == 0 {
		ns.items = []string{"4"}
	}
	sizes, err := ns.ints("--n")
	if err != nil {
		return err
	}
	var cfgs []swarm.Config
	for _, c := range configs.items {
		cfg, err := swarm.ParseConfig(c)
		if err != nil {
			return err
		}
		cfgs = append(cfgs, cfg)
	}
	if len(cfgs) == 0 {
		cfgs = swarm.Configs
	}
	sched, err := swarm.Schedule(*timeScale)
	if err != nil {
		return err
	}
	if err := cgroup.RequireRoot(); err != nil {
		return err
	}
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return err
	}
	gopls := *goplsPath
	if gopls == "" {
		fmt.Fprintf(env.stderr, "ensuring gopls %s in %s\n", swarm.GoplsVersion, *cacheDir)
		if gopls, err = swarm.EnsureGopls(ctx, *cacheDir, swarm.GoplsVersion); err != nil {
			return err
		}
	}
	src, err := swarm.ModuleDir(ctx, *module)
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp(*workDir, "tenon-census-swarm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	fmt.Fprintf(env.stderr, "preparing repository %s (dependencies, warm build)\n", *module)
	repo, err := swarm.PrepareRepo(ctx, src, filepath.Join(root, "repo"), gopls, *testPkg)
	if err != nil {
		return err
	}
	shared := []string{runtime.GOROOT()}
	rep := swarmReport{Command: "tenon census swarm " + strings.Join(args, " "), Repo: *module, Gopls: gopls}
	for _, d := range sched {
		rep.Schedule = append(rep.Schedule, d.Seconds())
	}
	var runErr error
	for _, n := range sizes {
		for _, cfg := range cfgs {
			r, err := swarm.Run(ctx, swarm.Options{Config: cfg, N: n, Repo: repo,
				WorkDir: filepath.Join(root, fmt.Sprintf("%s-%d", cfg, n)), Schedule: sched, Seed: *seed,
				RoundPause: *pause, TestPkg: *testPkg, SharedDirs: shared, Layout: layout,
				CgroupParent: fmt.Sprintf("tenon-census-swarm-%d/%s-%d", os.Getpid(), cfg, n), FreezeTimeout: *freezeTimeout,
				Logger: env.log, Progress: func(m string) { fmt.Fprintf(env.stderr, "%s %s\n", time.Now().Format("15:04:05"), m) }})
			run := swarmRun{Config: string(cfg), N: n, Result: r}
			if err != nil {
				run.Error = err.Error()
				fmt.Fprintf(env.stderr, "tenon census swarm: %s N=%d: %v\n", cfg, n, err)
				runErr = err
			} else {
				rep.Samples = append(rep.Samples, r.Samples...)
				fmt.Fprintf(env.stderr, "%s N=%d: startup %.1fs, %d rounds, %d failed steps, freeze windows %v\n",
					cfg, n, r.StartupS, r.Rounds, r.Failures, r.Freeze)
			}
			rep.Runs = append(rep.Runs, run)
			if ctx.Err() != nil {
				break
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	if g, err := cgroup.Open(layout, fmt.Sprintf("tenon-census-swarm-%d", os.Getpid())); err == nil {
		_ = g.Delete()
	}
	if *jsonPath != "" {
		if err := fsutil.WriteFile(*jsonPath, 0o644, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}); err != nil {
			return err
		}
	}
	if err := writeCensus(env, rep.Samples, *asJSON, *plotPath, "tenon census swarm"); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	return ctx.Err()
}

func defaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "tenon")
	}
	return filepath.Join(d, "tenon")
}
