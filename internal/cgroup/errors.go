package cgroup

import "errors"

// Sentinel errors. Callers test them with errors.Is; the text is meant for people.
var (
	// ErrNoMemoryController means neither a cgroup v1 memory hierarchy nor a
	// cgroup v2 hierarchy with the memory controller is mounted.
	ErrNoMemoryController = errors.New("cgroup: no memory controller is mounted " +
		"(mount cgroup v1 memory at /sys/fs/cgroup/memory or enable memory in cgroup2's cgroup.subtree_control)")

	// ErrNotRoot means the process lacks the privileges to manage cgroups.
	ErrNotRoot = errors.New("cgroup: tenon needs root to manage cgroups: run it with sudo")

	// ErrFreezeTimeout means the kernel did not report the group frozen (or
	// thawed) before the context ended. A failed Freeze thaws the group again.
	ErrFreezeTimeout = errors.New("cgroup: timed out waiting for the freezer")

	// ErrBudgetTooLarge means a workload domain was asked for more memory than
	// the machine has.
	ErrBudgetTooLarge = errors.New("cgroup: memory budget exceeds the machine's memory")

	// ErrNotExist means the group does not exist in a hierarchy tenon uses.
	ErrNotExist = errors.New("cgroup: group does not exist")

	// ErrNotEmpty means tasks remained in a group after KillAll's context ended,
	// or a group could not be removed because tasks or children remain.
	ErrNotEmpty = errors.New("cgroup: group still has tasks")

	// ErrNoHierarchy means the operation needs a controller that is not mounted
	// (for example freezing without a freezer on v1 and no cgroup2 hierarchy).
	ErrNoHierarchy = errors.New("cgroup: controller not mounted")

	// ErrNoOOMHold means the kernel cannot hold allocations at a group's
	// limit instead of OOM-killing: that needs cgroup v1's
	// memory.oom_control (oom_kill_disable) or v2's memory.high.
	ErrNoOOMHold = errors.New("cgroup: no OOM hold: it needs cgroup v1's memory.oom_control or v2's memory.high")

	// ErrInUse means a workload domain or a state directory is owned by
	// another live process (InUseError names it).
	ErrInUse = errors.New("cgroup: in use by another process")

	// ErrForeignGroup means a workload domain's name is a group that holds
	// tasks but no record says tenon made it (not a domain a crashed tenon
	// left): tenon will not kill what it did not start.
	ErrForeignGroup = errors.New("cgroup: group holds tasks tenon did not start")
)
