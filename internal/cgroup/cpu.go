package cgroup

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

// defaultPeriod is the CFS period used when the caller passes none.
const defaultPeriod = 100 * time.Millisecond

// minQuota is the smallest quota the kernel accepts.
const minQuota = time.Millisecond

// SetCPUQuota limits the group to quota of CPU time per period (quota >
// period allows more than one CPU); quota <= 0 removes the limit.
func (g *group) SetCPUQuota(quota, period time.Duration) error {
	d, v, err := g.dir(CPU)
	if err != nil {
		return err
	}
	if period <= 0 {
		period = defaultPeriod
	}
	if quota > 0 {
		quota = max(quota, minQuota)
	}
	per := strconv.FormatInt(period.Microseconds(), 10)
	q := "-1"
	if quota > 0 {
		q = strconv.FormatInt(quota.Microseconds(), 10)
	}
	if v == V1 {
		if err := g.write(filepath.Join(d, "cpu.cfs_period_us"), per); err != nil {
			return fmt.Errorf("setting cpu period of %s: %w", g.path, err)
		}
		if err := g.write(filepath.Join(d, "cpu.cfs_quota_us"), q); err != nil {
			return fmt.Errorf("setting cpu quota of %s: %w", g.path, err)
		}
		return nil
	}
	if quota <= 0 {
		q = "max"
	}
	if err := g.write(filepath.Join(d, "cpu.max"), q+" "+per); err != nil {
		return fmt.Errorf("setting cpu.max of %s: %w", g.path, err)
	}
	return nil
}

// CPUQuota reads the current quota and period; quota is 0 when unlimited.
func (g *group) CPUQuota() (quota, period time.Duration, err error) {
	d, v, err := g.dir(CPU)
	if err != nil {
		return 0, 0, err
	}
	var q, p int64
	if v == V1 {
		if q, err = readInt(filepath.Join(d, "cpu.cfs_quota_us")); err != nil {
			return 0, 0, err
		}
		if p, err = readInt(filepath.Join(d, "cpu.cfs_period_us")); err != nil {
			return 0, 0, err
		}
	} else {
		s, err := readString(filepath.Join(d, "cpu.max"))
		if err != nil {
			return 0, 0, err
		}
		if q, p, err = ParseCPUMax(s); err != nil {
			return 0, 0, err
		}
	}
	if q < 0 {
		q = 0
	}
	return time.Duration(q) * time.Microsecond, time.Duration(p) * time.Microsecond, nil
}

// ParseCPUMax parses v2 cpu.max ("max 100000" or "50000 100000"); an
// unlimited quota is -1.
func ParseCPUMax(s string) (quota, period int64, err error) {
	var qs string
	if _, err := fmt.Sscan(s, &qs, &period); err != nil {
		return 0, 0, fmt.Errorf("parsing cpu.max %q: %w", s, err)
	}
	if qs == "max" {
		return -1, period, nil
	}
	quota, err = strconv.ParseInt(qs, 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("parsing cpu.max %q: %w", s, err)
	}
	return quota, period, nil
}

// CPUUsage is the CPU time the group's tasks have used (v1 cpuacct.usage,
// v2 cpu.stat usage_usec).
func (g *group) CPUUsage() (time.Duration, error) {
	d, v, err := g.dir(CPUAcct)
	if err != nil {
		return 0, err
	}
	if v == V1 {
		ns, err := g.hot().int(filepath.Join(d, "cpuacct.usage"))
		if err != nil {
			return 0, fmt.Errorf("reading cpu usage of %s: %w", g.path, err)
		}
		return time.Duration(ns), nil
	}
	st, err := g.hot().flatKeyed(filepath.Join(d, "cpu.stat"))
	if err != nil {
		return 0, fmt.Errorf("reading cpu usage of %s: %w", g.path, err)
	}
	return time.Duration(st["usage_usec"]) * time.Microsecond, nil
}
