// Package cgroup is tenon's one interface over cgroup v1 and v2.
//
// Detect reads /proc/self/mountinfo and says, per controller tenon uses
// (memory, cpu, cpuacct, freezer, pids), which hierarchy holds it. Hybrid
// hosts, with memory, cpu and freezer on v1 and a mostly empty cgroup2 mount,
// are the common case on the machines tenon is built on; pure v2 hosts are
// the common production case. Every Group method dispatches on the version
// of the controller it needs, so a group can span both.
//
// Open and Create return a Group: memory accounting (usage, working set,
// peak, swap, limit, OOM kills, memory.stat), freeze and thaw that return
// only once the kernel reports the state (a failed freeze is thawed back),
// CPU quota and usage, task listing over descendants, KillAll, per-group
// memory pressure on v2 and host pressure otherwise, and Delete. Drop
// empties a group's memory (v1 memory.force_empty, v2 memory.reclaim)
// before deleting it, so its page cache is not left charged to the parent.
//
// Vacate moves a v2 group's own tasks into a child leaf, so that its
// children can get controllers (v2's no-internal-process rule).
//
// Domain is the workload domain: the parent group all sandboxes live under,
// whose memory limit is the host budget. OpenDomain adopts a group left by a
// crashed run (its owner record says so) after killing its tasks and
// deleting its children, and disarms an OOM hold it left armed; a group of
// the name that holds tasks without such a record is someone else's and
// fails with ErrForeignGroup.
//
// The OOM hold (Domain.SetOOMHold, Domain.UnderOOM) holds an allocation at
// the budget instead of OOM-killing it, until memory is freed or the hold
// is released. On v1 it is memory.oom_control's oom_kill_disable: the task
// sleeps in the kernel's OOM wait, and under_oom says tasks wait. v2 has
// no such switch; there the hold is the domain's memory.high at HoldHigh,
// an eighth of the budget below memory.max, plus the freezer: an allocator
// above the line is reclaimed from and then throttled, sleeping after each
// charge for a time that grows with the square of its overage, which alone
// only slows it (several throttled allocators crossed the last eighth to
// memory.max together in the VM suite). So the policy freezes every
// sandbox that grew while the domain waits (policy's freezing hold,
// internal/policy hold_freeze.go): the kernel throttles an allocator above
// memory.high on its way back to user mode, where a pending freeze stops
// it, so a freeze lands within one throttling sleep (at most 2 s) and
// nothing crosses to memory.max (TestLiveOOMHoldV2Freeze). UnderOOM on v2
// is usage above the line with the domain's tasks stalled on memory since
// the last call: memory.pressure's "some" total advanced (PSI), or, where
// the kernel has no per-group PSI (built without it, booted with psi=0),
// the memory.events high or max count did; AboveHoldLine is usage above
// the line, below which the policy thaws what it froze. Releasing the hold
// sets memory.high to max, so the waiters' next allocations reach
// memory.max and the OOM killer. Group.SetOOMGroup (v2's memory.oom.group)
// makes that kill take a whole sandbox. tenon's hosts arm the v2 hold as
// they arm v1's; its policy (when to freeze, thaw, preempt and release) is
// internal/policy's.
//
// Why raw control files rather than containerd/cgroups v3 (already a
// dependency) or opencontainers/cgroups: containerd splits v1 and v2 into
// unrelated types (cgroup1.Cgroup, cgroup2.Manager), so a group whose
// controllers span both hierarchies on a hybrid host would need both plus
// glue; its freezers (cgroup1 waitState, cgroup2 Manager.freeze) loop on
// 1 ms sleeps with no context or deadline, so a group stuck in FREEZING
// hangs the caller instead of being thawed back; and it has no per-fd
// memory.peak reset. opencontainers/cgroups opens control files through a
// handle on the fixed /sys/fs/cgroup and checks the file system type, which
// rules out fake trees. The files tenon touches are few and their formats
// small, so each is read by a parser over an io.Reader tested with literal
// strings, and every root (the hierarchies, /proc) is injectable through
// Layout so tests run against fake trees in t.TempDir().
//
// Files are read with plain system calls (readControl), and the few a
// host's gate reads of every sandbox each period (the charge, CPU time,
// freezer state, and the domain's room) a group keeps open and re-reads
// with pread (hot.go). On a fake tree a file rewritten in place reads
// anew, but one replaced by rename or removed keeps its old content behind
// the open descriptor, where the kernel's files read as gone.
//
// The package owns the cgroup directories it creates and the tasks inside
// them. It never touches groups outside the paths it is given, never mounts
// hierarchies and never moves its own process.
package cgroup
