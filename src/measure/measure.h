/* SPDX-License-Identifier: MIT */
/*
 * measure.h: what reading the time costs on this machine, and whether each
 * call went through the kernel.
 *
 * No file in /sys says whether the vDSO serves a clock id (the clock mode
 * lives in the kernel: docs/timekeeping.md), so it is measured.  The verdict must not depend on the
 * machine's speed: each call is compared with the same call forced through
 * syscall(2) in the same run (a vDSO fallback costs as much as the forced
 * system call; a served call costs a fraction of it), and with the share of
 * system CPU time spent while calling it.
 */
#ifndef CD_MEASURE_H
#define CD_MEASURE_H

#include <signal.h>
#include <stdbool.h>

enum cd_call_kind {
	CD_CALL_CLOCK_GETTIME,
	CD_CALL_GETTIMEOFDAY,
	CD_CALL_TIME,
	/* The same three, always through syscall(2) (bench's "NAME/syscall"
	 * ways): the libc and the forced batch are then the same call. */
	CD_CALL_SYSCALL_CLOCK_GETTIME,
	CD_CALL_SYSCALL_GETTIMEOFDAY,
	CD_CALL_SYSCALL_TIME,
	/* The CPU's raw counter (measure/counter.h); clockid holds the
	 * counter's read variant (0, 1, 2: e.g. rdtsc, lfence;rdtsc, rdtscp).
	 * Its forced batch is syscall(SYS_clock_gettime, CLOCK_MONOTONIC), the
	 * system call that a program reading the counter avoids. */
	CD_CALL_COUNTER,
	/* A call of libfastclock (include/fastclock.h); clockid holds which
	 * (enum cd_fc_call).  Its forced batch is the system call it stands in
	 * for: clock_gettime of the same clock through syscall(2). */
	CD_CALL_FASTCLOCK,
};

/* The library's calls that bench measures, in its table's order. */
enum cd_fc_call {
	CD_FC_NOW,              /* fc_now_ns() */
	CD_FC_NOW_UNORDERED,    /* fc_now_ns_unordered() */
	CD_FC_REALTIME,         /* fc_realtime_ns() */
	CD_FC_GETTIME_MONO,     /* fc_gettime(CLOCK_MONOTONIC, &ts) */
	CD_FC_CYCLES,           /* fc_cycles() */
	CD_FC_COARSE,           /* fc_coarse_ns() */
};

struct cd_clock_spec {
	const char *name;       /* "CLOCK_MONOTONIC", "gettimeofday", "time" */
	enum cd_call_kind kind;
	int clockid;            /* for the clock_gettime kinds; for CD_CALL_COUNTER the read variant */
	bool high_res;          /* reads the clocksource's counter (not the coarse data page) */
};

#define CD_N_CHECK_CLOCKS 9
/* The ways of reading the time that `check` measures, in output order. */
extern const struct cd_clock_spec cd_check_clocks[CD_N_CHECK_CLOCKS];

struct cd_clock_cost {
	const struct cd_clock_spec *spec;
	bool measured;
	int err;                /* -errno when the call itself failed (e.g. CLOCK_TAI on an old kernel) */
	double ns_per_call;     /* median over batches, through libc (the vDSO where it serves) */
	double ns_min, ns_max;  /* fastest and slowest batch */
	double syscall_ns;      /* median over batches of the same call through syscall(2) */
	double ratio;           /* ns_per_call / syscall_ns */
	double sys_share;       /* system CPU time / all CPU time while calling it; < 0 unknown */
	bool syscall;           /* the verdict: this call enters the kernel */
	double cpu_user_s, cpu_sys_s; /* this thread's CPU time in the libc batches (getrusage) */
	/* The exact answer from cd_kernel_path: of CD_KERNEL_PATH_CALLS calls, how
	 * many reached the kernel; -errno when it could not be asked (no seccomp),
	 * and then the verdict rests on timing (cd_verdict_syscall). */
	int kernel_calls;
	bool exact;             /* the verdict came from kernel_calls, not timing */
	long calls;             /* calls through libc the batches timed: few when each is slow */
};

struct cd_measurements {
	bool done;
	int n;
	struct cd_clock_cost c[CD_N_CHECK_CLOCKS];
	double elapsed_s;       /* wall time the measurement took */
};

/* time(2) forced through syscall(2); on arm64, which has no time system
 * call, gettimeofday's (what time() falls back to there). */
long cd_time_syscall(void);

/* Time n calls of spec (through syscall(2) when forced); returns nanoseconds
 * elapsed, or a negative value when the call fails. */
double cd_clock_batch(const struct cd_clock_spec *spec, bool forced, long n);

/* Measure one clock within about budget_s seconds of wall time. */
void cd_measure_clock(const struct cd_clock_spec *spec, double budget_s, struct cd_clock_cost *out);

/* The same, sized by calls instead of time: about `calls` calls through
 * libc in all (the forced batches get as much time as the libc ones). */
void cd_measure_clock_calls(const struct cd_clock_spec *spec, long calls, struct cd_clock_cost *out);

/* Either of the two (by calls when calls > 0), ending early with the
 * batches done so far (at least one) once *stop is set, e.g. by Ctrl-C. */
void cd_measure_clock_stoppable(const struct cd_clock_spec *spec, double budget_s, long calls,
                                const volatile sig_atomic_t *stop, struct cd_clock_cost *out);

/* Measure every clock of cd_check_clocks within about budget_s in all. */
void cd_measure_check(struct cd_measurements *m, double budget_s);

/* The calls in each of two batches that take turns, `rounds` of each
 * within budget_s: both last as long, by their calls' first costs per_ns[]
 * (ns a call). */
void cd_batch_pair_split(double budget_s, int rounds, const double per_ns[2], long n[2]);

/* The median of v[0..n), n > 0: v[n / 2] once v is sorted, in place (so
 * that v[0] and v[n - 1] are then the least and the greatest). */
double cd_median(double *v, int n);

/* A batch's cost from its wall and thread-CPU times: the CPU time when it is
 * plausible (more than 0, no more than the wall time), else the wall time. */
double cd_batch_cost(double wall_ns, double cpu_ns);

/* The verdict rule, apart so that it can be tested: ratio to the forced
 * system call, and the system share (< 0 when unknown). */
bool cd_verdict_syscall(double ratio, double sys_share);

/* The kernel's clock a library call (enum cd_fc_call) stands in for, which
 * it reads when it cannot serve from the counter: its forced twin reads it
 * through syscall(2). */
int cd_fc_kernel_clockid(int which);

/* ---- kernelpath.c: does a call reach the kernel, exactly ---- */

#define CD_KERNEL_PATH_MAX 32
#define CD_KERNEL_PATH_CALLS 200

/* For each spec (libc kinds only), how many of CD_KERNEL_PATH_CALLS calls
 * reached the kernel, found with a seccomp filter in a forked child; -errno
 * in reached[i] when that cannot be known (no seccomp, another kind of call).
 * Returns 0, or -errno when the child could not be run.  Call it while the
 * process has one thread. */
int cd_kernel_path(const struct cd_clock_spec *const *specs, int n, int *reached);

/* Put cd_kernel_path's answer into a measurement: the exact verdict replaces
 * the timing one when it is known. */
void cd_apply_kernel_path(struct cd_clock_cost *c, int reached);

#endif
