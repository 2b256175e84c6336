package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/census"
	"github.com/tenon-dev/tenon/internal/census/swarm"
	"github.com/tenon-dev/tenon/internal/cgroup"
)

// CensusConfig is a census of a set of sibling sandboxes: cgroup
// directories or globs, the children of a workload domain, and bare pids
// (see swarm.Targets).
type CensusConfig struct {
	Cgroups    []string
	Pids       []int
	Domain     string
	SharedDirs []string // directories every sibling sees
	Samples    int
	Interval   time.Duration // pause between samples
	Label      string        // the configuration named in the results
	// FreezeTimeout bounds freezing and thawing the siblings.
	FreezeTimeout time.Duration

	// Progress receives a line naming the siblings sampled unfrozen and a
	// line per sample; nil shows none.
	Progress io.Writer
	Log      *slog.Logger // nil discards
}

// Census resolves the siblings, samples them cfg.Samples times
// cfg.Interval apart (freezing the cgroup siblings for each sample and
// always thawing them) and splits their duplicate memory into classes.
// The shared read-only layer is cfg.SharedDirs and the lower directories
// of the siblings' overlays (census.Options.DiscoverShared): the layers
// of the images their sandboxes run.
func Census(ctx context.Context, cfg CensusConfig) ([]census.SampleResult, error) {
	log := discardLog(cfg.Log)
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return nil, err
	}
	res, err := swarm.Resolve(layout, swarm.Targets{Cgroups: cfg.Cgroups, Pids: cfg.Pids, Domain: cfg.Domain}, log)
	if err != nil {
		return nil, err
	}
	if len(res.Unfrozen) > 0 {
		fmt.Fprintf(progress, "tenon census: sampling unfrozen: %s\n", strings.Join(res.Unfrozen, ", "))
	}
	base := census.Options{Siblings: res.Siblings, Freezers: res.Freezers, SharedDirs: cfg.SharedDirs, DiscoverShared: true,
		FreezeTimeout: cfg.FreezeTimeout, Start: time.Now(), Logger: log}
	snaps, err := swarm.SampleRepeatedly(ctx, base, swarm.SampleOptions{Samples: cfg.Samples, Interval: cfg.Interval,
		OnSample: func(i int, s *census.Snapshot) {
			fmt.Fprintf(progress, "sample %d/%d: %d pages, frozen %s, took %s; shared read-only layer: %d directories\n", i+1, cfg.Samples,
				len(s.Pages), s.Freeze.Round(time.Millisecond), s.Duration.Round(time.Millisecond), len(s.SharedDirs))
		}})
	if err != nil {
		return nil, err
	}
	return census.Analyze(snaps, cfg.Label), nil
}

// CensusSwarmConfig is a census of coding-agent swarms: every size in
// Sizes crossed with every configuration, each swarm censused on the
// seed's schedule.
type CensusSwarmConfig struct {
	Sizes   []int
	Configs []string // swarm.Config names; nil: swarm.Configs
	// TimeScale multiplies the census schedule (swarm.Schedule).
	TimeScale float64
	Module    string // Go module@version used as the repository
	TestPkg   string // package the siblings' test step runs
	Seed      int64  // per-sibling file and pattern choice
	// RoundPause is the pause between a sibling's rounds.
	RoundPause time.Duration
	// Gopls is the gopls binary; "" installs swarm.GoplsVersion into
	// CacheDir.
	Gopls, CacheDir string
	WorkDir         string // parent of the temporary tree; "" for $TMPDIR
	FreezeTimeout   time.Duration

	// Progress receives a line per phase and per finished run; nil shows
	// none.
	Progress io.Writer
	Log      *slog.Logger // nil discards
}

// SwarmReport is a swarm census: what ran and the samples of the runs
// that succeeded.
type SwarmReport struct {
	Repo     string                `json:"repo"`
	Gopls    string                `json:"gopls"`
	Schedule []float64             `json:"schedule_s"`
	Runs     []SwarmRun            `json:"runs"`
	Samples  []census.SampleResult `json:"samples"`
}

// SwarmRun is one swarm of the report: its result, or the error it
// failed with.
type SwarmRun struct {
	Config string `json:"config"`
	N      int    `json:"n"`
	*swarm.Result
	Error string `json:"error,omitempty"`
}

// CensusSwarm prepares the repository (gopls, dependencies, a warm build)
// in a temporary tree, runs one swarm per size and configuration and
// removes the tree and the swarms' cgroup parent at the end. A run that
// fails is recorded in the report and the others go on; the report is
// returned together with the last run's error, or with ctx's error when
// cancelled. Errors before the first run return no report.
func CensusSwarm(ctx context.Context, cfg CensusSwarmConfig) (*SwarmReport, error) {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	var cfgs []swarm.Config
	for _, c := range cfg.Configs {
		sc, err := swarm.ParseConfig(c)
		if err != nil {
			return nil, err
		}
		cfgs = append(cfgs, sc)
	}
	if len(cfgs) == 0 {
		cfgs = swarm.Configs
	}
	sched, err := swarm.Schedule(cfg.TimeScale)
	if err != nil {
		return nil, err
	}
	if err := cgroup.RequireRoot(); err != nil {
		return nil, err
	}
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return nil, err
	}
	gopls := cfg.Gopls
	if gopls == "" {
		fmt.Fprintf(progress, "ensuring gopls %s in %s\n", swarm.GoplsVersion, cfg.CacheDir)
		if gopls, err = swarm.EnsureGopls(ctx, cfg.CacheDir, swarm.GoplsVersion); err != nil {
			return nil, err
		}
	}
	src, err := swarm.ModuleDir(ctx, cfg.Module)
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp(cfg.WorkDir, "tenon-census-swarm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	fmt.Fprintf(progress, "preparing repository %s (dependencies, warm build)\n", cfg.Module)
	repo, err := swarm.PrepareRepo(ctx, src, filepath.Join(root, "repo"), gopls, cfg.TestPkg)
	if err != nil {
		return nil, err
	}
	parent := fmt.Sprintf("tenon-census-swarm-%d", os.Getpid())
	defer func() {
		if g, err := cgroup.Open(layout, parent); err == nil {
			_ = g.Delete()
		}
	}()
	rep := &SwarmReport{Repo: cfg.Module, Gopls: gopls}
	for _, d := range sched {
		rep.Schedule = append(rep.Schedule, d.Seconds())
	}
	base := swarm.Options{Repo: repo, Schedule: sched, Seed: cfg.Seed, RoundPause: cfg.RoundPause,
		TestPkg: cfg.TestPkg, SharedDirs: []string{runtime.GOROOT()}, Layout: layout, FreezeTimeout: cfg.FreezeTimeout,
		Logger: cfg.Log, Progress: func(m string) { fmt.Fprintf(progress, "%s %s\n", time.Now().Format("15:04:05"), m) }}
	err = runSwarms(ctx, rep, cfg.Sizes, cfgs, func(c swarm.Config, n int) (*swarm.Result, error) {
		o := base
		o.Config, o.N = c, n
		o.WorkDir = filepath.Join(root, fmt.Sprintf("%s-%d", c, n))
		o.CgroupParent = fmt.Sprintf("%s/%s-%d", parent, c, n)
		return swarm.Run(ctx, o)
	}, progress)
	return rep, err
}

// runSwarms runs every size in every configuration through run, in that
// order, and records each in rep: its samples when it succeeded, its error
// when not. It stops early when ctx is done and returns the last run's
// error, or else ctx's.
func runSwarms(ctx context.Context, rep *SwarmReport, sizes []int, cfgs []swarm.Config,
	run func(swarm.Config, int) (*swarm.Result, error), progress io.Writer) error {
	var runErr error
	for _, n := range sizes {
		for _, c := range cfgs {
			r, err := run(c, n)
			sr := SwarmRun{Config: string(c), N: n, Result: r}
			if err != nil {
				sr.Error = err.Error()
				fmt.Fprintf(progress, "tenon census swarm: %s N=%d: %v\n", c, n, err)
				runErr = err
			} else {
				rep.Samples = append(rep.Samples, r.Samples...)
				fmt.Fprintf(progress, "%s N=%d: startup %.1fs, %d rounds, %d failed steps, freeze windows %v\n",
					c, n, r.StartupS, r.Rounds, r.Failures, r.Freeze)
			}
			rep.Runs = append(rep.Runs, sr)
			if ctx.Err() != nil {
				break
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	if runErr != nil {
		return runErr
	}
	return ctx.Err()
}
