package schedext

import (
	"path/filepath"
	"sync"
)

// denier is what CgroupPacer needs of the Scheduler.
type denier interface {
	Deny(cgid uint64, rate float64) error
	Allow(cgid uint64) error
	Enabled() bool
}

// CgroupPacer paces cgroups named by path, as the gate's pacing actuator
// (internal/live's Pacer) asks: it keys each one by its id (CgroupID) on
// the v2 hierarchy mounted at its root, remembered from Deny, so that
// Allow releases a cgroup whose directory is gone (its sandbox destroyed).
type CgroupPacer struct {
	s    denier
	root string

	mu  sync.Mutex
	ids map[string]uint64
}

// NewCgroupPacer returns a pacer over the loaded scheduler s for cgroup
// paths relative to root (the cgroup v2 mount, e.g. /sys/fs/cgroup).
func NewCgroupPacer(s *Scheduler, root string) *CgroupPacer {
	return newCgroupPacer(s, root)
}

func newCgroupPacer(s denier, root string) *CgroupPacer {
	return &CgroupPacer{s: s, root: root, ids: map[string]uint64{}}
}

// Name is "schedext".
func (p *CgroupPacer) Name() string { return "schedext" }

// Enabled reports whether the scheduler still runs.
func (p *CgroupPacer) Enabled() bool { return p.s.Enabled() }

// Deny paces the cgroup at path (relative to the root) at rate of one CPU.
func (p *CgroupPacer) Deny(path string, rate float64) error {
	id, err := CgroupID(filepath.Join(p.root, path))
	if err != nil {
		return err
	}
	if err := p.s.Deny(id, rate); err != nil {
		return err
	}
	p.mu.Lock()
	p.ids[path] = id
	p.mu.Unlock()
	return nil
}

// Allow stops pacing the cgroup; one never denied here needs nothing.
func (p *CgroupPacer) Allow(path string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.ids[path]
	if !ok {
		return nil
	}
	if err := p.s.Allow(id); err != nil {
		return err
	}
	delete(p.ids, path)
	return nil
}
