/* SPDX-License-Identifier: MIT */
/*
 * tracer_impl.h: the kernel half of `clockdoctor top` (struct cd_tracer of
 * trace.h), shared by its files; not for callers outside them.
 *
 *   tracepf.c     the perf events: opened on every online CPU and the
 *                 process's threads, reopened after a CPU comes back, their
 *                 exact counts
 *   tracering.c   the per-CPU ring buffers: the samples, their dithered
 *                 periods, polling
 *   tracefs.c     finding tracefs (mounting it when needed) and reading the
 *                 tracepoints' format files
 *   traceproc.c   processes by pid: their names, and the programs the
 *                 tracepoints do not see
 */
#ifndef CD_TRACER_IMPL_H
#define CD_TRACER_IMPL_H

#include "measure/trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tracepoint {
	bool have;
	long id;
	int clock_off, clock_size;  /* which_clock; clock_size 0 when the call has none */
};

struct cd_tracer {
	char tracefs[64];
	struct tracepoint tp[CD_TSYS_N];
	int ncpus;
	int *cpus;
	int *fd;                    /* [cpu index * CD_TSYS_N + syscall], -1 when absent */
	uint64_t *last;             /* the count read last time, per fd */
	void **ring;                /* per CPU, NULL when it could not be mapped */
	size_t page, ring_len;
	int *pid_fd;                /* -p: counting events on the process's threads */
	enum cd_tsys *pid_kind;
	uint64_t *pid_last;
	int n_pid_fd;
	bool pid_counted;
	int pid;
	uint64_t period;            /* the period aimed at (cd_tracer_set_period) */
	/* Each CPU's period in force, dithered around `period`: a fixed "every
	 * P-th event" locks onto a loop that makes k calls a turn (P and k with a
	 * common factor always sample the same call), so every REDITHER_S each
	 * CPU gets a new prime period in [P/2, 3P/2).  Its samples are weighted
	 * by it, except the first of each event after the change (fresh). */
	uint64_t *cpu_period;
	bool *fresh;                /* per fd: its next sample is the forced one */
	bool *offline;              /* per CPU: seen offline since its events were opened */
	struct cd_bpfcount *bpf;    /* exact calls per process; NULL: sampled only */
	char bpf_why[600];          /* why not */
	double dithered_at;         /* POLL_CLOCK time of the last redither (tracering.c) */
	uint64_t rng;
};

/* ---- tracefs.c ---- */

/* Finds tracefs (CLOCKDOCTOR_TRACEFS, or where it belongs, mounting it
 * when it is not mounted, said on stderr) into tr->tracefs: 0, or -errno
 * with e filled. */
int cd_tracer_find_tracefs(struct cd_tracer *tr, struct cd_trace_error *e);
/* Reads the id and the which_clock field of one sys_enter tracepoint into
 * tr->tp[s] (have false when it cannot). */
void cd_tracer_read_tracepoint(struct cd_tracer *tr, enum cd_tsys s);

/* ---- traceproc.c ---- */

/* The process's name (its comm, at most 15 bytes, printable), or "?" when
 * it exited before it was looked at. */
void cd_trace_read_comm(int pid, char *comm, size_t len);

#endif
