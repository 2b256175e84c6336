package swarm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tenon-dev/tenon/internal/census"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
)

// Options configure one swarm run (one configuration, one N).
type Options struct {
	Config Config
	N      int
	Repo   *Repo
	// WorkDir is a fresh directory for this run's siblings; it is removed
	// at the end.
	WorkDir string
	// Schedule lists the census points after the swarm started (every
	// sibling's gopls answered its first request).
	Schedule []time.Duration
	Seed     int64
	// RoundPause is the pause between two rounds of a sibling.
	RoundPause time.Duration
	TestPkg    string   // package `go test` runs, e.g. ./tools/bezier
	SharedDirs []string // directories every sibling sees besides the repo (GOROOT, module cache, build cache)
	Layout     *cgroup.Layout
	// CgroupParent is the parent group of the siblings' cgroups.
	CgroupParent  string
	FreezeTimeout time.Duration
	Proc          string
	Logger        *slog.Logger
	// Progress, when set, is told about each phase.
	Progress func(msg string)
}

// Result is one swarm run.
type Result struct {
	Samples []census.SampleResult `json:"samples"`
	// Freeze is the freeze window of each sample, Sample how long each
	// sample took.
	Freeze []time.Duration `json:"freeze_ns"`
	Sample []time.Duration `json:"sample_ns"`
	Rounds int64           `json:"rounds"`
	// Failures counts round steps that failed (logged at debug level).
	Failures int64 `json:"failures"`
	// StartupS is how long it took until every sibling's server was ready.
	StartupS float64 `json:"startup_s"`
}

// Run launches the swarm, censuses it on the schedule and tears it down,
// also when ctx is cancelled or a step fails.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	if o.N <= 0 || o.Repo == nil || len(o.Schedule) == 0 {
		return nil, fmt.Errorf("swarm: need N > 0, a repository and a schedule")
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, err
	}
	nsMount := filepath.Join(o.WorkDir, "ws")
	if err := os.MkdirAll(nsMount, 0o755); err != nil {
		return nil, err
	}
	sibs := make([]*sibling, o.N)
	var backend *process.Backend
	defer func() {
		progress("tearing down")
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
		defer cancel()
		var errs []error
		for _, s := range sibs {
			if s != nil {
				errs = append(errs, s.teardown(tctx))
			}
		}
		if backend != nil {
			errs = append(errs, backend.Close())
		}
		if g, gerr := cgroup.Open(o.Layout, o.CgroupParent); gerr == nil {
			errs = append(errs, g.Delete())
		}
		errs = append(errs, os.RemoveAll(o.WorkDir))
		if terr := errors.Join(errs...); terr != nil {
			err = errors.Join(err, fmt.Errorf("tearing down swarm: %w", terr))
		}
	}()

	progress(fmt.Sprintf("%s N=%d: setting up siblings", o.Config, o.N))
	if o.Config == Sandbox {
		state := filepath.Join(o.WorkDir, "state")
		b, err := process.New(process.Config{StateDir: state, CgroupParent: o.CgroupParent, Layout: o.Layout, Logger: o.Logger})
		if err != nil {
			return nil, fmt.Errorf("starting the process sandbox backend: %w", err)
		}
		backend = b
		if err := linkGopls(state, o.Repo.Dir); err != nil {
			return nil, fmt.Errorf("installing gopls for the sandboxes: %w", err)
		}
	}
	for i := range sibs {
		s := &sibling{index: i, name: "sib-" + strconv.Itoa(i), config: o.Config,
			dir: filepath.Join(o.WorkDir, "sib-"+strconv.Itoa(i)), log: o.Logger}
		sibs[i] = s
		for _, d := range []string{"upper", "work", "tmp"} {
			if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
				return nil, err
			}
		}
		var err error
		if o.Config == Sandbox {
			err = s.setupSandbox(ctx, backend, o.Layout, o.Repo.Dir)
		} else {
			err = s.setupHost(ctx, o.Layout, o.CgroupParent+"/"+s.name, o.Repo.Dir, nsMount)
		}
		if err != nil {
			return nil, fmt.Errorf("setting up %s: %w", s.name, err)
		}
	}
	progress(fmt.Sprintf("%s N=%d: starting %d language servers", o.Config, o.N, o.N))
	launch := time.Now()
	pickers := make([]*Picker, o.N)
	var wg sync.WaitGroup
	errs := make([]error, o.N)
	for i, s := range sibs {
		pickers[i] = NewPicker(o.Seed, i)
		first := pickers[i].File(o.Repo.Files)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
			defer cancel()
			errs[i] = s.startGopls(sctx, first)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("starting language servers: %w", err)
	}
	start := time.Now()
	res = &Result{StartupS: start.Sub(launch).Seconds()}

	rctx, stopRounds := context.WithCancel(ctx)
	var rounds, failures atomic.Int64
	for i, s := range sibs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rounds.Add(int64(s.rounds(rctx, pickers[i], o, &failures)))
		}()
	}
	defer func() { stopRounds(); wg.Wait() }()

	copts := census.Options{Start: start, FreezeTimeout: o.FreezeTimeout, Proc: o.Proc, Logger: o.Logger,
		SharedDirs: append([]string{o.Repo.Dir}, o.SharedDirs...)}
	for _, s := range sibs {
		copts.Siblings = append(copts.Siblings, census.Sibling{Name: s.name, Cgroups: []string{s.cgDir}, Dirs: s.private()})
		copts.Freezers = append(copts.Freezers, s.group)
	}
	var snaps []*census.Snapshot
	for _, at := range o.Schedule {
		t := time.NewTimer(time.Until(start.Add(at)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		progress(fmt.Sprintf("%s N=%d: census at %s", o.Config, o.N, at))
		snap, err := census.Sample(ctx, copts)
		if err != nil {
			return nil, fmt.Errorf("census at %s: %w", at, err)
		}
		snaps = append(snaps, snap)
		res.Freeze = append(res.Freeze, snap.Freeze)
		res.Sample = append(res.Sample, snap.Duration)
	}
	stopRounds()
	wg.Wait()
	res.Samples = census.Analyze(snaps, string(o.Config))
	res.Rounds, res.Failures = rounds.Load(), failures.Load()
	return res, nil
}

// rounds runs the sibling's rounds until ctx ends and returns how many
// were completed.
func (s *sibling) rounds(ctx context.Context, p *Picker, o Options, failures *atomic.Int64) int {
	fail := func(step string, err error) {
		if ctx.Err() == nil {
			failures.Add(1)
			o.Logger.Debug("swarm round step failed", "sibling", s.name, "step", step, "err", err)
		}
	}
	done := 0
	for r := 1; ctx.Err() == nil; r++ {
		st := RoundPlan(r)
		if st.Grep {
			// grep exits 1 when nothing matched: not a failure.
			var ee *ExitError
			if err := s.run(ctx, "grep", "-rn", "--include=*.go", "--exclude-dir="+ToolsDir, "-e", p.Pattern(), "."); err != nil && !(errors.As(err, &ee) && ee.Code == 1) {
				fail("grep", err)
			}
		}
		if st.Edit {
			rel := p.File(o.Repo.Files)
			if err := s.touch(ctx, rel, fmt.Sprintf("\n// tenon census: %s round %d\n", s.name, r)); err != nil {
				fail("edit", err)
			}
		}
		if st.Build {
			if err := s.run(ctx, goBin(), "build", "./..."); err != nil {
				fail("build", err)
			}
		}
		if st.Test {
			if err := s.run(ctx, goBin(), "test", "-count=1", o.TestPkg); err != nil {
				fail("test", err)
			}
		}
		if ctx.Err() == nil {
			done++
		}
		t := time.NewTimer(o.RoundPause)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	return done
}
