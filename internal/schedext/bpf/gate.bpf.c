/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tenon's gate scheduler: a sched_ext scheduler that paces the tasks of
 * denied sandboxes instead of freezing them.
 *
 * Every task in the system runs under it (no SCX_OPS_SWITCH_PARTIAL; see
 * doc.go for why). A task whose cgroup, or one of its ancestors, is in the
 * denied map is a paced task: it waits in DENIED_DSQ, ordered by the time
 * its cgroup may next run (vclock), and each run of it charges its cgroup
 * used / rate of wall time, so the cgroup's tasks get at most rate_ppm
 * millionths of one CPU. Every other task runs under a simple global
 * weighted vtime scheduler (SHARED_DSQ), whose lag is bounded both ways
 * by one slice (gate_enqueue), so that no task waits long there either.
 *
 * The watchdog: no paced task is queued with an eligibility time more than
 * max_wait_ns ahead, so no runnable task waits much longer than that
 * whatever the rate; long denials are handed over to the cgroup freezer by
 * user space (a frozen task is not runnable, so the watchdog ignores it).
 * A timer kicks an idle CPU when a paced task becomes eligible, since idle
 * CPUs do not dispatch by themselves.
 */
#include "scx.h"

char _license[] SEC("license") = "GPL";

#define SHARED_DSQ 0
#define DENIED_DSQ 1
#define MAX_LEVELS 16 /* cgroup levels walked up from a task's cgroup */
#define MAX_SCAN 32   /* DENIED_DSQ entries looked at per dispatch */
#define PPM 1000000ULL

/* Tunables, set by user space before load. */
const volatile u64 shared_slice_ns = 20000000ULL; /* SCX_SLICE_DFL */
const volatile u64 denied_slice_ns = 4000000ULL;
const volatile u64 max_wait_ns = 1000000000ULL;
const volatile u64 kick_period_ns = 2000000ULL;

/* The number of entries in denied, kept by user space: 0 spares every
 * enqueue the walk up the task's cgroups. */
volatile u32 nr_denied;

/* Counters, read by user space. */
u64 nr_shared_dispatched, nr_denied_dispatched, nr_released, nr_capped, nr_kicks;

/* Why the scheduler stopped (ops.exit), read by user space. */
s32 exit_kind;
s64 exit_code;
char exit_reason[128];
char exit_msg[256];

/* A denied cgroup: the value of the denied map, keyed by cgroup id. */
struct gate_cg {
	u64 rate_ppm; /* CPU time per wall time, in millionths of one CPU */
	u64 vclock;   /* when its tasks may next run (scx_bpf_now ns) */
	u64 ran_ns;   /* CPU time its tasks got while it was denied */
	u64 runs;     /* runs of its tasks while it was denied */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u64);
	__type(value, struct gate_cg);
} denied SEC(".maps");

struct task_ctx {
	u64 gate_cgid; /* the denied cgroup it was queued under, or 0 */
	u64 started;   /* when it last started running */
	u64 vtime;     /* its weighted vtime in the shared queue */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

struct kick_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct kick_timer);
} kick_timers SEC(".maps");

/* Per CPU: the last dispatch took a paced task, so the next one tries the
 * shared queue first (paced tasks cannot starve the rest). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} last_denied SEC(".maps");

static u64 vtime_now;

bool bpf_cpumask_test_cpu(u32 cpu, const struct cpumask *cpumask) __ksym;

static __always_inline bool before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/* denied_ancestor returns the id of the nearest cgroup of p (on the
 * default hierarchy, from its own up) that is in denied, or 0. */
static __always_inline u64 denied_ancestor(struct task_struct *p)
{
	struct cgroup *cg;
	int i;

	if (!nr_denied)
		return 0;
	cg = BPF_CORE_READ(p, cgroups, dfl_cgrp);
	for (i = 0; i < MAX_LEVELS && cg; i++) {
		u64 id = BPF_CORE_READ(cg, kn, id);

		if (bpf_map_lookup_elem(&denied, &id))
			return id;
		if (BPF_CORE_READ(cg, level) <= 0)
			break;
		/* self is cgroup's first member: a parent css is its cgroup */
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return 0;
}

static __always_inline struct task_ctx *task_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
}

s32 BPF_STRUCT_OPS(gate_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu;

	/* A paced task always goes through enqueue, and does not claim an
	 * idle CPU it would not run on now (the timer kicks one when it may). */
	if (denied_ancestor(p))
		return prev_cpu;
	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (is_idle) {
		struct task_ctx *tctx = task_ctx(p);

		if (tctx)
			tctx->gate_cgid = 0;
		scx_bpf_dsq_insert___v2(p, SCX_DSQ_LOCAL, shared_slice_ns, 0);
	}
	return cpu;
}

void BPF_STRUCT_OPS(gate_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = task_ctx(p);
	struct gate_cg *cg;
	u64 cgid, vtime;

	if (!tctx) {
		scx_bpf_dsq_insert___v2(p, SCX_DSQ_GLOBAL, shared_slice_ns, enq_flags);
		return;
	}
	cgid = denied_ancestor(p);
	cg = cgid ? bpf_map_lookup_elem(&denied, &cgid) : NULL;
	if (cg) {
		u64 now = scx_bpf_now();
		u64 at = cg->vclock;

		if (before(now + max_wait_ns, at)) {
			at = now + max_wait_ns;
			__sync_fetch_and_add(&nr_capped, 1);
		}
		tctx->gate_cgid = cgid;
		scx_bpf_dsq_insert_vtime(p, DENIED_DSQ, denied_slice_ns, at, enq_flags);
		return;
	}
	tctx->gate_cgid = 0;
	if (enq_flags & SCX_ENQ_LAST) {
		/* The only runnable task on its CPU keeps it. */
		scx_bpf_dsq_insert___v2(p, SCX_DSQ_LOCAL, shared_slice_ns, enq_flags);
		return;
	}
	/* An idle task brings at most one slice of credit back, and a task
	 * is queued at most one slice ahead of the global vtime: a low weight
	 * counts within that lag only. Without the cap a nice-19 task (weight
	 * 1) that ran one 20-ms slice was charged 2 s of vtime and waited
	 * until every other runnable task had caught up: khugepaged waited
	 * over 10 s in the VM suite and the watchdog unloaded the scheduler.
	 * With it a shared task waits behind about two slices of each other
	 * runnable task at most. */
	vtime = tctx->vtime;
	if (before(vtime, vtime_now - shared_slice_ns))
		vtime = vtime_now - shared_slice_ns;
	if (before(vtime_now + shared_slice_ns, vtime))
		vtime = vtime_now + shared_slice_ns;
	tctx->vtime = vtime;
	scx_bpf_dsq_insert_vtime(p, SHARED_DSQ, shared_slice_ns, vtime, enq_flags);
}

/* runnable_now says whether a queued paced task may run now: its cgroup
 * was allowed since it was queued (released), or its time has come. */
static __always_inline bool runnable_now(struct task_struct *p, u64 now, bool *released)
{
	struct task_ctx *tctx = task_ctx(p);

	*released = !tctx || !bpf_map_lookup_elem(&denied, &tctx->gate_cgid);
	return *released || !before(now, p->scx.dsq_vtime);
}

/* dispatch_denied moves the first paced task that may run now and can run
 * on cpu to cpu's local queue. */
static bool dispatch_denied(s32 cpu)
{
	struct bpf_iter_scx_dsq it;
	struct task_struct *p;
	u64 now = scx_bpf_now();
	bool moved = false, released;
	int seen = 0;

	if (bpf_iter_scx_dsq_new(&it, DENIED_DSQ, 0))
		goto out;
	while ((p = bpf_iter_scx_dsq_next(&it))) {
		if (++seen > MAX_SCAN)
			break;
		if (!runnable_now(p, now, &released))
			continue;
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		if (released)
			scx_bpf_dsq_move_set_slice(&it, shared_slice_ns);
		if (scx_bpf_dsq_move(&it, p, SCX_DSQ_LOCAL, 0)) {
			moved = true;
			if (released)
				__sync_fetch_and_add(&nr_released, 1);
			else
				__sync_fetch_and_add(&nr_denied_dispatched, 1);
			break;
		}
	}
out:
	bpf_iter_scx_dsq_destroy(&it);
	return moved;
}

void BPF_STRUCT_OPS(gate_dispatch, s32 cpu, struct task_struct *prev)
{
	u32 zero = 0, *last = bpf_map_lookup_elem(&last_denied, &zero);

	if (last && *last && scx_bpf_dsq_move_to_local___v2(SHARED_DSQ, 0)) {
		*last = 0;
		__sync_fetch_and_add(&nr_shared_dispatched, 1);
		return;
	}
	if (scx_bpf_dsq_nr_queued(DENIED_DSQ) > 0 && dispatch_denied(cpu)) {
		if (last)
			*last = 1;
		return;
	}
	if (last)
		*last = 0;
	if (scx_bpf_dsq_move_to_local___v2(SHARED_DSQ, 0))
		__sync_fetch_and_add(&nr_shared_dispatched, 1);
}

void BPF_STRUCT_OPS(gate_running, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx(p);

	if (!tctx)
		return;
	tctx->started = scx_bpf_now();
	/* The global vtime follows the shared tasks as they start (racy
	 * across CPUs; an error is small and temporary). */
	if (!tctx->gate_cgid && before(vtime_now, tctx->vtime))
		vtime_now = tctx->vtime;
}

void BPF_STRUCT_OPS(gate_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = task_ctx(p);
	struct gate_cg *cg;
	u64 now, used;

	if (!tctx || !tctx->started)
		return;
	now = scx_bpf_now();
	used = before(tctx->started, now) ? now - tctx->started : 0;
	if (tctx->gate_cgid && (cg = bpf_map_lookup_elem(&denied, &tctx->gate_cgid))) {
		u64 rate = cg->rate_ppm ? cg->rate_ppm : 1;

		/* No credit for the time the cgroup did not run. */
		if (before(cg->vclock, tctx->started))
			cg->vclock = tctx->started;
		__sync_fetch_and_add(&cg->vclock, used * PPM / rate);
		__sync_fetch_and_add(&cg->ran_ns, used);
		__sync_fetch_and_add(&cg->runs, 1);
		return;
	}
	tctx->vtime += used * 100 / (p->scx.weight ? p->scx.weight : 100);
}

void BPF_STRUCT_OPS(gate_enable, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx(p);

	if (tctx)
		tctx->vtime = vtime_now;
}

s32 BPF_STRUCT_OPS(gate_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	if (!bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE))
		return -12; /* -ENOMEM */
	return 0;
}

/* kick wakes an idle CPU when a queued paced task may run now. */
static int kick(void *map, int *key, struct bpf_timer *timer)
{
	struct bpf_iter_scx_dsq it;
	struct task_struct *p;
	bool released;
	int seen = 0;

	if (scx_bpf_dsq_nr_queued(DENIED_DSQ) > 0) {
		u64 now = scx_bpf_now();

		if (!bpf_iter_scx_dsq_new(&it, DENIED_DSQ, 0)) {
			while ((p = bpf_iter_scx_dsq_next(&it))) {
				if (++seen > MAX_SCAN)
					break;
				if (runnable_now(p, now, &released)) {
					s32 cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);

					if (cpu >= 0) {
						scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
						__sync_fetch_and_add(&nr_kicks, 1);
					}
					break;
				}
			}
		}
		bpf_iter_scx_dsq_destroy(&it);
	}
	bpf_timer_start(timer, kick_period_ns, 0);
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(gate_init)
{
	u32 zero = 0;
	struct kick_timer *kt;
	s32 ret;

	ret = scx_bpf_create_dsq(SHARED_DSQ, -1);
	if (ret)
		return ret;
	ret = scx_bpf_create_dsq(DENIED_DSQ, -1);
	if (ret)
		return ret;
	kt = bpf_map_lookup_elem(&kick_timers, &zero);
	if (!kt)
		return -2; /* -ENOENT */
	bpf_timer_init(&kt->timer, &kick_timers, 1 /* CLOCK_MONOTONIC */);
	bpf_timer_set_callback(&kt->timer, kick);
	return bpf_timer_start(&kt->timer, kick_period_ns, 0);
}

void BPF_STRUCT_OPS(gate_exit, struct scx_exit_info *ei)
{
	exit_kind = ei->kind;
	exit_code = ei->exit_code;
	bpf_probe_read_kernel_str(exit_reason, sizeof(exit_reason), ei->reason);
	bpf_probe_read_kernel_str(exit_msg, sizeof(exit_msg), ei->msg);
}

SEC(".struct_ops.link")
struct sched_ext_ops gate_ops = {
	.select_cpu = (void *)gate_select_cpu,
	.enqueue = (void *)gate_enqueue,
	.dispatch = (void *)gate_dispatch,
	.running = (void *)gate_running,
	.stopping = (void *)gate_stopping,
	.enable = (void *)gate_enable,
	.init_task = (void *)gate_init_task,
	.init = (void *)gate_init,
	.exit = (void *)gate_exit,
	/* The last runnable task of a CPU is enqueued too, so a paced task
	 * alone on its CPU is still paced, not run on. */
	.flags = SCX_OPS_ENQ_LAST,
	.timeout_ms = 10000,
	.name = "tenon_gate",
};
