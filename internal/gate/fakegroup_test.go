package gate

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// fakeGroup is an in-memory cgroup.Group recording freezer and quota calls.
type fakeGroup struct {
	path string

	mu        sync.Mutex
	frozen    bool
	quota     time.Duration
	period    time.Duration
	freezeErr error // returned by Freeze
	lieFrozen bool  // Freeze succeeds but Frozen reports false
	thawErr   error
	calls     []string
}

var _ cgroup.Group = (*fakeGroup)(nil)

func (g *fakeGroup) record(c string) { g.calls = append(g.calls, c) }

func (g *fakeGroup) Path() string                             { return g.path }
func (g *fakeGroup) Delete() error                            { return nil }
func (g *fakeGroup) SetMemoryLimit(int64) error               { return nil }
func (g *fakeGroup) Memory() (cgroup.MemoryStats, error)      { return cgroup.MemoryStats{}, nil }
func (g *fakeGroup) ResetPeak() error                         { return nil }
func (g *fakeGroup) CPUUsage() (time.Duration, error)         { return 0, nil }
func (g *fakeGroup) Pids() ([]int, error)                     { return nil, nil }
func (g *fakeGroup) AddProc(int) error                        { return nil }
func (g *fakeGroup) KillAll(context.Context) error            { return nil }
func (g *fakeGroup) MemoryPressure() (cgroup.Pressure, error) { return cgroup.Pressure{}, nil }

func (g *fakeGroup) Freeze(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.record("freeze")
	if g.freezeErr != nil {
		return g.freezeErr
	}
	if _, ok := ctx.Deadline(); !ok {
		return errors.New("fake: freeze without a deadline")
	}
	g.frozen = !g.lieFrozen
	return nil
}

func (g *fakeGroup) Thaw(context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.record("thaw")
	if g.thawErr != nil {
		return g.thawErr
	}
	g.frozen = false
	return nil
}

func (g *fakeGroup) Frozen() (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.frozen, nil
}

func (g *fakeGroup) SetCPUQuota(quota, period time.Duration) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.record("quota")
	g.quota, g.period = quota, period
	return nil
}

// fakeTree resolves sandbox IDs to fake groups.
type fakeTree map[string]*fakeGroup

func (t fakeTree) resolve(id string) (cgroup.Group, error) {
	g, ok := t[id]
	if !ok {
		return nil, cgroup.ErrNotExist
	}
	return g, nil
}
