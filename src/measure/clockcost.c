/* SPDX-License-Identifier: MIT */
/*
 * clockcost.c: the cost of each way of reading the time, and whether it
 * enters the kernel.
 *
 * A call is timed in batches long enough that reading the clock around the
 * batch costs nothing in comparison, even on a clocksource where one read
 * costs 2 us.  The batch clock is the thread's CPU time (see
 * batch_clock_ns).  The median batch is the figure: a shared, noisy machine makes
 * some batches slow, never fast.  The same call forced through syscall(2) is
 * timed the same way, interleaved with the libc batches so that both see the
 * same machine load.
 */
#include "measure/measure.h"
#include "measure/timer.h"
#include "util/monotime.h"

#include "fastclock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

const struct cd_clock_spec cd_check_clocks[CD_N_CHECK_CLOCKS] = {
	{ "CLOCK_REALTIME", CD_CALL_CLOCK_GETTIME, CLOCK_REALTIME, true },
	{ "CLOCK_MONOTONIC", CD_CALL_CLOCK_GETTIME, CLOCK_MONOTONIC, true },
	{ "CLOCK_MONOTONIC_RAW", CD_CALL_CLOCK_GETTIME, CLOCK_MONOTONIC_RAW, true },
	{ "CLOCK_BOOTTIME", CD_CALL_CLOCK_GETTIME, CLOCK_BOOTTIME, true },
	{ "CLOCK_TAI", CD_CALL_CLOCK_GETTIME, CLOCK_TAI, true },
	{ "CLOCK_REALTIME_COARSE", CD_CALL_CLOCK_GETTIME, CLOCK_REALTIME_COARSE, false },
	{ "CLOCK_MONOTONIC_COARSE", CD_CALL_CLOCK_GETTIME, CLOCK_MONOTONIC_COARSE, false },
	{ "gettimeofday", CD_CALL_GETTIMEOFDAY, 0, true },
	{ "time", CD_CALL_TIME, 0, false },
};

/* Keeps the compiler from dropping the calls' results. */
static volatile long sink;

/* Batches are timed by this thread's CPU time, not the wall clock: on a
 * shared, loaded machine a batch that is preempted for a few ms would look
 * many times dearer by the wall clock, while its CPU time stays what the calls
 * cost.  CLOCK_THREAD_CPUTIME_ID is always a system call, which is why it
 * frames a whole batch and is never the thing measured. */
static double batch_clock_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

long cd_time_syscall(void)
{
#ifdef SYS_time
	return syscall(SYS_time, NULL);
#else
	/* arm64 has no time system call; gettimeofday is what time() falls back to. */
	struct timeval tv;
	syscall(SYS_gettimeofday, &tv, NULL);
	return tv.tv_sec;
#endif
}

/* n reads of the CPU counter variant `which` (timer.h), summed. */
static long counter_loop(int which, long n)
{
	uint64_t acc = 0;
	switch (which) {
	case 0:
		for (long i = 0; i < n; i++)
			acc += cd_counter_read0();
		break;
	case 1:
		for (long i = 0; i < n; i++)
			acc += cd_counter_read1();
		break;
	default:
		for (long i = 0; i < n; i++)
			acc += cd_counter_read2();
		break;
	}
	return (long)acc;
}

/* n calls of libfastclock's call `which` (enum cd_fc_call), summed;
 * -errno when fc_gettime fails. */
static long fastclock_loop(int which, long n)
{
	uint64_t acc = 0; /* wraps: ns since 1970 summed overflow a signed sum */
	struct timespec ts;
	switch (which) {
	case CD_FC_NOW:
		for (long i = 0; i < n; i++)
			acc += (uint64_t)fc_now_ns();
		break;
	case CD_FC_NOW_UNORDERED:
		for (long i = 0; i < n; i++)
			acc += (uint64_t)fc_now_ns_unordered();
		break;
	case CD_FC_REALTIME:
		for (long i = 0; i < n; i++)
			acc += (uint64_t)fc_realtime_ns();
		break;
	case CD_FC_GETTIME_MONO:
		for (long i = 0; i < n; i++) {
			int rc = fc_gettime(CLOCK_MONOTONIC, &ts);
			if (rc != 0)
				return rc;
			acc += (uint64_t)ts.tv_nsec;
		}
		break;
	case CD_FC_CYCLES:
		for (long i = 0; i < n; i++)
			acc += fc_cycles();
		break;
	default:
		for (long i = 0; i < n; i++)
			acc += (uint64_t)fc_coarse_ns();
		break;
	}
	sink = (long)acc;
	return 0;
}

int cd_fc_kernel_clockid(int which)
{
	switch (which) {
	case CD_FC_REALTIME: return CLOCK_REALTIME;
	case CD_FC_COARSE: return CLOCK_MONOTONIC_COARSE;
	default: return CLOCK_MONOTONIC;
	}
}

/* The "NAME/syscall" kinds are their base kind, forced; the counter's forced
 * twin is the system call it replaces, clock_gettime(CLOCK_MONOTONIC), and a
 * library call's the one of the clock it serves. */
static enum cd_call_kind base_kind(const struct cd_clock_spec *spec, bool *forced, int *clockid)
{
	*clockid = spec->clockid;
	switch (spec->kind) {
	case CD_CALL_SYSCALL_CLOCK_GETTIME: *forced = true; return CD_CALL_CLOCK_GETTIME;
	case CD_CALL_SYSCALL_GETTIMEOFDAY: *forced = true; return CD_CALL_GETTIMEOFDAY;
	case CD_CALL_SYSCALL_TIME: *forced = true; return CD_CALL_TIME;
	case CD_CALL_COUNTER:
		if (!*forced)
			return CD_CALL_COUNTER;
		*clockid = CLOCK_MONOTONIC;
		return CD_CALL_CLOCK_GETTIME;
	case CD_CALL_FASTCLOCK:
		if (!*forced)
			return CD_CALL_FASTCLOCK;
		*clockid = cd_fc_kernel_clockid(spec->clockid);
		return CD_CALL_CLOCK_GETTIME;
	default: return spec->kind;
	}
}

/* Run n calls; *wall and *cpu receive the wall-clock and thread-CPU time they
 * took.  Returns 0, or -errno when the call fails. */
static int run_calls(const struct cd_clock_spec *spec, bool forced, long n, double *wall, double *cpu)
{
	struct timespec ts = { 0, 0 };
	struct timeval tv = { 0, 0 };
	long acc = 0;
	int clockid;
	enum cd_call_kind kind = base_kind(spec, &forced, &clockid);
	double w0 = cd_mono_ns(), c0 = batch_clock_ns();
	switch (kind) {
	case CD_CALL_CLOCK_GETTIME:
		if (forced) {
			for (long i = 0; i < n; i++) {
				if (syscall(SYS_clock_gettime, clockid, &ts) != 0)
					return -errno;
				acc += ts.tv_nsec;
			}
		} else {
			for (long i = 0; i < n; i++) {
				if (clock_gettime(clockid, &ts) != 0)
					return -errno;
				acc += ts.tv_nsec;
			}
		}
		break;
	case CD_CALL_GETTIMEOFDAY:
		if (forced) {
			for (long i = 0; i < n; i++) {
				syscall(SYS_gettimeofday, &tv, NULL);
				acc += tv.tv_usec;
			}
		} else {
			for (long i = 0; i < n; i++) {
				gettimeofday(&tv, NULL);
				acc += tv.tv_usec;
			}
		}
		break;
	case CD_CALL_TIME:
		if (forced) {
			for (long i = 0; i < n; i++)
				acc += cd_time_syscall();
		} else {
			for (long i = 0; i < n; i++)
				acc += (long)time(NULL);
		}
		break;
	case CD_CALL_COUNTER:
		acc = counter_loop(clockid, n);
		break;
	case CD_CALL_FASTCLOCK: {
		long rc = fastclock_loop(clockid, n);
		if (rc < 0)
			return (int)rc;
		break;
	}
	default:
		/* base_kind() leaves no other kind. */
		break;
	}
	double c1 = batch_clock_ns(), w1 = cd_mono_ns();
	sink = acc;
	*wall = w1 - w0;
	*cpu = c1 - c0;
	return 0;
}

/* The thread-CPU clock is trusted only where it agrees with physics: more
 * than zero, and no more than the wall time that passed.  On a kernel whose
 * sched_clock is unstable (a TCG guest, a machine whose TSC was rejected:
 * exactly the machines this tool is for) it can read a delta of 0, and a
 * batch must then fall back to the wall clock. */
double cd_batch_cost(double wall, double cpu)
{
	if (cpu > 0 && cpu >= 0.05 * wall && cpu <= wall * 1.05 + 50e3)
		return cpu;
	return wall;
}

double cd_clock_batch(const struct cd_clock_spec *spec, bool forced, long n)
{
	double wall, cpu;
	int rc = run_calls(spec, forced, n, &wall, &cpu);
	return rc < 0 ? rc : cd_batch_cost(wall, cpu);
}

/* Wall nanoseconds one call takes, from enough calls to last 50 us: the
 * sizing of batches must never rest on a clock that may read 0. */
static double probe_per_call(const struct cd_clock_spec *spec, bool forced, int *err)
{
	for (long n = 16;; n *= 2) {
		double wall, cpu;
		int rc = run_calls(spec, forced, n, &wall, &cpu);
		if (rc < 0) {
			*err = rc;
			return 0;
		}
		if (wall >= 50e3 || n >= (1L << 22))
			return wall / (double)n > 0.1 ? wall / (double)n : 0.1;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double cd_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof v[0], cmp_double);
	return v[n / 2];
}

void cd_batch_pair_split(double budget_s, int rounds, const double per_ns[2], long n[2])
{
	double batch_ns = budget_s * 1e9 / (2.0 * rounds);
	for (int i = 0; i < 2; i++)
		n[i] = (long)(batch_ns / per_ns[i]);
}

static double cpu_seconds(bool system)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return -1;
	const struct timeval *t = system ? &ru.ru_stime : &ru.ru_utime;
	return (double)t->tv_sec + (double)t->tv_usec / 1e6;
}

/* The rule: a call served by the vDSO costs a small fraction of the system
 * call it avoids (about 0.1 on tsc); a call that falls back costs the system
 * call plus a few ns (about 1.0).  The threshold sits far from both.  The
 * system share confirms a borderline ratio but cannot on its own call a cheap
 * call a system call, since tick-based CPU accounting is coarse. */
bool cd_verdict_syscall(double ratio, double sys_share)
{
	if (ratio >= 0.6)
		return true;
	if (ratio >= 0.35 && sys_share >= 0.6)
		return true;
	return false;
}

#define BATCHES 9

/* First estimates of a call's cost through libc and forced, per_ns[0] and
 * per_ns[1], for sizing the batches; false (and out->err set) when the
 * call fails. */
static bool probe_costs(const struct cd_clock_spec *spec, double per_ns[2], struct cd_clock_cost *out)
{
	memset(out, 0, sizeof *out);
	out->spec = spec;
	out->sys_share = -1;
	int err = 0;
	per_ns[1] = probe_per_call(spec, true, &err);
	per_ns[0] = err ? 0 : probe_per_call(spec, false, &err);
	out->err = err;
	return err == 0;
}

static void measure_batches(const struct cd_clock_spec *spec, long n_lib, long n_forced,
                            double budget_s, const volatile sig_atomic_t *stop, struct cd_clock_cost *out);

void cd_measure_clock_stoppable(const struct cd_clock_spec *spec, double budget_s, long calls,
                                const volatile sig_atomic_t *stop, struct cd_clock_cost *out)
{
	double per[2];  /* ns a call: through libc, forced */
	if (!probe_costs(spec, per, out))
		return;
	long n[2];
	if (calls > 0) {
		/* calls through libc in all; each forced batch lasts about as
		 * long as a libc batch. */
		n[0] = calls / BATCHES;
		n[1] = (long)((double)(n[0] > 16 ? n[0] : 16) * per[0] / per[1]);
		budget_s = 2.0 * BATCHES * (double)n[0] * per[0] / 1e9;
	} else {
		/* Size both kinds of batch so that BATCHES of each fit the budget. */
		cd_batch_pair_split(budget_s, BATCHES, per, n);
	}
	for (int i = 0; i < 2; i++)
		if (n[i] < 16)
			n[i] = 16;
	measure_batches(spec, n[0], n[1], budget_s, stop, out);
}

void cd_measure_clock(const struct cd_clock_spec *spec, double budget_s, struct cd_clock_cost *out)
{
	cd_measure_clock_stoppable(spec, budget_s, 0, NULL, out);
}

void cd_measure_clock_calls(const struct cd_clock_spec *spec, long calls, struct cd_clock_cost *out)
{
	cd_measure_clock_stoppable(spec, 0, calls, NULL, out);
}

/* A batch that Ctrl-C can cut: with a stop flag, the calls run in chunks of
 * 65536 (two clock reads a chunk, under 0.1% of it) and the flag is seen
 * between chunks; *done says how many calls the time covers. */
#define STOP_CHUNK 65536L
static double batch_stoppable(const struct cd_clock_spec *spec, bool forced, long n,
                              const volatile sig_atomic_t *stop, long *done)
{
	if (!stop) {
		*done = n;
		return cd_clock_batch(spec, forced, n);
	}
	double total = 0;
	*done = 0;
	while (*done < n && !*stop) {
		long k = n - *done < STOP_CHUNK ? n - *done : STOP_CHUNK;
		double t = cd_clock_batch(spec, forced, k);
		if (t < 0)
			return t;
		total += t;
		*done += k;
	}
	return total;
}

static void measure_batches(const struct cd_clock_spec *spec, long n_lib, long n_forced,
                            double budget_s, const volatile sig_atomic_t *stop, struct cd_clock_cost *out)
{
	/* However the machine behaves (a host that stops the guest, a clock that
	 * jumps), the measurement ends: after 3 batches, past 10 times its
	 * budget, it stops with what it has. */
	double deadline = cd_mono_ns() + 10 * budget_s * 1e9 + 0.5e9;
	double lib[BATCHES], sys[BATCHES];
	int nb = 0;
	bool have_rusage = cpu_seconds(false) >= 0;
	double lib_cpu_u = 0, lib_cpu_s = 0;
	while (nb < BATCHES && (nb < 3 || cd_mono_ns() < deadline) && !(nb >= 1 && stop && *stop)) {
		double a_u = cpu_seconds(false), a_s = cpu_seconds(true);
		long lib_done, sys_done;
		double t = batch_stoppable(spec, false, n_lib, stop, &lib_done);
		lib_cpu_u += cpu_seconds(false) - a_u;
		lib_cpu_s += cpu_seconds(true) - a_s;
		double f = t < 0 ? 0 : batch_stoppable(spec, true, n_forced, stop, &sys_done);
		if (t < 0 || f < 0) {
			out->err = (int)(t < 0 ? t : f);
			return;
		}
		if (lib_done == 0 || sys_done == 0)
			break; /* stopped before this batch measured anything */
		out->calls += lib_done;
		lib[nb] = t / (double)lib_done;
		sys[nb] = f / (double)sys_done;
		nb++;
	}
	if (nb == 0)
		return; /* stopped at once: nothing measured */
	out->measured = true;
	out->ns_per_call = cd_median(lib, nb);
	out->ns_min = lib[0];
	out->ns_max = lib[nb - 1];
	out->syscall_ns = cd_median(sys, nb);
	out->ratio = out->syscall_ns > 0 ? out->ns_per_call / out->syscall_ns : 0;
	/* Below a few ticks of CPU time the split is noise. */
	out->cpu_user_s = lib_cpu_u;
	out->cpu_sys_s = lib_cpu_s;
	double cpu = lib_cpu_u + lib_cpu_s;
	if (have_rusage && cpu >= 0.008)
		out->sys_share = lib_cpu_s / cpu;
	out->syscall = cd_verdict_syscall(out->ratio, out->sys_share);
}

void cd_apply_kernel_path(struct cd_clock_cost *c, int reached)
{
	c->kernel_calls = reached;
	c->exact = reached >= 0;
	if (c->exact && c->measured)
		c->syscall = reached * 2 >= CD_KERNEL_PATH_CALLS;
}

void cd_measure_check(struct cd_measurements *m, double budget_s)
{
	memset(m, 0, sizeof *m);
	double t0 = cd_mono_ns();
	const struct cd_clock_spec *specs[CD_N_CHECK_CLOCKS];
	int reached[CD_N_CHECK_CLOCKS];
	for (int i = 0; i < CD_N_CHECK_CLOCKS; i++)
		specs[i] = &cd_check_clocks[i];
	if (cd_kernel_path(specs, CD_N_CHECK_CLOCKS, reached) < 0)
		for (int i = 0; i < CD_N_CHECK_CLOCKS; i++)
			reached[i] = -ENOSYS;
	for (int i = 0; i < CD_N_CHECK_CLOCKS; i++) {
		cd_measure_clock(&cd_check_clocks[i], budget_s / CD_N_CHECK_CLOCKS, &m->c[i]);
		cd_apply_kernel_path(&m->c[i], reached[i]);
	}
	m->n = CD_N_CHECK_CLOCKS;
	m->done = true;
	m->elapsed_s = (cd_mono_ns() - t0) / 1e9;
}
