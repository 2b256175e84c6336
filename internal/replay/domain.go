package replay

import (
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/controller"
)

// CgroupDomain observes a cgroup workload domain for the driver and the
// policies: Usage is the domain group's memory usage, Available is
// cgroup.Domain.Available (limit less working set), Peak its max usage
// counter.
type CgroupDomain struct {
	Domain *cgroup.Domain
	// Compressed, when set, returns the host memory that swapped bytes of
	// the domain's memory take in compressed swap (zram's pool is charged
	// to no cgroup): Available subtracts it from the domain's headroom, so
	// a page-out is credited only with what it really frees.
	Compressed func(swapped int64) int64
}

var (
	_ controller.Domain    = CgroupDomain{}
	_ controller.OOMHolder = CgroupDomain{}
	_ controller.HoldLine  = CgroupDomain{}
)

// SetOOMHold holds allocations at the budget instead of OOM-killing (on):
// cgroup.Domain.SetOOMHold, on cgroup v1 and v2 alike (on v2 the policy
// also freezes the allocators, HoldFreezes, and where the driver restarts
// preempted attempts ends a deadlock by preempting one: policy's
// hold_preempt.go). The hold=off policy parameter turns it off. On v2 it
// was off by default until the preemption: in the VM suite the gate alone
// lost a workflow in 7 of 11 runs with it, each after a release with every
// sandbox mid-ramp at the limit; with the preemption in none of 16
// (bench/results/gate-hold-v2.md).
func (d CgroupDomain) SetOOMHold(on bool) error { return d.Domain.SetOOMHold(on) }

// UnderOOM reports whether tasks wait for memory under the hold.
func (d CgroupDomain) UnderOOM() (bool, error) { return d.Domain.UnderOOM() }

// HoldFreezes reports whether the hold needs the policy's freezing: on
// cgroup v2, whose memory.high only throttles allocators.
func (d CgroupDomain) HoldFreezes() bool { return d.Domain.MemoryVersion() == cgroup.V2 }

// AboveHoldLine reports whether the domain's usage is above the v2 hold's
// line (cgroup.Domain.AboveHoldLine).
func (d CgroupDomain) AboveHoldLine() (bool, error) { return d.Domain.AboveHoldLine() }

// Usage is the domain's memory usage in bytes.
func (d CgroupDomain) Usage() (int64, error) {
	m, err := d.Domain.Group().Room()
	if err != nil {
		return 0, err
	}
	return m.Usage, nil
}

// Available is what sandboxes can still grow into without an OOM kill,
// less the compressed copy of the domain's swapped memory (Compressed).
func (d CgroupDomain) Available() (int64, error) {
	m, err := d.Domain.Group().Room()
	if err != nil {
		return 0, err
	}
	avail := d.Domain.AvailableIn(m)
	if d.Compressed == nil {
		return avail, nil
	}
	return max(avail-d.Compressed(m.Swap), 0), nil
}

// Peak is the domain's peak usage since it was created or last reset.
func (d CgroupDomain) Peak() (int64, error) {
	m, err := d.Domain.Group().Memory()
	if err != nil {
		return 0, err
	}
	return m.Peak, nil
}
