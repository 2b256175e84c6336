package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// Default CPU quota of a denied sandbox: 1 ms per 100 ms, 1% of one CPU
// (1 ms is the smallest quota the kernel accepts).
const (
	DefaultDenyQuota  = time.Millisecond
	DefaultDenyPeriod = 100 * time.Millisecond
)

// CPUQuota denies a sandbox by capping its CPU bandwidth to a small quota
// and allows it by removing the cap. Unlike the freezer, a denied sandbox
// still gets a trickle of CPU, so it keeps answering signals and timers.
type CPUQuota struct {
	resolve       Resolver
	quota, period time.Duration

	mu      sync.Mutex
	limited map[string]cgroup.Group
}

var _ Actuator = (*CPUQuota)(nil)

// NewCPUQuota returns a cpu-quota actuator; quota or period <= 0 take the defaults.
func NewCPUQuota(resolve Resolver, quota, period time.Duration) *CPUQuota {
	if quota <= 0 {
		quota = DefaultDenyQuota
	}
	if period <= 0 {
		period = DefaultDenyPeriod
	}
	return &CPUQuota{resolve: resolve, quota: quota, period: period, limited: make(map[string]cgroup.Group)}
}

// Name implements Actuator.
func (q *CPUQuota) Name() string { return "cpu-quota" }

// Deny sets the small quota.
func (q *CPUQuota) Deny(_ context.Context, id string) error {
	g, err := q.resolve(id)
	if err != nil {
		return fmt.Errorf("resolving sandbox %s: %w", id, err)
	}
	q.mu.Lock()
	q.limited[id] = g
	q.mu.Unlock()
	if err := g.SetCPUQuota(q.quota, q.period); err != nil {
		return fmt.Errorf("limiting cpu of sandbox %s: %w", id, err)
	}
	return nil
}

// Allow removes the quota.
func (q *CPUQuota) Allow(_ context.Context, id string) error {
	q.mu.Lock()
	g, ok := q.limited[id]
	q.mu.Unlock()
	if !ok {
		var err error
		if g, err = q.resolve(id); err != nil {
			return fmt.Errorf("resolving sandbox %s: %w", id, err)
		}
	}
	return q.unlimit(id, g)
}

func (q *CPUQuota) unlimit(id string, g cgroup.Group) error {
	if err := g.SetCPUQuota(0, q.period); err != nil {
		return fmt.Errorf("removing cpu limit of sandbox %s: %w", id, err)
	}
	q.mu.Lock()
	delete(q.limited, id)
	q.mu.Unlock()
	return nil
}

// Close removes the quota from every group this actuator limited.
func (q *CPUQuota) Close(context.Context) error {
	q.mu.Lock()
	ids := make([]string, 0, len(q.limited))
	for id := range q.limited {
		ids = append(ids, id)
	}
	q.mu.Unlock()
	slices.Sort(ids)
	var errs []error
	for _, id := range ids {
		q.mu.Lock()
		g := q.limited[id]
		q.mu.Unlock()
		errs = append(errs, q.unlimit(id, g))
	}
	return errors.Join(errs...)
}
