package cgroup

import (
	"fmt"
	"path/filepath"
)

// SetOOMHold makes the domain hold allocations at its budget instead of
// OOM-killing (on), or gives them back to the kernel's OOM killer (off).
// While held, a task whose allocation would take the domain past its
// budget waits until memory is freed or the hold is released; releasing it
// while tasks wait lets the OOM killer pick its victim as it would have
// without the hold. The caller (the gate's hold, internal/policy) releases
// it only after tasks have waited with nothing in the domain progressing.
//
// On v1 the hold is memory.oom_control's oom_kill_disable: the task sleeps
// in the kernel's OOM wait at the limit. v2 has no such switch; there the
// hold is the domain's memory.high at HoldHigh(budget), just below its
// memory.max (hold_v2.go): allocators above it are reclaimed from and then
// throttled, not killed, and the caller freezes them (AboveHoldLine says
// where they may be thawed); off sets memory.high back to max, so the next
// allocation reaches memory.max and the OOM killer. A v2 domain whose
// kernel has no memory.high fails with ErrNoOOMHold.
func (d *Domain) SetOOMHold(on bool) error {
	dir, v, err := d.group.dir(Memory)
	if err != nil {
		return err
	}
	if v == V2 {
		return d.setHighHold(dir, on)
	}
	p := filepath.Join(dir, "memory.oom_control")
	val := "0"
	if on {
		val = "1"
	}
	if err := d.group.write(p, val); err != nil {
		return fmt.Errorf("setting oom_kill_disable=%s on domain %s: %w", val, d.group.path, err)
	}
	return nil
}

// UnderOOM reports whether tasks of the domain are waiting for memory
// under the hold: on v1 memory.oom_control's under_oom; on v2 whether the
// domain's usage is above the hold's memory.high line and its tasks
// stalled on memory since the previous call (memory.pressure, hold_v2.go).
// It answers the same while the hold is released, so the caller sees when
// the OOM killer has freed memory.
func (d *Domain) UnderOOM() (bool, error) {
	dir, v, err := d.group.dir(Memory)
	if err != nil {
		return false, err
	}
	if v == V2 {
		return d.underHigh(dir)
	}
	p := filepath.Join(dir, "memory.oom_control")
	oc, err := readFlatKeyed(p)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", p, err)
	}
	return oc["under_oom"] != 0, nil
}

// disarmOOMHold releases a hold a crashed run left on group g (v1
// oom_kill_disable 1, v2 memory.high below max) and reports whether
// there was one; other groups are left as they are.
func disarmOOMHold(g *group) (bool, error) {
	dir, v, err := g.dir(Memory)
	if err != nil {
		return false, nil
	}
	if v == V2 {
		return disarmHighHold(g, dir)
	}
	p := filepath.Join(dir, "memory.oom_control")
	oc, err := readFlatKeyed(p)
	if err != nil || oc["oom_kill_disable"] == 0 {
		return false, nil
	}
	if err := g.write(p, "0"); err != nil {
		return false, fmt.Errorf("disarming the OOM hold of %s: %w", g.path, err)
	}
	return true, nil
}

// MemoryVersion is the cgroup version of the domain's memory controller.
func (d *Domain) MemoryVersion() Version {
	return d.layout.Controllers[Memory].Version
}

// ReleaseInheritedHold clears the OOM hold a group inherited (v1: a memory
// group takes its parent's oom_kill_disable when it is created, so a group
// made under the domain while the hold is armed holds too). A group with a
// limit of its own, such as an adopted container's (limits.memory), would
// then wait at that limit forever instead of being OOM-killed as its
// runtime expects. It reports whether there was one; v2 groups inherit
// nothing and are left as they are.
func ReleaseInheritedHold(g Group) (bool, error) {
	gg, ok := g.(*group)
	if !ok {
		return false, fmt.Errorf("cgroup: %T is not a cgroup of this package", g)
	}
	if _, v, err := gg.dir(Memory); err != nil || v != V1 {
		return false, err
	}
	return disarmOOMHold(gg)
}
