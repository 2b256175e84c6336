package fake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Options configure a fake Backend.
type Options struct {
	// Budget is the domain limit in bytes; <= 0 means unlimited.
	Budget int64
	// SandboxBytes is charged for every live sandbox (its idle footprint).
	SandboxBytes int64
	// CreateErr, when set, is consulted by Create; a non-nil result fails it.
	CreateErr func(spec sandbox.Spec) error
}

// Backend is the fake. It also implements controller.Domain (Usage,
// Available) and a Peak counter.
type Backend struct {
	opts Options

	mu     sync.Mutex
	usage  int64
	peak   int64
	boxes  map[string]*box
	closed bool
	stats  Counters
}

// Counters are what the fake saw, for assertions.
type Counters struct {
	Created, Destroyed, Execs, OOMKills, Timeouts int
	MaxLive                                       int
}

// box is one sandbox.
type box struct {
	info     sandbox.Info
	resident int64 // bytes held between actions: idle footprint, files, background
	current  int64 // bytes held by the running action
	peak     int64
	ooms     int64
	cpu      time.Duration // CPU time of finished unpaused action slices
	since    time.Time     // start of the current unpaused slice; zero when none
	dead     bool
	paused   bool
	resumed  chan struct{} // closed on Resume; replaced on Pause
	pausedCh chan struct{} // closed on Pause; replaced on Resume
}

// New returns a fake backend.
func New(opts Options) *Backend {
	return &Backend{opts: opts, boxes: make(map[string]*box)}
}

var _ sandbox.Backend = (*Backend)(nil)

// Name returns "fake".
func (b *Backend) Name() string { return "fake" }

// Create starts a simulated sandbox charging SandboxBytes. It creates
// spec.Workspace when missing, as sandbox.Spec asks of every backend.
func (b *Backend) Create(_ context.Context, spec sandbox.Spec) (sandbox.Info, error) {
	if err := sandbox.ValidateID(spec.ID); err != nil {
		return sandbox.Info{}, err
	}
	if spec.Workspace != "" && !filepath.IsAbs(spec.Workspace) {
		return sandbox.Info{}, fmt.Errorf("sandbox %s: workspace %q is not an absolute path: %w", spec.ID, spec.Workspace, sandbox.ErrInvalidSpec)
	}
	if err := sandbox.ValidateBinds(spec.Binds); err != nil {
		return sandbox.Info{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	if b.opts.CreateErr != nil {
		if err := b.opts.CreateErr(spec); err != nil {
			return sandbox.Info{}, fmt.Errorf("creating sandbox %s: %w", spec.ID, err)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return sandbox.Info{}, sandbox.ErrClosed
	}
	if _, ok := b.boxes[spec.ID]; ok {
		return sandbox.Info{}, fmt.Errorf("creating sandbox %s: %w", spec.ID, sandbox.ErrExists)
	}
	if spec.Workspace != "" {
		if err := os.MkdirAll(spec.Workspace, 0o755); err != nil {
			return sandbox.Info{}, fmt.Errorf("creating sandbox %s: workspace: %w", spec.ID, err)
		}
	}
	labels := make(map[string]string, len(spec.Labels))
	for k, v := range spec.Labels {
		labels[k] = v
	}
	bx := &box{
		info:     sandbox.Info{ID: spec.ID, CgroupPath: "fake/" + spec.ID, Labels: labels},
		resumed:  closedChan(),
		pausedCh: make(chan struct{}),
	}
	b.boxes[spec.ID] = bx
	b.chargeLocked(bx, &bx.resident, b.opts.SandboxBytes)
	b.stats.Created++
	b.stats.MaxLive = max(b.stats.MaxLive, len(b.boxes))
	return bx.info, nil
}

// Destroy removes a sandbox and returns everything it held. Destroying a
// sandbox that does not exist (any more) succeeds, as on every backend.
func (b *Backend) Destroy(_ context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	bx, ok := b.boxes[id]
	if !ok {
		return nil
	}
	b.usage -= bx.resident + bx.current
	bx.resident, bx.current, bx.dead = 0, 0, true
	if bx.paused {
		close(bx.resumed) // let a paused action observe the death
	}
	delete(b.boxes, id)
	b.stats.Destroyed++
	return nil
}

// Close destroys every sandbox.
func (b *Backend) Close() error {
	b.mu.Lock()
	ids := make([]string, 0, len(b.boxes))
	for id := range b.boxes {
		ids = append(ids, id)
	}
	b.closed = true
	b.mu.Unlock()
	for _, id := range ids {
		_ = b.Destroy(context.Background(), id)
	}
	return nil
}

// Pause stops the simulated clock of the sandbox's running action.
func (b *Backend) Pause(_ context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	bx, err := b.lookupLocked(id)
	if err != nil {
		return err
	}
	if !bx.paused {
		bx.paused = true
		bx.info.Paused = true
		bx.resumed = make(chan struct{})
		close(bx.pausedCh)
	}
	return nil
}

// Resume restarts a paused sandbox.
func (b *Backend) Resume(_ context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	bx, err := b.lookupLocked(id)
	if err != nil {
		return err
	}
	if bx.paused {
		bx.paused = false
		bx.info.Paused = false
		bx.pausedCh = make(chan struct{})
		close(bx.resumed)
	}
	return nil
}

// Stats reports the sandbox's simulated memory.
func (b *Backend) Stats(_ context.Context, id string) (sandbox.Stats, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bx, err := b.lookupLocked(id)
	if err != nil {
		return sandbox.Stats{}, err
	}
	m := bx.resident + bx.current
	cpu, procs := bx.cpu, 1 // its init
	if !bx.since.IsZero() {
		cpu += time.Since(bx.since)
		procs++ // the running action
	}
	return sandbox.Stats{Memory: m, WorkingSet: m, Peak: bx.peak, OOMKills: bx.ooms, CPU: cpu, Procs: procs, Frozen: bx.info.Paused}, nil
}

// Info describes a live sandbox.
func (b *Backend) Info(_ context.Context, id string) (sandbox.Info, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bx, err := b.lookupLocked(id)
	if err != nil {
		return sandbox.Info{}, err
	}
	return bx.info, nil
}

// Usage is the domain's simulated memory in bytes.
func (b *Backend) Usage() (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.usage, nil
}

// Available is Budget - Usage floored at 0, or a very large number when
// the budget is unlimited.
func (b *Backend) Available() (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.opts.Budget <= 0 {
		return 1 << 62, nil
	}
	return max(0, b.opts.Budget-b.usage), nil
}

// Peak is the largest domain usage seen.
func (b *Backend) Peak() (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak, nil
}

// Counters returns what the fake saw so far.
func (b *Backend) Counters() Counters {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// Live lists the ids of live sandboxes, sorted.
func (b *Backend) Live() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := make([]string, 0, len(b.boxes))
	for id := range b.boxes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (b *Backend) lookupLocked(id string) (*box, error) {
	if b.closed {
		return nil, sandbox.ErrClosed
	}
	bx, ok := b.boxes[id]
	if !ok {
		return nil, fmt.Errorf("sandbox %s: %w", id, sandbox.ErrNotFound)
	}
	if bx.dead {
		return nil, fmt.Errorf("sandbox %s: %w", id, sandbox.ErrSandboxDead)
	}
	return bx, nil
}

// chargeLocked moves *slot of bx by delta bytes. It refuses (returns false,
// changes nothing) when a positive delta would exceed the budget.
func (b *Backend) chargeLocked(bx *box, slot *int64, delta int64) bool {
	if delta > 0 && b.opts.Budget > 0 && b.usage+delta > b.opts.Budget {
		return false
	}
	*slot += delta
	b.usage += delta
	b.peak = max(b.peak, b.usage)
	bx.peak = max(bx.peak, bx.resident+bx.current)
	return true
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
