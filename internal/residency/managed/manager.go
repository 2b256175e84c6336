package managed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/store"
	"github.com/tenon-dev/tenon/internal/swap"
)

// Config configures a Manager.
type Config struct {
	// StateDir holds everything residency keeps: blobs/ and staging/ (the
	// residency manager), host/ (sandbox metas, host-owned workspaces) and
	// salvage/ (see SalvageDir). It must be on the same file system as the
	// backend's state directory and the workspaces, so that restored
	// layers and workspaces move by rename (they are copied otherwise,
	// which costs time). Required.
	StateDir string
	// StorePath is the recovery database; default StateDir/residency.db.
	StorePath string
	// Residency tunes the residency manager; its StateDir and Pressure are
	// set by NewManager.
	Residency residency.Config
	// TimeScale converts a replayed workflow's trajectory seconds to wall
	// time for the model waits residency learns from (each action's Wait
	// × TimeScale); 0 means 1.
	TimeScale float64
	// NoPageOut keeps the page-out tier off. Otherwise it is on when the
	// backend can page (sandbox.Pager) and swap is on at NewManager.
	NoPageOut bool
	// KeepWorkspaces is HostConfig.KeepWorkspaces: the workspaces the
	// driver names (controller.Agent.Workspace) are its own, kept in
	// place across teardowns and releases and never captured.
	KeepWorkspaces bool
}

// SalvageDir is where a process backend sharing stateDir with a Manager
// must salvage the writable layers of sandboxes lost in a crash
// (process.Config.SalvageDir), so NewManager can revive them.
func SalvageDir(stateDir string) string { return filepath.Join(stateDir, "salvage") }

// Manager is a controller.Sandboxes backed by a residency.Manager: the
// agent's sandbox may be torn down (fail-closed) at an action-done boundary
// and is rematerialized in the next Ensure. It also implements io.Closer.
type Manager struct {
	h     controller.SandboxHost
	scale float64
	log   *slog.Logger
	st    *store.Store
	host  *Host
	rm    *residency.Manager
	rep   residency.RecoverReport

	mu        sync.Mutex
	agents    map[string]*controller.Agent // agent id → the driver's agent
	announced map[string]*controller.Agent // sandbox id → its agent, after Up
	// waits learns a replayed workflow's model waits as they pass, so
	// residency predicts the next one as the daemon does (a workflow's
	// next Wait is never read ahead).
	waits *policy.WaitModel
}

var _ controller.Sandboxes = (*Manager)(nil)

// NewManager opens (or creates) the residency state in cfg.StateDir,
// revives sandboxes a crash left behind, recovers every logical agent
// (residency.Manager.Recover) and returns the manager. pressure supplies
// the global pressure Q(t) (nil: always green). Up and Down of h are
// called for every sandbox coming and going, background teardowns and
// rematerializations included. The backend must implement LayerBackend
// and RootfsRestorer (the process backend does).
func NewManager(cfg Config, h controller.SandboxHost, pressure func() residency.Pressure, log *slog.Logger) (*Manager, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("managed: Config.StateDir is required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.StorePath == "" {
		cfg.StorePath = filepath.Join(cfg.StateDir, "residency.db")
	}
	if cfg.TimeScale <= 0 {
		cfg.TimeScale = 1
	}
	m := &Manager{h: h, scale: cfg.TimeScale, log: log, agents: map[string]*controller.Agent{}, announced: map[string]*controller.Agent{},
		waits: policy.NewWaitModel()}
	host, err := NewHost(HostConfig{
		Backend: h.Backend, Dir: filepath.Join(cfg.StateDir, "host"), Spec: m.spec,
		Up: m.up, Down: m.down, Logger: log, KeepWorkspaces: cfg.KeepWorkspaces,
	})
	if err != nil {
		return nil, err
	}
	m.host = host
	st, err := store.Open(cfg.StorePath)
	if err != nil {
		return nil, fmt.Errorf("opening residency store: %w", err)
	}
	m.st = st
	rc := cfg.Residency
	rc.StateDir = cfg.StateDir
	if pressure != nil {
		rc.Pressure = pressure
	}
	var rh residency.Host = host
	if !cfg.NoPageOut {
		var why string
		if rh, why = pageOutHost(host, swap.GetStatus); why != "" {
			log.Info("residency: page-out tier skipped", "why", why)
		} else {
			rc.Policy.PageOut = true
			log.Info("residency: page-out tier on (idle sandboxes may be frozen and paged out to swap)")
		}
	}
	if m.rm, err = residency.New(rc, rh, st, log); err != nil {
		st.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := m.recover(ctx, SalvageDir(cfg.StateDir)); err != nil {
		m.rm.Close()
		st.Close()
		return nil, err
	}
	return m, nil
}

// recover revives the sandboxes of agents the registry says are resident,
// then lets residency recover every agent.
func (m *Manager) recover(ctx context.Context, salvage string) error {
	entries, err := m.st.ListAgents()
	if err != nil {
		return fmt.Errorf("recovering: %w", err)
	}
	resident := map[string]bool{}
	for _, e := range entries {
		if e.State == store.StateResident && e.SandboxID != "" {
			resident[e.SandboxID] = true
		}
	}
	if _, err := m.host.Revive(ctx, salvage, func(id string) bool { return resident[id] }); err != nil {
		return err
	}
	if m.rep, err = m.rm.Recover(ctx); err != nil {
		return err
	}
	m.log.Info("residency recovered", "resident", len(m.rep.Resident), "absent", len(m.rep.Absent),
		"lost", len(m.rep.Lost), "destroyed", len(m.rep.Destroyed))
	return nil
}

// Recovered says what NewManager recovered.
func (m *Manager) Recovered() residency.RecoverReport { return m.rep }

// Residency returns the underlying manager (metrics, costs, Tick).
func (m *Manager) Residency() *residency.Manager { return m.rm }

// Metrics returns the residency counters (teardowns, rematerializations,
// bytes captured, memory reclaimed, lifecycle overhead, boundaries and the
// restartable share via Metrics.RestartableShare).
func (m *Manager) Metrics() residency.Metrics { return m.rm.Metrics() }

// KeepsWorkspaces reports Config.KeepWorkspaces: the driver's workspaces
// stay where they are, directories or mount points, for the agent's life.
func (m *Manager) KeepsWorkspaces() bool { return m.host.cfg.KeepWorkspaces }

// Host returns the residency host over the backend.
func (m *Manager) Host() *Host { return m.host }

// Close stops background teardowns and closes the store. Live sandboxes
// stay (the backend's Close destroys them); the registry describes them.
func (m *Manager) Close() error {
	err := m.rm.Close()
	return errors.Join(err, m.st.Close())
}

// Ensure returns the agent's live sandbox, creating or rematerializing it.
func (m *Manager) Ensure(ctx context.Context, a *controller.Agent) (string, error) {
	m.mu.Lock()
	m.agents[a.ID] = a
	m.mu.Unlock()
	info := residency.AgentInfo{ID: a.ID, WorkflowID: a.ID, Attempt: a.Attempt, NextAction: a.Next}
	if a.Workflow != nil {
		info.BaseImage = a.Workflow.Image
	}
	id, err := m.rm.Ensure(ctx, info)
	if err != nil {
		return "", err
	}
	a.SandboxID = id
	// A sandbox revived or re-adopted at recovery was never announced.
	m.mu.Lock()
	_, ok := m.announced[id]
	m.mu.Unlock()
	if !ok {
		if si, err := m.h.Backend.Info(ctx, id); err == nil {
			m.up(a.ID, si)
		}
	}
	return id, nil
}

// Stall tells residency that the agent's action waits for admission
// (controller.Staller): in red its sandbox may be paged out meanwhile.
func (m *Manager) Stall(a *controller.Agent) { m.rm.Stall(a.ID) }

// Unstall pages the agent's sandbox back in if it was paged out while its
// action waited for admission (controller.Staller).
func (m *Manager) Unstall(ctx context.Context, a *controller.Agent) error {
	return m.rm.Unstall(ctx, a.ID)
}

// StallSandbox and UnstallSandbox tell residency that the runtime gate
// froze sandbox id mid-action and let it run again
// (controller.SandboxStaller).
func (m *Manager) StallSandbox(id string) { m.rm.StallSandbox(id) }

// UnstallSandbox: see StallSandbox.
func (m *Manager) UnstallSandbox(ctx context.Context, id string) (bool, error) {
	return m.rm.UnstallSandbox(ctx, id)
}

// WaitBegin tells residency that the agent's model wait began now and is
// predicted to last predicted (0: unknown): it decides again whether to
// keep, page out or tear the idle sandbox down.
func (m *Manager) WaitBegin(a *controller.Agent, predicted time.Duration) {
	m.rm.WaitBegin(a.ID, predicted)
}

// WaitEnd starts bringing the agent's sandbox back (page-in or
// rematerialization) ahead of its next action, when pressure allows.
func (m *Manager) WaitEnd(a *controller.Agent) { m.rm.Prefetch(a.ID) }

// PagedOut reports whether the agent's sandbox is frozen with its memory
// paged out.
func (m *Manager) PagedOut(agentID string) bool { return m.rm.PagedOut(agentID) }

// Boundary hands the action-done boundary to residency. Only an action
// that finished (no Outcome.Failure, no Err) makes the boundary eligible
// for restart-safe teardown; a failed attempt's sandbox stays for Release.
func (m *Manager) Boundary(ctx context.Context, a *controller.Agent, o controller.Outcome) error {
	next := o.Index + 1
	wait := a.NextWait
	if a.Workflow != nil && o.Index < len(a.Workflow.Actions) {
		// A replay: learn the wait that preceded this action and predict
		// the next, if any, from the waits seen so far.
		m.mu.Lock()
		m.waits.Observe(a.ID, time.Duration(a.Workflow.Actions[o.Index].Wait*m.scale*float64(time.Second)))
		wait = 0
		if next < len(a.Workflow.Actions) {
			wait = m.waits.Predict(a.ID)
		}
		m.mu.Unlock()
	}
	_, err := m.rm.Boundary(ctx, a.ID, residency.BoundaryInfo{
		ActionExited:   o.Err == nil && o.Failure() == nil,
		ResultRecorded: true,
		NextAction:     next,
		PredictedWait:  wait,
	})
	return err
}

// Release destroys the agent's sandbox and forgets its records: a new
// attempt starts clean.
func (m *Manager) Release(ctx context.Context, a *controller.Agent) error {
	err := m.rm.Release(ctx, a.ID)
	a.SandboxID = ""
	m.mu.Lock()
	delete(m.agents, a.ID)
	m.mu.Unlock()
	if errors.Is(err, residency.ErrUnknownAgent) {
		return nil
	}
	return err
}

// spec asks the driver for the agent's next sandbox spec.
func (m *Manager) spec(rs residency.Spec) sandbox.Spec {
	m.mu.Lock()
	a := m.agents[rs.AgentID]
	m.mu.Unlock()
	if a == nil || m.h.Spec == nil {
		return sandbox.Spec{}
	}
	return m.h.Spec(a)
}

func (m *Manager) up(agentID string, info sandbox.Info) {
	m.mu.Lock()
	a := m.agents[agentID]
	if a != nil {
		m.announced[info.ID] = a
	}
	m.mu.Unlock()
	if a != nil && m.h.Up != nil {
		m.h.Up(a, info)
	}
}

func (m *Manager) down(agentID, id string) {
	m.mu.Lock()
	a, ok := m.announced[id]
	delete(m.announced, id)
	m.mu.Unlock()
	if ok && m.h.Down != nil {
		m.h.Down(a, id)
	}
}
