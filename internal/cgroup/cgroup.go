package cgroup

import (
	"context"
	"time"
)

// Version is a cgroup hierarchy version.
type Version int

// Hierarchy versions.
const (
	V1 Version = 1
	V2 Version = 2
)

// Controller names tenon uses.
const (
	Memory  = "memory"
	CPU     = "cpu"
	Freezer = "freezer"
	Pids    = "pids"
)

// MemoryStats is one reading of a group's memory accounting.
type MemoryStats struct {
	Usage      int64 // memory.usage_in_bytes (v1) or memory.current (v2)
	WorkingSet int64 // Usage - inactive_file, floored at 0 (as kubelet computes it)
	Peak       int64 // max_usage_in_bytes (v1) or memory.peak (v2); 0 if unknown
	Swap       int64 // swap in use by the group; 0 when there is no swap accounting
	Limit      int64 // current hard limit; -1 when unlimited
	OOMKills   int64 // number of tasks OOM-killed in the group so far
	// LimitHits counts the times the group's own limit was reached (v1
	// memory.failcnt plus memory.memsw.failcnt; v2 memory.events.local
	// "max"): it tells an OOM kill
	// at the group's own limit from one at an ancestor's.
	LimitHits int64
	Stat      map[string]int64 // memory.stat, every key
}

// Pressure is PSI for memory: the group's own on v2, the host's otherwise.
type Pressure struct {
	Some10, Some60, Full10, Full60 float64 // percentages
	// SomeTotal and FullTotal are the accumulated stall times ("total=",
	// microseconds in the file): the kernel brings them up to date on
	// every read, so two readings give the stall time in between, where
	// the averages are refreshed only every 2 s.
	SomeTotal, FullTotal time.Duration
	Host                 bool // true when the value is host-wide
}

// Group is one cgroup, on whichever hierarchies hold the controllers tenon uses.
// Path is relative to the hierarchy roots, e.g. "tenon/sb-1".
type Group interface {
	Path() string
	// Delete removes the group (it must hold no tasks; see KillAll).
	Delete() error

	SetMemoryLimit(bytes int64) error // bytes <= 0 means unlimited
	Memory() (MemoryStats, error)
	// Charged is Memory's Usage + Swap alone, from two files instead of
	// Memory's eight: the read on admission's and pacing's path.
	Charged() (int64, error)
	// WorkingSet is Memory's WorkingSet alone, from two files.
	WorkingSet() (int64, error)
	// Room is Memory's Usage, WorkingSet, Swap and Limit alone, from four
	// files: a domain's Available.
	Room() (MemoryStats, error)
	// ResetPeak resets the peak counter where the kernel allows it (v1 max_usage_in_bytes, v2 memory.peak).
	ResetPeak() error

	// Freeze stops every task and returns once the kernel reports the group frozen,
	// retrying until ctx is done. Thaw resumes and waits for the thawed state.
	Freeze(ctx context.Context) error
	Thaw(ctx context.Context) error
	Frozen() (bool, error)

	// SetCPUQuota limits CPU to quota per period; quota <= 0 removes the limit.
	SetCPUQuota(quota, period time.Duration) error
	// CPUUsage is the accumulated CPU time of the group's tasks.
	CPUUsage() (time.Duration, error)

	// Pids lists the tasks in the group and its descendants.
	Pids() ([]int, error)
	// MemoryPids is Pids read from the memory hierarchy alone, for a
	// group whose tasks are in every hierarchy.
	MemoryPids() ([]int, error)
	// SetPidsLimit caps the tasks of the group and its descendants
	// (pids.max); n <= 0 removes the cap.
	SetPidsLimit(n int64) error
	// SetSwap lets the group's memory be swapped (allow) or not: v2's
	// memory.swap.max, "max" or 0. v1 has no per-group swap limit
	// without memsw; the domain's memory.swappiness (Domain.DisableSwap)
	// keeps reclaim off swap there, and SetSwap does nothing. A group
	// whose kernel has no memory.swap.max (no swap accounting) is left
	// as is.
	SetSwap(allow bool) error
	// AddProc moves a process into the group.
	AddProc(pid int) error
	// KillAll sends SIGKILL to every task (thawing first on v1, where frozen
	// tasks ignore it) and waits until the group is empty or ctx is done.
	KillAll(ctx context.Context) error

	MemoryPressure() (Pressure, error)

	// SetOOMGroup makes an OOM kill of any task in the group kill every
	// task of the group (v2's memory.oom.group), so a kill takes a whole
	// sandbox rather than its largest process. v1 has no group kill and
	// SetOOMGroup does nothing there.
	SetOOMGroup(on bool) error
}
