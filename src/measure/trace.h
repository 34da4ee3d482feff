/* SPDX-License-Identifier: MIT */
/*
 * trace.h: which processes make time system calls, from the kernel's
 * syscall tracepoints (`clockdoctor top`).
 *
 * A clock_gettime that the vDSO serves never enters the kernel, so every
 * sys_enter_clock_gettime event is a call that missed the vDSO and paid for
 * a system call.  Two halves: tracepf.c and its parts (tracer_impl.h) talk
 * to the kernel (tracefs, perf_event_open, ring buffers, /proc) and trace.c
 * holds the pure parts (the format file, aggregation, the sample period,
 * sorting), which the unit tests drive with recorded data.
 */
#ifndef CD_TRACE_H
#define CD_TRACE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The traced system calls; clock_gettime64 exists only on 32-bit kernels. */
enum cd_tsys {
	CD_TSYS_CLOCK_GETTIME,
	CD_TSYS_CLOCK_GETTIME64,
	CD_TSYS_GETTIMEOFDAY,
	CD_TSYS_TIME,
	CD_TSYS_N,
};

/* The syscall's name as in tracefs (events/syscalls/sys_enter_NAME). */
const char *cd_tsys_name(enum cd_tsys s);

/* Clock ids 0..CD_TCLOCK_N-2 by number; the last slot holds any other id
 * (dynamic POSIX clocks: negative numbers, CPU-time clocks). */
#define CD_TCLOCK_N 13
#define CD_TCLOCK_OTHER (CD_TCLOCK_N - 1)

/* "REALTIME", "MONOTONIC", ... for clock id slot i; "other" for the last. */
const char *cd_tclock_name(int slot);
/* The slot of a clock id read from the tracepoint. */
int cd_tclock_slot(long long clockid);

/* ---- the tracepoint's format file ---- */

/* Finds field `name` in the text of events/syscalls/sys_enter_X/format:
 *   field:const clockid_t which_clock;	offset:16;	size:8;	signed:0;
 * The name is the last word before the ';' of the field declaration (arrays
 * "name[4]" too).  Returns 0 and sets *offset and *size, or -ENOENT when the
 * field is absent, -EINVAL when its line is malformed. */
int cd_tp_format_field(const char *text, const char *name, int *offset, int *size);

/* The "ID: 480" line of a format file; -ENOENT without one. */
long cd_tp_format_id(const char *text);

/* Reads an integer field of `size` bytes (1, 2, 4, 8; sign-extended when
 * is_signed) at offset from raw tracepoint data of raw_len bytes.  Returns
 * false when it does not fit. */
bool cd_tp_read_int(const void *raw, size_t raw_len, int offset, int size, bool is_signed,
                    long long *out);

/* ---- per-process aggregation of samples ---- */

struct cd_top_proc {
	int pid;                        /* the process (thread group) id */
	char comm[17];
	double calls[CD_TSYS_N];        /* estimated calls in the interval (samples x period) */
	double clocks[CD_TCLOCK_N];     /* the same for clock_gettime by clock id */
	uint64_t samples;
	/* calls[] counted in the kernel (BPF, cd_tracer_exact_procs), not
	 * estimated; the clock ids are still split by the samples. */
	bool exact;
	/* Filled by cd_top_finish. */
	double total;                   /* estimated calls in the interval, all kinds */
	double rate;                    /* a second */
	double cost_ns_s;               /* estimated CPU time spent a second, in ns */
};

struct cd_top_table {
	struct cd_top_proc *p;
	size_t n, cap;
	uint64_t samples;               /* all samples taken */
	double weight[CD_TSYS_N];       /* calls the samples stand for, every process */
	uint64_t lost;                  /* samples the kernel dropped (full ring buffer) */
	bool oom;                       /* a sample could not be stored */
};

void cd_top_table_reset(struct cd_top_table *t);   /* keeps the memory */
void cd_top_table_free(struct cd_top_table *t);
/* The row of pid, created empty when new; NULL when out of memory. */
struct cd_top_proc *cd_top_proc_get(struct cd_top_table *t, int pid);
/* One sample: syscall s, made by pid, standing for `period` calls;
 * clockid only counts for the clock_gettime kinds. */
void cd_top_add_sample(struct cd_top_table *t, int pid, enum cd_tsys s, long long clockid,
                       uint64_t period);
/* Rates and costs over an interval of secs seconds, each call costing
 * call_ns; sorts by cost (then rate, then pid), highest first.  With the
 * exact counts of the interval (else NULL), each process's estimate is its
 * share of the samples times the exact count of each kind of call: a ratio
 * estimate, which the sample period changing within the interval, or
 * samples the kernel dropped (in bursts: little), do not bias much. */
void cd_top_finish(struct cd_top_table *t, double secs, double call_ns,
                   const uint64_t exact[CD_TSYS_N]);
/* Drops every row but pid's (-p: every process is sampled, for the shares). */
void cd_top_keep_pid(struct cd_top_table *t, int pid);
/* qsort comparator of cd_top_finish, apart so that it can be tested. */
int cd_top_cmp(const void *a, const void *b);
/* The clock ids of a row as "MONOTONIC,REALTIME" (most used first), with
 * "gettimeofday" and "time" for those calls; "-" when none. */
void cd_top_clock_list(const struct cd_top_proc *p, char *buf, size_t len);

/* ---- the sample period ---- */

/* The period that keeps sampling near `target` samples a second, given that
 * `calls` events happened in `secs` seconds: at least 1 (every call), and
 * rounded up so that the sample rate never exceeds the target. */
uint64_t cd_top_adapt_period(uint64_t calls, double secs, uint64_t target);
/* The period to set: `current` while it is within 2x of `wanted` (every
 * change resets the kernel's count, costing one sample's accuracy), else
 * `wanted`. */
uint64_t cd_top_keep_period(uint64_t current, uint64_t wanted);

/* ---- CPU lists ("0-3,8,10-11": /sys/devices/system/cpu/online) ---- */

/* Fills cpus with up to max CPU numbers; returns how many, or -EINVAL. */
int cd_parse_cpu_list(const char *s, int *cpus, int max);

/* ---- programs the tracepoints do not see (traceproc.c) ---- */

struct cd_elf_info;

/* Whether the kernel's system-call tracepoints see this program's system
 * calls.  On x86 and arm64 they ignore compat tasks: trace_get_syscall_nr()
 * in kernel/trace/trace_syscalls.c with ARCH_TRACE_IGNORE_COMPAT_SYSCALLS
 * (arch/x86/include/asm/ftrace.h: in_32bit_syscall(), which x32 tasks are
 * too; arch/arm64 for AArch32 tasks), so a 32-bit or x32 program's time
 * system calls are in no count. */
bool cd_trace_sees_program(const struct cd_elf_info *e);

struct cd_unseen {
	int pid;
	char comm[17];                  /* printable only */
	bool x32;                       /* ELF class 32 with the x86-64 machine */
};

/* The running programs (only pid, when > 0) whose system calls the
 * tracepoints do not see: up to max in out; returns how many in all.
 * Programs whose executable cannot be read (kernel threads, another user's
 * under no privilege) are not counted. */
int cd_trace_unseen_programs(int pid, struct cd_unseen *out, int max);

/* ---- the kernel side (tracepf.c, tracering.c, tracefs.c) ---- */

struct cd_tracer;

struct cd_trace_opts {
	int pid;                        /* 0: every process; else also its threads' exact count */
	uint64_t initial_period;
	uint64_t target_samples;        /* a second, all CPUs */
	bool no_bpf;                    /* do not count per process in the kernel: sample only */
};

/* Why the tracer could not start: a message for the user (what is missing
 * and how to get it) in msg. */
struct cd_trace_error {
	int err;                        /* -errno */
	char msg[1024];
};

/* Finds (mounting it when needed, said on stderr) tracefs, reads the
 * tracepoints, opens the events on every online CPU and starts them.
 * Returns NULL with *e filled when it cannot. */
struct cd_tracer *cd_tracer_open(const struct cd_trace_opts *o, struct cd_trace_error *e);
void cd_tracer_close(struct cd_tracer *tr);
/* Reads the ring buffers into t (polling them until `secs` elapse or
 * *stop is set); returns the seconds elapsed by CLOCK_MONOTONIC_COARSE
 * (a few ms of granularity: time whole intervals with a finer clock). */
double cd_tracer_collect(struct cd_tracer *tr, double secs, const volatile sig_atomic_t *stop,
                         struct cd_top_table *t);
/* Exact calls of each kind since the last call (all processes; with
 * opts.pid, pid_calls gets that process's threads' exact calls too, or -1
 * for each kind when it could not be counted). */
void cd_tracer_counts(struct cd_tracer *tr, uint64_t all[CD_TSYS_N], int64_t pid_calls[CD_TSYS_N]);
/* Each process's exact calls since the last call (measure/bpfcount.c) into
 * t's rows (created when new), marked exact.  The number of processes, or
 * -ENOTSUP when they are not counted (cd_tracer_exact_why says why). */
int cd_tracer_exact_procs(struct cd_tracer *tr, struct cd_top_table *t);
const char *cd_tracer_exact_why(const struct cd_tracer *tr);
/* Sets the sample period of every event, first reading the samples taken
 * with the old one into t. */
void cd_tracer_set_period(struct cd_tracer *tr, uint64_t period, struct cd_top_table *t);
uint64_t cd_tracer_period(const struct cd_tracer *tr);
int cd_tracer_ncpus(const struct cd_tracer *tr);
/* CPUs taken offline and back: their events opened again (the kernel
 * detaches a CPU's events when it goes offline).  *untraced: CPUs online
 * now that were not when tracing began (they have no events).  Returns the
 * number of CPUs reopened, or -errno with e filled. */
int cd_tracer_follow_cpus(struct cd_tracer *tr, int *untraced, struct cd_trace_error *e);
/* Which syscalls are traced (the kernel may lack some). */
bool cd_tracer_has(const struct cd_tracer *tr, enum cd_tsys s);
const char *cd_tracer_tracefs(const struct cd_tracer *tr);

#endif
