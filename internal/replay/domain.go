package replay

import (
	"errors"

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
	// HoldV2 arms the OOM hold on cgroup v2 too: memory.high an eighth
	// below memory.max (cgroup.Domain.SetOOMHold) with the policy freezing
	// every sandbox that grows past it while tasks wait (HoldFreezes). Off
	// by default: in the VM suite (bench/results/v2-hold.md) it stopped
	// allocators racing past the line before memory.max, but the gate
	// alone still lost a workflow in 2 of 5 runs with it (each after its
	// hold released on the timeout with nothing progressing, as v1's
	// does), against 2 of 4 without it, and in 7 of 11 once sandboxes
	// resting at their peak counted as progress (policy, hold_rest.go);
	// in the simulator on the real traces (tenon sim --cgroup v2) it cuts
	// kills. v1's hold stays on.
	HoldV2 bool
}

// errV2HoldOff is SetOOMHold's answer on cgroup v2 without HoldV2; the
// live policy logs it and runs without the hold.
var errV2HoldOff = errors.New("the cgroup v2 OOM hold (memory.high and freezing) is off unless asked for (CgroupDomain.HoldV2): measured, the gate lost workflows with it as without it")

var (
	_ controller.Domain    = CgroupDomain{}
	_ controller.OOMHolder = CgroupDomain{}
	_ controller.HoldLine  = CgroupDomain{}
)

// SetOOMHold holds allocations at the budget instead of OOM-killing (on):
// cgroup.Domain.SetOOMHold; on cgroup v2 only with HoldV2 (where the
// policy also freezes the allocators, HoldFreezes).
func (d CgroupDomain) SetOOMHold(on bool) error {
	if d.Domain.MemoryVersion() == cgroup.V2 && !d.HoldV2 {
		return errV2HoldOff
	}
	return d.Domain.SetOOMHold(on)
}

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
	m, err := d.Domain.Group().Memory()
	if err != nil {
		return 0, err
	}
	return m.Usage, nil
}

// Available is what sandboxes can still grow into without an OOM kill,
// less the compressed copy of the domain's swapped memory (Compressed).
func (d CgroupDomain) Available() (int64, error) {
	avail, err := d.Domain.Available()
	if err != nil || d.Compressed == nil {
		return avail, err
	}
	m, err := d.Domain.Group().Memory()
	if err != nil {
		return 0, err
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
