package live

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// DefaultCPUPacePeriod is the CFS bandwidth period CPUPacer sets.
const DefaultCPUPacePeriod = 100 * time.Millisecond

// CPUPacer paces sandboxes through their cgroup's CPU bandwidth limit
// (cgroup v2 cpu.max, v1 cpu.cfs_quota_us and cpu.cfs_period_us): a denied
// sandbox gets rate × Period of CPU time per Period, shared by all of its
// tasks, and is throttled for the rest of the period. It needs only the
// cpu controller, so it paces where the kernel has no sched_ext.
//
// Unlike the sched_ext scheduler, the limit is coarse: the sandbox runs
// its quota in a burst at the start of each period and then waits, and
// the kernel's smallest quota (1 ms) bounds the lowest rate at 1 ms per
// Period. Allow removes the limit (sandboxes have none of their own; the
// v1 memory.high emulation of AgentCgroup's Low actions also writes the
// quota, and a policy runs either that or the gate's pacing, not both).
type CPUPacer struct {
	Layout *cgroup.Layout
	Period time.Duration // 0: DefaultCPUPacePeriod
	// Open opens a sandbox's cgroup (cgroup.Open when nil); tests
	// replace it.
	Open func(l *cgroup.Layout, path string) (cgroup.Group, error)
}

var _ Pacer = (*CPUPacer)(nil)

// NewCPUPacer returns a CPUPacer for the layout, or an error naming what
// is missing when the layout has no cpu controller.
func NewCPUPacer(layout *cgroup.Layout) (*CPUPacer, error) {
	if layout == nil {
		return nil, fmt.Errorf("pacing by cpu quota: no cgroup layout")
	}
	if _, ok := layout.Controller(cgroup.CPU); !ok {
		return nil, fmt.Errorf("pacing by cpu quota: the cgroup cpu controller is not mounted (%s)", layout)
	}
	return &CPUPacer{Layout: layout}, nil
}

// Name is "cpu".
func (c *CPUPacer) Name() string { return "cpu" }

// Enabled is always true: a CPU limit cannot be unloaded under tenon.
func (c *CPUPacer) Enabled() bool { return true }

// Deny limits the cgroup to rate of one CPU.
func (c *CPUPacer) Deny(cgroupPath string, rate float64) error {
	if !(rate > 0) {
		return fmt.Errorf("pacing %s: rate %v: want a share of one CPU above 0", cgroupPath, rate)
	}
	g, err := c.open(cgroupPath)
	if err != nil {
		return err
	}
	per := c.period()
	return g.SetCPUQuota(time.Duration(rate*float64(per)), per)
}

// Allow removes the cgroup's CPU limit; a cgroup that is gone (its
// sandbox destroyed) needs nothing.
func (c *CPUPacer) Allow(cgroupPath string) error {
	g, err := c.open(cgroupPath)
	if errors.Is(err, cgroup.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return g.SetCPUQuota(0, c.period())
}

func (c *CPUPacer) period() time.Duration {
	if c.Period > 0 {
		return c.Period
	}
	return DefaultCPUPacePeriod
}

func (c *CPUPacer) open(path string) (cgroup.Group, error) {
	open := c.Open
	if open == nil {
		open = cgroup.Open
	}
	g, err := open(c.Layout, path)
	if err != nil {
		return nil, fmt.Errorf("pacing by cpu quota: %w", err)
	}
	return g, nil
}
