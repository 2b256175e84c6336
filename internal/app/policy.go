package app

import (
	"io"
	"log/slog"
	"path/filepath"
	"slices"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/residency/managed"
)

// buildPolicy builds the policy called name for a live host: its decision
// core (policy.Build: the predictor is trained here) behind the live
// adapter, with residency's state under stateDir ("" keeps sandboxes
// resident). It is the only place in the tree outside tests that
// constructs a policy: every caller builds each policy once per run and
// passes it along. pacing is the gate's actuator (openActuator): nil
// freezes denied sandboxes.
func buildPolicy(name string, opts policy.Options, stateDir string, pacing *live.Pacing, log *slog.Logger) (controller.Policy, error) {
	p, err := buildLive(name, opts, stateDir, false, live.Options{Logger: log, Pacing: pacing})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// buildLive is buildPolicy with the live adapter's options (the daemon's
// measurement hook) and its concrete type (to swap retrained models in).
// keepWorkspaces is managed.Config.KeepWorkspaces (the daemon's agent
// workspaces stay in place across teardowns and releases).
func buildLive(name string, opts policy.Options, stateDir string, keepWorkspaces bool, lo live.Options) (*live.Policy, error) {
	if stateDir != "" {
		lo.Residency = residencyIn(filepath.Join(stateDir, "residency"), opts.TimeScale, keepWorkspaces, lo.Logger)
	}
	return live.Build(name, opts, lo)
}

// residencyIn builds residency managers (internal/residency/managed) that
// keep their state in dir: the backend-specific part of residency, injected
// into the live adapter here.
func residencyIn(dir string, timeScale float64, keepWorkspaces bool, log *slog.Logger) live.ResidencyFactory {
	return func(h controller.SandboxHost, v live.ResidencyViews) (controller.Sandboxes, io.Closer, error) {
		cfg := managed.Config{StateDir: dir, TimeScale: timeScale, KeepWorkspaces: keepWorkspaces}
		cfg.Residency.Sink, cfg.Residency.Free, cfg.Residency.Waiting, cfg.Residency.Need = v.Sink, v.Free, v.Waiting, v.Need
		// A stalled action's sandbox is paged out in red after ten gate
		// periods, on the replay's clock as the gate (policy.ScaledGate).
		cfg.Residency.Policy.Stall = 10 * policy.ScaledGate(gate.DefaultConfig(), timeScale).Period
		m, err := managed.NewManager(cfg, h, v.Pressure, log)
		if err != nil {
			return nil, nil, err
		}
		return m, m, nil
	}
}

// PolicyDoc is one registered policy name and its one-line help.
type PolicyDoc struct {
	Name string // an exact name ("eager") or a family ("static-N")
	Help string
}

// Policies lists the registered policies sorted by name, for help texts.
func Policies() []PolicyDoc {
	var out []PolicyDoc
	for _, e := range policy.Entries() {
		out = append(out, PolicyDoc{Name: e.Name, Help: e.Help})
	}
	return out
}

// PolicyNames lists the registered policy names, e.g. ["eager", "static-N"].
func PolicyNames() []string {
	var out []string
	for _, p := range Policies() {
		out = append(out, p.Name)
	}
	return out
}

// DefaultPolicy is the daemon's policy: "tenon" when it is registered,
// else "gate".
func DefaultPolicy() string {
	if slices.Contains(PolicyNames(), "tenon") {
		return "tenon"
	}
	return "gate"
}

// discardLog is the logger of a config that sets none.
func discardLog(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
