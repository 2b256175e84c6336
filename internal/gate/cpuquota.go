package gate

import (
	"context"
	"fmt"
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
	quota, period time.Duration
	limited       denied
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
	return &CPUQuota{quota: quota, period: period, limited: newDenied(resolve)}
}

// Name implements Actuator.
func (q *CPUQuota) Name() string { return "cpu-quota" }

// Deny sets the small quota.
func (q *CPUQuota) Deny(_ context.Context, id string) error {
	g, err := q.limited.add(id)
	if err != nil {
		return err
	}
	if err := g.SetCPUQuota(q.quota, q.period); err != nil {
		return fmt.Errorf("limiting cpu of sandbox %s: %w", id, err)
	}
	return nil
}

// Allow removes the quota.
func (q *CPUQuota) Allow(_ context.Context, id string) error {
	g, err := q.limited.lookup(id)
	if err != nil {
		return err
	}
	return q.unlimit(id, g)
}

func (q *CPUQuota) unlimit(id string, g cgroup.Group) error {
	if err := g.SetCPUQuota(0, q.period); err != nil {
		return fmt.Errorf("removing cpu limit of sandbox %s: %w", id, err)
	}
	q.limited.remove(id)
	return nil
}

// Close removes the quota from every group this actuator limited.
func (q *CPUQuota) Close(context.Context) error {
	return q.limited.undoAll(q.unlimit)
}
