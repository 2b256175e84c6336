package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/units"
)

// ServeConfig is the daemon: its listeners, backend, domain and policy.
type ServeConfig struct {
	Socket   string // unix socket path
	Listen   string // also listen on TCP at this address, "" for none
	Token    string // bearer token for TCP clients; required with Listen
	StateDir string // agent registry and workspaces
	Budget   int64
	Domain   string // name of the workload domain cgroup
	Policy   string
	// Params are policy parameters, key=value (policy.Options.Params:
	// e.g. cpu-pacing=off); nil for the defaults.
	Params map[string]string
	// Model is a trained predictor file (predict.Load) for policies with
	// admission; "" starts from class priors and learns online.
	Model   string
	Backend string // one of BackendNames
	// Upstream is the OpenAI-compatible base URL the model proxy forwards
	// to, with UpstreamKey as its API key.
	Upstream, UpstreamKey string
	Drain                 time.Duration // how long shutdown waits for running actions
	// DiskMax caps each sandbox's writable layer (process backend) and
	// each agent's workspace, in bytes; 0 turns both off.
	DiskMax int64
	// DaemonMemory is the daemon's own soft memory limit (the Go runtime's,
	// debug.SetMemoryLimit, unless GOMEMLIMIT is set); a quarter of it
	// bounds the large request bodies in flight (api.Config.BodyMemory).
	// 0 leaves both at their defaults.
	DaemonMemory int64
	// Actuator is how the gate holds denied sandboxes back (one of
	// ActuatorNames; "" is auto).
	Actuator string
	// IdleLoop: the process backend's executors make way for the idle
	// loop between actions (process.Config.IdleLoop).
	IdleLoop bool
	// QueueTimeout and SlotIdle are api.Config's (0: their defaults).
	QueueTimeout, SlotIdle time.Duration

	// Status receives the line saying what is served; nil shows none.
	Status io.Writer
	Log    *slog.Logger // nil discards
}

// Serve runs the daemon until ctx is done or a listener fails, then stops
// accepting requests, drains running actions for up to cfg.Drain and
// releases every sandbox and the workload domain.
func Serve(ctx context.Context, cfg ServeConfig) error {
	if cfg.Listen != "" && cfg.Token == "" {
		return api.ErrNoToken
	}
	log := discardLog(cfg.Log)
	if cfg.StateDir == "" {
		return errors.New("serve: a state directory is required (--state-dir)")
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	if cfg.DaemonMemory > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(cfg.DaemonMemory)
	}
	lock, err := cgroup.AcquireOwner(filepath.Join(cfg.StateDir, "serve.lock"), "state directory "+cfg.StateDir, "/proc", "tenon serve")
	if err != nil {
		return err
	}
	defer lock.Release()
	be, dom, closeBackend, err := openBackend(ctx, cfg.Backend, cfg.StateDir, cfg.StateDir, cfg.Domain, cfg.Budget, diskMax(cfg.DiskMax), cfg.IdleLoop, log)
	if err != nil {
		return err
	}
	defer closeBackend()
	pacing, closeActuator, err := openActuator(cfg.Actuator, []string{cfg.Policy}, log)
	if err != nil {
		return err
	}
	defer closeActuator()
	p, lrn, err := servePolicy(cfg, pacing, log)
	if err != nil {
		return err
	}
	if lrn != nil {
		defer lrn.Close()
	}
	srv, err := api.New(ctx, api.Config{
		StateDir: cfg.StateDir, Backend: be, Policy: p, Budget: cfg.Budget, Domain: dom, Logger: log,
		Token: cfg.Token, Upstream: cfg.Upstream, UpstreamKey: cfg.UpstreamKey,
		QueueTimeout: cfg.QueueTimeout, SlotIdle: cfg.SlotIdle, WorkspaceMax: cfg.DiskMax,
		BodyMemory: cfg.DaemonMemory / 4,
	})
	if err != nil {
		return err
	}
	lns := []net.Listener{}
	ln, err := api.ListenUnix(cfg.Socket)
	if err != nil {
		_ = srv.Shutdown(context.Background())
		return err
	}
	defer os.Remove(cfg.Socket)
	lns = append(lns, ln)
	if cfg.Listen != "" {
		tl, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			_ = srv.Shutdown(context.Background())
			return fmt.Errorf("listening on %s: %w", cfg.Listen, err)
		}
		lns = append(lns, tl)
	}
	errc := make(chan error, len(lns))
	for _, l := range lns {
		go func() { errc <- srv.Serve(l) }()
	}
	if cfg.Status != nil {
		fmt.Fprintf(cfg.Status, "tenon serve: policy %s, backend %s, budget %s, socket %s, state %s", p.Name(), be.Name(), units.FormatSize(cfg.Budget), cfg.Socket, cfg.StateDir)
		if cfg.Listen != "" {
			fmt.Fprintf(cfg.Status, ", tcp %s", cfg.Listen)
		}
		if lrn != nil {
			fmt.Fprintf(cfg.Status, ", %s", lrn.origin)
		}
		fmt.Fprintln(cfg.Status)
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Drain)
	defer cancel()
	err = srv.Shutdown(sctx)
	return errors.Join(serveErr, err)
}

// servePolicy builds the daemon's policy (learningPolicy) with its
// residency state in the state directory.
func servePolicy(cfg ServeConfig, pacing *live.Pacing, log *slog.Logger) (*live.Policy, *learner, error) {
	return learningPolicy(cfg.Policy, cfg.Model, cfg.StateDir, cfg.Budget, cfg.Params, true, live.Options{Logger: log, Pacing: pacing})
}

// learningPolicy builds the live policy called name (with params) and, for a policy with
// admission, the learner: the predictor starts from model, the saved model
// in stateDir or the class priors and learns from the host's measured
// actions. residency keeps the residency manager's state in stateDir
// (false: sandboxes stay resident).
func learningPolicy(name, model, stateDir string, budget int64, params map[string]string, residency bool, lo live.Options) (*live.Policy, *learner, error) {
	log := lo.Logger
	sp, err := policy.ParseSpec(name)
	if err != nil {
		return nil, nil, err
	}
	popts := policy.Options{Budget: budget, CPUs: float64(runtime.NumCPU()), Params: params}
	var lrn *learner
	switch {
	case sp.Admission && sp.Predictor != policy.PredCurrent && model == "":
		return nil, nil, fmt.Errorf("policy %q uses the %s predictor, which tenon does not learn online: pass --model with a model of that kind (tenon predict train), or use --policy tenon", name, sp.Predictor)
	case sp.Admission:
		if lrn, popts.Predictor, err = openLearner(filepath.Join(stateDir, "model"), model, budget/8, RetrainEvery, log); err != nil {
			return nil, nil, err
		}
		lo.Measured = lrn.Record
	case model != "":
		log.Warn("--model unused: the policy has no admission, hence no predictor", "policy", name)
	}
	resDir := ""
	if residency {
		resDir = stateDir
	}
	// The agents' workspaces are the API server's (its files API, its
	// disk limit, kept across restarts): residency leaves them in place.
	p, err := buildLive(name, popts, resDir, true, lo)
	if err != nil {
		if lrn != nil {
			lrn.Close()
		}
		return nil, nil, err
	}
	if lrn != nil {
		lrn.swap = p.SetModel
	}
	return p, lrn, nil
}

// diskMax maps ServeConfig.DiskMax to process.Config.DiskMax, where 0
// means the default and < 0 none.
func diskMax(n int64) int64 {
	if n <= 0 {
		return -1
	}
	return n
}
