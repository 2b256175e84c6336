package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/census"
	"github.com/tenon-dev/tenon/internal/census/swarm"
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
change while they are read, so prefer cgroups for exact numbers. Needs root.

The shared read-only layer is --shared-dir and the lower directories of the
overlays the siblings see (the layers of the image their sandboxes run, the
same directories for every sandbox of the image): a file of an overlay is
counted as the layer file below it, so N sandboxes of one image count its
pages once, and the shared_layer column is that layer's page cache.`)
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
	if err := parseFlagsArgs(env, fs, args); err != nil {
		return err
	}
	pidList, err := pids.ints("--pid")
	if err != nil {
		return err
	}
	results, err := app.Census(ctx, app.CensusConfig{Cgroups: fs.Args(), Pids: pidList, Domain: *domain,
		SharedDirs: shared.items, Samples: *samples, Interval: *interval, Label: *config,
		FreezeTimeout: *freezeTimeout, Progress: env.stderr, Log: env.log})
	if err != nil {
		return err
	}
	return writeCensus(env, results, *asJSON, *plotPath, "tenon census")
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
	if len(ns.items) == 0 {
		ns.items = []string{"4"}
	}
	sizes, err := ns.ints("--n")
	if err != nil {
		return err
	}
	rep, err := app.CensusSwarm(ctx, app.CensusSwarmConfig{Sizes: sizes, Configs: configs.items, TimeScale: *timeScale,
		Module: *module, TestPkg: *testPkg, Seed: *seed, RoundPause: *pause, Gopls: *goplsPath, CacheDir: *cacheDir,
		WorkDir: *workDir, FreezeTimeout: *freezeTimeout, Progress: env.stderr, Log: env.log})
	if rep == nil {
		return err
	}
	if *jsonPath != "" {
		if err := fsutil.WriteFile(*jsonPath, 0o644, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(swarmReport{Command: "tenon census swarm " + strings.Join(args, " "), SwarmReport: rep})
		}); err != nil {
			return err
		}
	}
	if werr := writeCensus(env, rep.Samples, *asJSON, *plotPath, "tenon census swarm"); werr != nil {
		return werr
	}
	return err
}

// swarmReport is the JSON document of `tenon census swarm`: the command
// line, then the report.
type swarmReport struct {
	Command string `json:"command"`
	*app.SwarmReport
}

func defaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "tenon")
	}
	return filepath.Join(d, "tenon")
}
