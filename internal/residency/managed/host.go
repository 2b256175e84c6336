package managed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tenon-dev/tenon/internal/fsutil"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// LayerBackend is the optional interface a backend implements to expose a
// sandbox's writable layer as a host directory (the process backend does).
type LayerBackend interface {
	WritableLayer(id string) (string, error)
}

// RootfsRestorer is the optional interface of a backend honouring
// sandbox.Spec.RootfsFrom.
type RootfsRestorer interface {
	SupportsRootfsFrom() bool
}

// ProcLister is the optional interface of a backend that names the
// processes of a sandbox (the process and docker backends). Without it, Host.Procs
// falls back to Stats.Procs - 1 anonymous entries.
type ProcLister interface {
	Procs(ctx context.Context, id string) ([]sandbox.Proc, error)
}

// readyTimeout bounds the readiness probe.
const readyTimeout = 10 * time.Second

// HostConfig configures a Host.
type HostConfig struct {
	// Backend runs the sandboxes. It must implement LayerBackend and
	// RootfsRestorer.
	Backend sandbox.Backend
	// Dir holds the host's files: meta/<id>.json (the spec of every live
	// sandbox, for revival after a crash) and workspaces/<id> (the
	// workspaces the host picks). It must be on the same file system as
	// the residency staging directory and the backend's state. Required.
	Dir string
	// Spec, when set, returns the base sandbox spec for a residency spec
	// (id, image, workspace, env, labels); an empty ID is generated. Each
	// call must return a fresh id.
	Spec func(residency.Spec) sandbox.Spec
	// Prefix starts generated sandbox ids; default "rz".
	Prefix string
	// KeepWorkspaces makes a workspace the spec names (not one the host
	// picks) its caller's: Destroy leaves it in place and the next
	// sandbox is built over it, so residency neither captures nor
	// restores it (residency.WorkspaceKeeper). The daemon sets it: its
	// agent workspaces outlive sandboxes and restarts, may be mounted
	// disk images, and are written through its files API meanwhile.
	KeepWorkspaces bool
	// Up is called after a sandbox was created, Down after it was destroyed
	// (also when destroy failed). Either may be nil.
	Up   func(agentID string, info sandbox.Info)
	Down func(agentID, id string)
	// Logger; nil discards.
	Logger *slog.Logger
}

// Host is a residency.Host over a sandbox.Backend.
type Host struct {
	cfg    HostConfig
	layers LayerBackend
	nonce  string
	seq    atomic.Int64

	mu   sync.Mutex
	live map[string]meta // sandbox id → its meta
}

var (
	_ residency.Host            = (*Host)(nil)
	_ residency.WorkspaceKeeper = (*Host)(nil)
)

// NewHost returns a host. It fails when the backend cannot expose or
// restore writable layers.
func NewHost(cfg HostConfig) (*Host, error) {
	if cfg.Backend == nil || cfg.Dir == "" {
		return nil, errors.New("managed: HostConfig.Backend and Dir are required")
	}
	lb, ok := cfg.Backend.(LayerBackend)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoWritableLayer, cfg.Backend.Name())
	}
	if r, ok := cfg.Backend.(RootfsRestorer); !ok || !r.SupportsRootfsFrom() {
		return nil, fmt.Errorf("%w: %s", ErrNoRestore, cfg.Backend.Name())
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "rz"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	for _, d := range []string{cfg.Dir, filepath.Join(cfg.Dir, "meta"), filepath.Join(cfg.Dir, "workspaces")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("managed: creating %s: %w", d, err)
		}
	}
	return &Host{
		cfg: cfg, layers: lb,
		// Ids are never reused, also across restarts on the same state.
		nonce: strconv.FormatInt(time.Now().UnixNano(), 36),
		live:  map[string]meta{},
	}, nil
}

func (h *Host) workspaceDir(id string) string { return filepath.Join(h.cfg.Dir, "workspaces", id) }

// Create makes a sandbox: the restored workspace (Spec.WorkspaceFrom) is
// renamed into the sandbox's workspace directory and the restored writable
// layer (Spec.UpperFrom) becomes its rootfs through sandbox.Spec.RootfsFrom.
// A kept workspace (KeepsWorkspace) comes with no WorkspaceFrom and is
// used as it is.
func (h *Host) Create(ctx context.Context, rs residency.Spec) (string, error) {
	var s sandbox.Spec
	if h.cfg.Spec != nil {
		s = h.cfg.Spec(rs)
	}
	if s.ID == "" {
		s.ID = fmt.Sprintf("%s-%s-%d", h.cfg.Prefix, h.nonce, h.seq.Add(1))
	}
	if s.Image == "" {
		s.Image = rs.BaseImage
	}
	if s.Workspace == "" {
		s.Workspace = h.workspaceDir(s.ID)
	}
	s.Env = append(slices.Clone(s.Env), rs.Runtime.Env...)
	s.Network = s.Network || rs.Runtime.Network
	labels := maps.Clone(rs.Runtime.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, s.Labels)
	labels["tenon.agent"] = rs.AgentID
	s.Labels = labels
	if rs.WorkspaceFrom != "" {
		if err := fsutil.MoveDir(rs.WorkspaceFrom, s.Workspace); err != nil {
			return "", fmt.Errorf("restoring workspace of %s: %w", rs.AgentID, err)
		}
	}
	m := meta{Agent: rs.AgentID, Spec: s}
	if err := h.writeMeta(m); err != nil {
		return "", err
	}
	s.RootfsFrom = rs.UpperFrom
	info, err := h.cfg.Backend.Create(ctx, s)
	if err != nil {
		h.removeMeta(s.ID)
		if s.Workspace == h.workspaceDir(s.ID) {
			_ = os.RemoveAll(s.Workspace)
		}
		return "", err
	}
	h.mu.Lock()
	h.live[s.ID] = m
	h.mu.Unlock()
	if h.cfg.Up != nil {
		h.cfg.Up(rs.AgentID, info)
	}
	return s.ID, nil
}

// Ready runs `true` in the sandbox.
func (h *Host) Ready(ctx context.Context, id string) error {
	r, err := h.cfg.Backend.Exec(ctx, id, sandbox.ExecRequest{Argv: []string{"true"}, Cwd: "/", Timeout: readyTimeout})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotReady, err)
	}
	if r.ExitCode != 0 {
		return fmt.Errorf("%w: probe exited %d: %s", ErrNotReady, r.ExitCode, r.Stderr)
	}
	return nil
}

// Paths returns the sandbox's writable layer and workspace.
func (h *Host) Paths(ctx context.Context, id string) (string, string, error) {
	h.mu.Lock()
	m, ok := h.live[id]
	h.mu.Unlock()
	if !ok {
		return "", "", fmt.Errorf("sandbox %q: %w", id, sandbox.ErrNotFound)
	}
	upper, err := h.layers.WritableLayer(id)
	if err != nil {
		return "", "", err
	}
	return upper, m.Spec.Workspace, nil
}

// Procs lists the sandbox's processes except its init.
func (h *Host) Procs(ctx context.Context, id string) ([]residency.ProcInfo, error) {
	if pl, ok := h.cfg.Backend.(ProcLister); ok {
		ps, err := pl.Procs(ctx, id)
		if err != nil {
			return nil, err
		}
		out := make([]residency.ProcInfo, len(ps))
		for i, p := range ps {
			out[i] = residency.ProcInfo{PID: p.PID, Comm: p.Comm}
		}
		return out, nil
	}
	st, err := h.cfg.Backend.Stats(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]residency.ProcInfo, max(st.Procs-1, 0))
	for i := range out {
		out[i] = residency.ProcInfo{Comm: "?"}
	}
	return out, nil
}

// WorkingSet is the sandbox's Stats.WorkingSet, read alone where the
// backend can (sandbox.WorkingSetReader).
func (h *Host) WorkingSet(ctx context.Context, id string) (int64, error) {
	if r, ok := h.cfg.Backend.(sandbox.WorkingSetReader); ok {
		return r.WorkingSet(ctx, id)
	}
	st, err := h.cfg.Backend.Stats(ctx, id)
	if err != nil {
		return 0, err
	}
	return st.WorkingSet, nil
}

// KeepsWorkspace reports whether sandbox id's workspace is its caller's,
// kept in place by Destroy (HostConfig.KeepWorkspaces).
func (h *Host) KeepsWorkspace(id string) bool {
	h.mu.Lock()
	m, ok := h.live[id]
	h.mu.Unlock()
	return ok && h.keeps(m.Spec)
}

func (h *Host) keeps(s sandbox.Spec) bool {
	return h.cfg.KeepWorkspaces && s.Workspace != h.workspaceDir(s.ID)
}

// Destroy destroys the sandbox and removes its workspace (captured before
// any teardown; a released agent's workspace is no longer needed), unless
// the workspace is its caller's (KeepsWorkspace).
func (h *Host) Destroy(ctx context.Context, id string) error {
	h.mu.Lock()
	m, ok := h.live[id]
	delete(h.live, id)
	h.mu.Unlock()
	err := h.cfg.Backend.Destroy(ctx, id)
	if ok {
		if !h.keeps(m.Spec) {
			if rerr := os.RemoveAll(m.Spec.Workspace); rerr != nil {
				err = errors.Join(err, fmt.Errorf("removing workspace: %w", rerr))
			}
		}
		h.removeMeta(id)
		if h.cfg.Down != nil {
			h.cfg.Down(m.Agent, id)
		}
	}
	return err
}

// List returns the live sandboxes this host made (or revived).
func (h *Host) List(ctx context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Sorted(maps.Keys(h.live)), nil
}

// AgentOf returns the agent a live sandbox belongs to.
func (h *Host) AgentOf(id string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, ok := h.live[id]
	return m.Agent, ok
}
