package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// SetPidsLimit caps the number of tasks in the group and its descendants
// (pids.max, the same file on v1 and v2); n <= 0 removes the cap. Forks
// beyond it fail with EAGAIN.
func (g *group) SetPidsLimit(n int64) error {
	d, _, err := g.dir(Pids)
	if err != nil {
		return err
	}
	v := "max"
	if n > 0 {
		v = strconv.FormatInt(n, 10)
	}
	if err := g.write(filepath.Join(d, "pids.max"), v); err != nil {
		return fmt.Errorf("setting pids.max of %s: %w", g.path, err)
	}
	return nil
}

// SetSwap implements Group.SetSwap.
func (g *group) SetSwap(allow bool) error {
	d, v, err := g.dir(Memory)
	if err != nil {
		return err
	}
	if v == V1 {
		return nil
	}
	p := filepath.Join(d, "memory.swap.max")
	if _, err := os.Stat(p); err != nil {
		return nil
	}
	val := "0"
	if allow {
		val = "max"
	}
	if err := g.write(p, val); err != nil {
		return fmt.Errorf("setting memory.swap.max of %s: %w", g.path, err)
	}
	return nil
}
