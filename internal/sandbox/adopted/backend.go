package adopted

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// ErrNotOwned says the backend was asked to create, run in or destroy a
// container: the container runtime does that, not tenon.
var ErrNotOwned = errors.New("adopted: the container runtime owns adopted containers (create, exec and destroy them through it)")

// Backend holds the adopted containers by sandbox id.
type Backend struct {
	layout *cgroup.Layout

	mu  sync.Mutex
	ctr map[string]*container
}

// container is one adopted container. Its mutex orders the freezer's
// writes with Remove, so that a container is never left frozen once
// removed.
type container struct {
	mu      sync.Mutex
	info    sandbox.Info
	group   cgroup.Group
	removed bool
}

var _ sandbox.Backend = (*Backend)(nil)

// New returns an empty backend over the host's cgroup layout.
func New(layout *cgroup.Layout) *Backend {
	return &Backend{layout: layout, ctr: map[string]*container{}}
}

// Name is "adopted".
func (b *Backend) Name() string { return "adopted" }

// Add adopts the container whose cgroup is at path (relative to the
// hierarchy roots) as sandbox id, releasing the OOM hold its group
// inherited from the domain (cgroup.ReleaseInheritedHold). Adding an id
// again replaces it.
func (b *Backend) Add(id, path string, labels map[string]string) (sandbox.Info, error) {
	if err := sandbox.ValidateID(id); err != nil {
		return sandbox.Info{}, err
	}
	g, err := cgroup.Open(b.layout, path)
	if err != nil {
		return sandbox.Info{}, fmt.Errorf("adopting %s: %w", id, err)
	}
	// Made under the domain while its OOM hold was armed, the group holds
	// too (v1): at a limit of its own it would wait forever instead of
	// being OOM-killed.
	if _, err := cgroup.ReleaseInheritedHold(g); err != nil {
		return sandbox.Info{}, fmt.Errorf("adopting %s: %w", id, err)
	}
	info := sandbox.Info{ID: id, CgroupPath: path, Labels: maps.Clone(labels)}
	if pids, err := g.Pids(); err == nil && len(pids) > 0 {
		info.InitPid = pids[0]
	}
	b.mu.Lock()
	b.ctr[id] = &container{info: info, group: g}
	b.mu.Unlock()
	return info, nil
}

// Remove forgets sandbox id, thawing its container first when it is
// frozen; unknown ids are ignored.
func (b *Backend) Remove(ctx context.Context, id string) error {
	b.mu.Lock()
	c := b.ctr[id]
	delete(b.ctr, id)
	b.mu.Unlock()
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removed = true
	if frozen, err := c.group.Frozen(); !c.info.Paused && (err != nil || !frozen) {
		return nil // gone with its container, or running
	}
	if err := c.group.Thaw(ctx); err != nil {
		return fmt.Errorf("thawing %s on removal: %w", id, err)
	}
	return nil
}

func (b *Backend) get(id string) (*container, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.ctr[id]
	if c == nil {
		return nil, fmt.Errorf("adopted container %s: %w", id, sandbox.ErrNotFound)
	}
	return c, nil
}

// Pause freezes the container's cgroup.
func (b *Backend) Pause(ctx context.Context, id string) error { return b.setFrozen(ctx, id, true) }

// Resume thaws the container's cgroup.
func (b *Backend) Resume(ctx context.Context, id string) error { return b.setFrozen(ctx, id, false) }

func (b *Backend) setFrozen(ctx context.Context, id string, frozen bool) error {
	c, err := b.get(id)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.removed {
		return fmt.Errorf("adopted container %s: %w", id, sandbox.ErrNotFound)
	}
	if frozen {
		err = c.group.Freeze(ctx)
	} else {
		err = c.group.Thaw(ctx)
	}
	if err != nil {
		return fmt.Errorf("setting frozen=%v on %s: %w", frozen, id, err)
	}
	c.info.Paused = frozen
	return nil
}

// Stats reads the container's cgroup.
func (b *Backend) Stats(_ context.Context, id string) (sandbox.Stats, error) {
	c, err := b.get(id)
	if err != nil {
		return sandbox.Stats{}, err
	}
	m, err := c.group.Memory()
	if err != nil {
		return sandbox.Stats{}, fmt.Errorf("stats of %s: %w", id, err)
	}
	st := sandbox.Stats{Memory: m.Usage + m.Swap, WorkingSet: m.WorkingSet, Peak: m.Peak, OOMKills: m.OOMKills,
		Blocked: -1} // its threads' states are not read, as docker's
	if cpu, err := c.group.CPUUsage(); err == nil {
		st.CPU = cpu
	}
	if pids, err := c.group.Pids(); err == nil {
		st.Procs = len(pids)
	}
	st.Frozen, _ = c.group.Frozen() // false where the freezer cannot be read
	return st, nil
}

// Memory reads the container's cgroup memory accounting in full (its own
// limit and limit hits, for classifying its OOM kills).
func (b *Backend) Memory(id string) (cgroup.MemoryStats, error) {
	c, err := b.get(id)
	if err != nil {
		return cgroup.MemoryStats{}, err
	}
	return c.group.Memory()
}

// Info describes sandbox id.
func (b *Backend) Info(_ context.Context, id string) (sandbox.Info, error) {
	c, err := b.get(id)
	if err != nil {
		return sandbox.Info{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info, nil
}

// Create is refused: the runtime creates containers.
func (b *Backend) Create(context.Context, sandbox.Spec) (sandbox.Info, error) {
	return sandbox.Info{}, ErrNotOwned
}

// Exec is refused: actions of adopted containers are the agent's own.
func (b *Backend) Exec(context.Context, string, sandbox.ExecRequest) (sandbox.ExecResult, error) {
	return sandbox.ExecResult{}, ErrNotOwned
}

// Destroy is refused: the runtime removes containers.
func (b *Backend) Destroy(context.Context, string) error { return ErrNotOwned }

// Close thaws every adopted container and forgets them all; the
// containers run on.
func (b *Backend) Close() error {
	b.mu.Lock()
	ids := make([]string, 0, len(b.ctr))
	for id := range b.ctr {
		ids = append(ids, id)
	}
	b.mu.Unlock()
	var errs []error
	for _, id := range ids {
		errs = append(errs, b.Remove(context.Background(), id))
	}
	return errors.Join(errs...)
}
