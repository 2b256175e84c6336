package cgroup

import (
	"fmt"
	"path/filepath"
)

// SetOOMHold makes the domain hold allocations at its limit instead of
// OOM-killing (on) or restores the kernel's OOM killer (off). While held,
// a task whose page fault would take the domain past its limit sleeps in
// the kernel until memory is freed or the hold is released; releasing it
// while tasks wait wakes them and the OOM killer picks its victim as it
// would have without the hold. This is v1's memory.oom_control
// (oom_kill_disable); cgroup v2 has no equivalent and SetOOMHold fails
// with ErrNoOOMHold there.
func (d *Domain) SetOOMHold(on bool) error {
	p, err := d.oomControl()
	if err != nil {
		return err
	}
	v := "0"
	if on {
		v = "1"
	}
	if err := d.group.write(p, v); err != nil {
		return fmt.Errorf("setting oom_kill_disable=%s on domain %s: %w", v, d.group.path, err)
	}
	return nil
}

// UnderOOM reports whether tasks of the domain are waiting for memory
// under a hold (v1 memory.oom_control under_oom).
func (d *Domain) UnderOOM() (bool, error) {
	p, err := d.oomControl()
	if err != nil {
		return false, err
	}
	oc, err := readFlatKeyed(p)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", p, err)
	}
	return oc["under_oom"] != 0, nil
}

func (d *Domain) oomControl() (string, error) {
	dir, v, err := d.group.dir(Memory)
	if err != nil {
		return "", err
	}
	if v != V1 {
		return "", ErrNoOOMHold
	}
	return filepath.Join(dir, "memory.oom_control"), nil
}

// disarmOOMHold sets oom_kill_disable to 0 on a v1 group whose hold is on
// and reports whether it was; other groups are left as they are.
func disarmOOMHold(g *group) (bool, error) {
	dir, v, err := g.dir(Memory)
	if err != nil || v != V1 {
		return false, nil
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
