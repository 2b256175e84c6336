package main

import (
	"io"
	"log/slog"
	"path/filepath"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/residency/managed"
)

// livePolicy puts a resolved policy configuration on the live host: a
// fresh decision core behind the live adapter, with residency's state in
// stateDir ("" keeps sandboxes resident).
func livePolicy(cfg policy.Config, stateDir string, timeScale float64, log *slog.Logger) (*live.Policy, error) {
	m, err := policy.NewMachine(cfg)
	if err != nil {
		return nil, err
	}
	opts := live.Options{Logger: log}
	if stateDir != "" {
		opts.Residency = residencyIn(filepath.Join(stateDir, "residency"), timeScale, log)
	}
	return live.New(m, opts), nil
}

// residencyIn builds residency managers (internal/residency/managed) that
// keep their state in dir.
func residencyIn(dir string, timeScale float64, log *slog.Logger) live.ResidencyFactory {
	return func(h controller.SandboxHost, pressure func() residency.Pressure, sink func(residency.Event)) (controller.Sandboxes, io.Closer, error) {
		cfg := managed.Config{StateDir: dir, TimeScale: timeScale}
		cfg.Residency.Sink = sink
		m, err := managed.NewManager(cfg, h, pressure, log)
		if err != nil {
			return nil, nil, err
		}
		return m, m, nil
	}
}
