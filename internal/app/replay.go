package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/imagestore"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// ReplayConfig is one side-by-side replay of a workload under several
// policies, on the same schedule and budget.
type ReplayConfig struct {
	Workflows []trajectory.Workflow
	Policies  []string
	Params    map[string]string // policy parameters, key=value
	Budget    int64
	Backend   string // one of BackendNames
	Domain    string // name of the workload domain cgroup
	StateDir  string // where each policy's run directory is made
	TimeScale float64
	Retries   int // replay.Config.MaxRetries: negative means none
	// ActionTimeout fails an action that runs longer; 0 means
	// replay.DefaultActionTimeout of Workflows at TimeScale, negative none.
	ActionTimeout time.Duration
	EventLog      string // JSONL path, "" for none
	// Actuator is how the gate holds denied sandboxes back (one of
	// ActuatorNames; "" is auto), for the whole comparison.
	Actuator string
	// IdleLoop: the process backend's executors make way for the idle
	// loop between actions (process.Config.IdleLoop).
	IdleLoop bool
	Label    string // progress prefix, e.g. the bench case

	// Progress receives a progress bar per policy; nil shows none.
	Progress io.Writer
	Log      *slog.Logger // nil discards
}

// Replay replays the workload once per policy, each in a fresh workload
// domain and backend, and returns the comparison. Every policy is built
// first, once: a bad name or parameter fails before any work. A policy
// that cannot run stops the whole comparison with its error; a cancelled
// context returns the policies that finished before it together with the
// error (a run it cut, with workflows failed by the interrupt, is left
// out; nil when that was the first).
func Replay(ctx context.Context, cfg ReplayConfig) (*report.Comparison, error) {
	wfs, err := checkImages(cfg.Backend, cfg.StateDir, cfg.Workflows)
	if err != nil {
		return nil, err
	}
	cfg.Workflows = wfs
	pacing, closeActuator, err := openActuator(cfg.Actuator, cfg.Policies, discardLog(cfg.Log))
	if err != nil {
		return nil, err
	}
	defer closeActuator()
	runs, err := cfg.buildRuns(cfg.Policies, pacing)
	if err != nil {
		return nil, err
	}
	warnInfeasible(cfg.Progress, cfg.Label, cfg.Workflows, cfg.Budget)
	return cfg.replayRuns(ctx, runs)
}

// warnInfeasible says up front which workflows cannot fit the budget
// (trajectory.ErrInfeasible): no policy starts them, and the results count
// them apart.
func warnInfeasible(w io.Writer, label string, wfs []trajectory.Workflow, budget int64) {
	bad := trajectory.Infeasible(wfs, budget)
	if w == nil || len(bad) == 0 {
		return
	}
	if label != "" {
		label += ": "
	}
	fmt.Fprintf(w, "%s%d of %d workflows cannot fit the %s budget and will not be started (reported as infeasible):\n",
		label, len(bad), len(wfs), units.FormatSize(budget))
	for _, wf := range bad {
		fmt.Fprintf(w, "  %v\n", wf.Feasible(budget))
	}
}

// OverrideImage returns a copy of wfs with every workflow's image set to
// image (the replay's --image), and how many workflows named another one
// (rather than none, the backend's default).
func OverrideImage(wfs []trajectory.Workflow, image string) ([]trajectory.Workflow, int) {
	out := slices.Clone(wfs)
	n := 0
	for i := range out {
		if out[i].Image != "" && out[i].Image != image {
			n++
		}
		out[i].Image = image
	}
	return out, n
}

// checkImages fails before any replay when a workflow names an image the
// process backend cannot provide (neither the host's root, "host", nor an
// image of the state directory's image store): every sandbox start would
// fail, and the workflow with it. Imported traces name the image they
// were recorded in; --image overrides it. It returns the workflows with
// each store image pinned to its id (imagestore.Pinned), so a workflow's
// rematerialized sandboxes run the image its first one did; wfs itself is
// not changed.
func checkImages(backend, stateDir string, wfs []trajectory.Workflow) ([]trajectory.Workflow, error) {
	if backend != "process" {
		return wfs, nil
	}
	out := slices.Clone(wfs)
	for i, w := range out {
		if w.Image == "" || w.Image == "host" {
			continue
		}
		im, err := imagestore.Find(imageStoreDir(stateDir), w.Image)
		if err != nil {
			return nil, fmt.Errorf("workflow %s: image %q: %w; import it (tenon image import, tenon image pull), "+
				"run every workflow on the host with --image host, or use --backend docker: %w", w.ID, w.Image, err, sandbox.ErrUnsupportedImage)
		}
		out[i].Image = imagestore.Pinned(w.Image, im)
	}
	return out, nil
}

// policyRun is one policy's replay: the policy, built once, and the run
// directory it keeps its state in, made when the replay starts and removed
// when it ends.
type policyRun struct {
	name string // as asked for, for errors
	pol  controller.Policy
	dir  string
}

// buildRuns builds each policy once, with the run directory it will use.
func (cfg ReplayConfig) buildRuns(names []string, pacing *live.Pacing) ([]policyRun, error) {
	if len(names) == 0 {
		return nil, errors.New("no policy to replay")
	}
	runs := make([]policyRun, 0, len(names))
	for _, name := range names {
		r, err := cfg.buildRun(name, pacing)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func (cfg ReplayConfig) buildRun(name string, pacing *live.Pacing) (policyRun, error) {
	// The directory is named now, as the policy keeps its path, and made
	// only when the replay starts, so that a bad policy leaves nothing behind.
	dir := filepath.Join(cfg.StateDir, "run-"+strconv.FormatUint(rand.Uint64(), 10))
	pol, err := buildPolicy(name, policy.Options{Budget: cfg.Budget, Params: cfg.Params, Workflows: cfg.Workflows,
		TimeScale: cfg.TimeScale, ActionTimeout: max(actionTimeout(cfg.ActionTimeout, cfg.Workflows, cfg.TimeScale), 0),
		CPUs: float64(runtime.NumCPU())}, dir, pacing, discardLog(cfg.Log))
	if err != nil {
		return policyRun{}, err
	}
	return policyRun{name: name, pol: pol, dir: dir}, nil
}

// replayRuns replays the built policies one after the other.
func (cfg ReplayConfig) replayRuns(ctx context.Context, runs []policyRun) (*report.Comparison, error) {
	var events io.Writer
	if cfg.EventLog != "" {
		f, err := os.Create(cfg.EventLog)
		if err != nil {
			return nil, fmt.Errorf("creating event log: %w", err)
		}
		defer f.Close()
		events = f
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	var results []*replay.Result
	var runErr error
	for _, r := range runs {
		if ctx.Err() != nil {
			runErr = fmt.Errorf("interrupted before %s: %w", r.name, context.Cause(ctx))
			break
		}
		res, err := cfg.replayOne(ctx, r, events)
		if res != nil && res.Interrupted {
			// The interrupt failed the workflows still running: the run's
			// numbers (its kills, the workflows it "did not finish") are the
			// interrupt's, not the policy's; it is left out.
			res, err = nil, errors.Join(fmt.Errorf("interrupted: %w", context.Cause(ctx)), err)
		}
		if res != nil {
			results = append(results, res)
		}
		if err != nil {
			runErr = fmt.Errorf("replaying under %s: %w", r.name, err)
			break
		}
	}
	if len(results) == 0 {
		return nil, runErr
	}
	return report.Compare(cfg.Workflows, cfg.Budget, cfg.TimeScale, results...), runErr
}

func (cfg ReplayConfig) replayOne(ctx context.Context, r policyRun, events io.Writer) (*replay.Result, error) {
	if err := os.Mkdir(r.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	defer os.RemoveAll(r.dir)
	log := discardLog(cfg.Log)
	be, dom, closeBackend, err := openBackend(ctx, cfg.Backend, r.dir, cfg.StateDir, cfg.Domain, cfg.Budget, 0, cfg.IdleLoop, log)
	if err != nil {
		return nil, err
	}
	defer closeBackend()
	ws := filepath.Join(r.dir, "workspaces")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return nil, err
	}
	desc := r.pol.Name()
	if cfg.Label != "" {
		desc = cfg.Label + " " + desc
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	bar := progressbar.NewOptions(len(cfg.Workflows),
		progressbar.OptionSetWriter(progress),
		progressbar.OptionSetDescription(fmt.Sprintf("%-24s", desc)),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(250*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(progress) }),
	)
	res, err := replay.Run(ctx, replay.Config{
		Workflows: cfg.Workflows, Backend: be, Policy: r.pol, Budget: cfg.Budget, Domain: dom,
		TimeScale: cfg.TimeScale, MaxRetries: cfg.Retries, ActionTimeout: actionTimeout(cfg.ActionTimeout, cfg.Workflows, cfg.TimeScale),
		WorkspaceRoot: ws, EventLog: events, Logger: log,
		Progress: func(done, _ int) { _ = bar.Set(done) },
	})
	_ = bar.Finish()
	return res, err
}

// actionTimeout resolves an ActionTimeout of ReplayConfig or SimConfig for
// a workload at timeScale: 0 is replay.DefaultActionTimeout, negative is
// none (replay's and sim's 0).
func actionTimeout(d time.Duration, wfs []trajectory.Workflow, timeScale float64) time.Duration {
	switch {
	case d == 0:
		return replay.DefaultActionTimeout(wfs, timeScale)
	case d < 0:
		return 0
	}
	return d
}
