/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few sched_ext kfuncs and helpers tenon's gate scheduler uses,
 * declared from the signatures in the 7.2 kernel's BTF (see vmlinux.h and
 * gen.sh). Only what gate.bpf.c calls is here.
 */
#ifndef TENON_SCX_H
#define TENON_SCX_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

s32 scx_bpf_create_dsq(u64 dsq_id, s32 node) __ksym;
s32 scx_bpf_select_cpu_dfl(struct task_struct *p, s32 prev_cpu, u64 wake_flags, bool *is_idle) __ksym;
/*
 * The ___v2 names: the 7.2 kernel's BTF has scx_bpf_dsq_insert,
 * scx_bpf_dsq_insert___v2 and scx_bpf_dsq_insert___v2_impl, and cilium/ebpf
 * v0.22 finds "multiple matching types" for the plain name (its lookup by
 * the name without the ___ suffix drops only every other non-match).
 */
bool scx_bpf_dsq_insert___v2(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags) __ksym;
void scx_bpf_dsq_insert_vtime(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime, u64 enq_flags) __ksym;
bool scx_bpf_dsq_move_to_local___v2(u64 dsq_id, u64 enq_flags) __ksym;
bool scx_bpf_dsq_move(struct bpf_iter_scx_dsq *it__iter, struct task_struct *p, u64 dsq_id, u64 enq_flags) __ksym;
void scx_bpf_dsq_move_set_slice(struct bpf_iter_scx_dsq *it__iter, u64 slice) __ksym;
s32 scx_bpf_dsq_nr_queued(u64 dsq_id) __ksym;
void scx_bpf_kick_cpu(s32 cpu, u64 flags) __ksym;
s32 scx_bpf_pick_idle_cpu(const cpumask_t *cpus_allowed, u64 flags) __ksym;
u64 scx_bpf_now(void) __ksym;
void scx_bpf_error_bstr(char *fmt, unsigned long long *data, u32 data_len) __ksym;

int bpf_iter_scx_dsq_new(struct bpf_iter_scx_dsq *it, u64 dsq_id, u64 flags) __ksym;
struct task_struct *bpf_iter_scx_dsq_next(struct bpf_iter_scx_dsq *it) __ksym;
void bpf_iter_scx_dsq_destroy(struct bpf_iter_scx_dsq *it) __ksym;

#define BPF_STRUCT_OPS(name, args...) \
	SEC("struct_ops/" #name)      \
	BPF_PROG(name, ##args)

#define BPF_STRUCT_OPS_SLEEPABLE(name, args...) \
	SEC("struct_ops.s/" #name)              \
	BPF_PROG(name, ##args)

/* scx_error reports a fatal error with one u64 argument; the scheduler is
 * then unloaded by the kernel and the default scheduler takes over. */
#define scx_error1(fmt, a)                                              \
	({                                                              \
		static char ___fmt[] = fmt;                             \
		unsigned long long ___p[1] = {(unsigned long long)(a)}; \
		scx_bpf_error_bstr(___fmt, ___p, sizeof(___p));         \
	})

#endif
