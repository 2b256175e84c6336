// Package schedext loads tenon's gate scheduler, a sched_ext (BPF)
// scheduler that paces the tasks of denied sandboxes instead of freezing
// them (seed 000 §3.5), and lets user space deny and allow cgroups in it.
//
// # The scheduler
//
// bpf/gate.bpf.c is compiled by bpf2go (go generate; the object and its Go
// bindings are committed, so builds need no clang). A task whose cgroup on
// the default (v2) hierarchy, or an ancestor of it, is in the denied map
// waits in its own dispatch queue, ordered by the time its cgroup may next
// run; each run of such a task (at most a short slice) charges the cgroup
// used/rate of wall time, so a denied cgroup gets about rate of one CPU
// however many tasks it has. Every other task runs under a simple global
// weighted vtime scheduler. A cgroup allowed again has its queued tasks
// released at the next dispatch.
//
// # Full switch, not SCX_OPS_SWITCH_PARTIAL
//
// The scheduler takes every task in the system. With SWITCH_PARTIAL only
// tasks whose policy is SCHED_EXT would be paced, and (1) any process may
// set its own policy back to SCHED_NORMAL without privilege, so a sandbox
// could leave the pace; (2) every backend would have to set the policy of
// each sandbox task, and sandboxes created before the scheduler loaded (a
// daemon restart, recovery) would stay unpaced; (3) the ext class ranks
// below the fair class, so sandbox tasks would lose the CPU to every host
// task. Keying on the cgroup catches every task of a sandbox, whatever
// started it. The cost is that host tasks run under the simple vtime
// scheduler while tenon runs (bench/results/schedext.md measures it), and
// that cpu.max and cpu.weight are not enforced for them meanwhile.
//
// # The watchdog
//
// The kernel unloads a scheduler that leaves a runnable task unscheduled
// for timeout_ms (10 s here; at most 30 s). A shared task is queued at most
// one slice of vtime ahead of the global vtime, so a low-weight task (a
// nice-19 kernel thread such as khugepaged) waits behind about two slices
// of each other runnable task, not until they have all caught up with the
// 100× vtime its weight charged it (which stalled khugepaged for 10 s in
// the VM suite). A paced task is never queued to
// run more than MaxWait (1 s by default) ahead, whatever its rate, so no
// task waits anywhere near the timeout; holding a sandbox longer than a few
// seconds is the freezer's job (internal/live hands a long denial over to
// it), since a frozen task is not runnable and the watchdog ignores it. A
// timer kicks an idle CPU when a paced task becomes eligible.
//
// # Lifetime
//
// The scheduler is attached through a BPF link owned by the process that
// loaded it: Close detaches it, and so does the kernel when the process
// exits or crashes, and the default scheduler takes over (the VM tests
// check both). If the kernel unloads it (the watchdog, an error),
// Scheduler.Enabled turns false and Scheduler.Exit says why.
//
// It needs Linux with CONFIG_SCHED_CLASS_EXT, kernel BTF, cgroup v2, root,
// and no other sched_ext scheduler loaded; only amd64 objects are built.
// The program calls the ___v2 kfuncs (scx_bpf_dsq_insert___v2,
// scx_bpf_dsq_move_to_local___v2) of recent kernels, the VM suite's 7.2
// among them: cilium/ebpf v0.22 cannot resolve the plain names on a kernel
// that has both (see bpf/scx.h). Elsewhere Load fails with ErrUnavailable.
package schedext
