package cgroup

import (
	"fmt"
	"path/filepath"
)

// SetOOMGroup implements Group.SetOOMGroup: memory.oom.group on v2
// (Linux 4.19 and later). When the OOM killer picks a victim anywhere
// below the group, it kills every task of the highest group on the way
// up from the victim to the group at its limit that has memory.oom.group
// set, except tasks with oom_score_adj -1000. v1 has no group kill: its
// OOM killer takes one task, and SetOOMGroup does nothing there.
func (g *group) SetOOMGroup(on bool) error {
	d, v, err := g.dir(Memory)
	if err != nil {
		return err
	}
	if v == V1 {
		return nil
	}
	val := "0"
	if on {
		val = "1"
	}
	if err := g.write(filepath.Join(d, "memory.oom.group"), val); err != nil {
		return fmt.Errorf("setting memory.oom.group=%s on %s: %w", val, g.path, err)
	}
	return nil
}
