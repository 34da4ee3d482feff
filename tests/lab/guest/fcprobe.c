/* SPDX-License-Identifier: MIT */
/*
 * fcprobe: libfastclock against the kernel's clocks, in a lab guest.
 *
 * Linked statically with build/libfastclock.a (see the fastclock-*
 * scenarios: PROGRAMS with "link").  Every kernel reading here is
 * syscall(SYS_clock_gettime), never the vDSO or libc, so what is compared is
 * the library against the kernel itself.
 *
 *   fcprobe info
 *       fc_info() as one JSON line.
 *   fcprobe now
 *       the kernel's CLOCK_MONOTONIC in ns (to mark an instant from a script).
 *   fcprobe counter
 *       the counter (fc_cycles: the TSC, cntvct_el0) and the kernel's
 *       CLOCK_MONOTONIC in ns at one moment, "TICKS NS": what the counter
 *       itself did across a fault, beside the kernel's clock.
 *   fcprobe follow SECS [-i MS] [-r NS] [-s AT:DELTA]...
 *       for SECS seconds, reads each of fc_now_ns, fc_realtime_ns and
 *       fc_gettime(CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME, CLOCK_TAI) between two
 *       kernel reads of the same clock (k1 <= kernel at the library's read <=
 *       k2).  The error of a read is how far it lies outside [k1, k2] (0
 *       inside): a lower bound of its real error that a wide bracket can only
 *       make smaller, never larger.  fc_info() is read before and after every
 *       batch of BATCH reads; a read is "bad" when its error exceeds the larger
 *       of the two error bounds.  Prints one JSON line per interval (default
 *       200 ms), a line per change of fc_info's source or reason, a line per
 *       run of consecutive bad reads of a clock whose error reached NS (default
 *       1 ms: a step of the clock; 0: every run), a line per step of the
 *       kernel's REALTIME - MONOTONIC by more than 1 ms between two of its
 *       iterations ("kernel-step", with the gap between those iterations:
 *       below 1 ms the reader was running across the step), and a summary
 *       line (with counter_hz_on_raw: the counter's rate on the kernel's
 *       CLOCK_MONOTONIC_RAW over the run, measured apart from the library).  -s AT:DELTA (up to 16): at AT seconds after the start, the
 *       loop itself steps CLOCK_REALTIME by DELTA seconds with
 *       clock_settime() (root), and goes on reading at once.
 *       Backward steps are counted per clock (REALTIME and TAI step with the
 *       kernel's wall clock; MONOTONIC, RAW and BOOTTIME must never), and
 *       so are the kernel's own (kernel_back: a kernel read below the
 *       previous one of the same clock).
 *   fcprobe cost [-n CALLS] [-b BATCHES] [-d MS]
 *       ns a call of fc_now_ns, fc_now_ns_unordered, libc clock_gettime
 *       (CLOCK_MONOTONIC) and syscall(SYS_clock_gettime, CLOCK_MONOTONIC):
 *       BATCHES (9) batches of each, interleaved, each of about MS (5) ms
 *       of calls (at most CALLS), timed by the kernel's CLOCK_MONOTONIC;
 *       medians; ratio = clock_gettime / fc_now_ns.  After 200 ms of
 *       fc_now_ns calls (the library's first frequency measurement).
 *       fc_info before and after, and the CPUs the process may run on.
 *   fcprobe warp SECS [-t THREADS] [--nopin]
 *       THREADS threads (default: the allowed CPUs), each pinned to its own
 *       CPU unless --nopin, read fc_now_ns and compare it with the largest
 *       value any thread has published (a shared atomic, loaded before the
 *       read: a smaller value is a backward step across threads/CPUs).  The
 *       same then for the raw counter (lfence; rdtsc), to show what the
 *       counters themselves do.  One JSON line.
 *
 * Exit status: 0, 1 on a usage or setup error.  The scenarios decide what
 * passes; this program only measures.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fastclock.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000LL
#define BATCH 8

static int64_t kns(clockid_t id)
{
	struct timespec ts;
	if (syscall(SYS_clock_gettime, (long)id, &ts) != 0)
		return INT64_MIN;
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NS + ts->tv_nsec;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_info_fields(const struct fc_info *i)
{
	printf("\"source\":");
	json_str(fc_source_name(i->source));
	printf(",\"reason\":");
	json_str(fc_reason_name(i->reason));
	printf(",\"reason_text\":");
	json_str(i->reason_text);
	printf(",\"counter\":");
	json_str(i->counter);
	printf(",\"kernel_clocksource\":");
	json_str(i->kernel_clocksource);
	printf(",\"kernel_vdso_fast\":%d,\"counter_hz\":%.1f,\"freq_from\":", i->kernel_vdso_fast, i->counter_hz);
	json_str(i->freq_from);
	printf(",\"freq_err_ppm\":%.4g,\"error_bound_ns\":%" PRId64 ",\"last_sync_ns\":%" PRId64
	       ",\"sync_interval_ns\":%" PRId64 ",\"syncs\":%" PRIu64 ",\"counter_backwards\":%" PRIu64
	       ",\"verdict\":%d",
	       i->freq_err_ppm, i->error_bound_ns, i->last_sync_ns, i->sync_interval_ns, i->syncs,
	       i->counter_backwards, i->verdict);
}

static int info_or_die(struct fc_info *i)
{
	int r = fc_info(i);
	if (r != 0) {
		fprintf(stderr, "fcprobe: fc_info: %s\n", strerror(-r));
		exit(1);
	}
	return 0;
}

static int cmd_info(void)
{
	struct fc_info i;
	info_or_die(&i);
	putchar('{');
	print_info_fields(&i);
	printf(",\"now_kernel_ns\":%" PRId64 "}\n", kns(CLOCK_MONOTONIC));
	return 0;
}

/* ---- follow ---- */

enum { C_MONO, C_RT, C_RAW, C_BOOT, C_TAI, NCLK };
static const char *const clk_name[NCLK] = { "mono", "rt", "raw", "boot", "tai" };
static const clockid_t clk_id[NCLK] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME,
	                                CLOCK_TAI };

static int64_t lib_read(int c)
{
	struct timespec ts;
	switch (c) {
	case C_MONO: return fc_now_ns();
	case C_RT: return fc_realtime_ns();
	default:
		if (fc_gettime(clk_id[c], &ts) != 0)
			return INT64_MIN;
		return ts_ns(&ts);
	}
}

struct stat_iv {          /* one clock over one interval */
	uint64_t n, bad, back;
	int64_t err_max;      /* max |outside distance| */
	int64_t err_signed;   /* the signed outside distance of that read */
	int64_t excess_max;   /* max (error - bound); < 0: all within */
	int64_t bracket_max;
	int64_t err_last;     /* max error over the interval's last batch */
};

struct run {              /* consecutive bad reads of one clock */
	bool open;
	int64_t t0, t_last;   /* kernel MONOTONIC at the first and the last bad read */
	uint64_t reads;
	int64_t err_max;
	int64_t bound;        /* the largest bound during the run */
};

struct clockstate {
	int64_t last;         /* the library's previous value */
	bool have_last;
	struct stat_iv iv;
	struct run run;
	uint64_t runs, back_total, bad_total, n_total;
	int64_t err_max_total, excess_max_total, back_max;
	/* the kernel's own clock going backwards between two of its reads here
	 * (k1 below the previous k2): a fault of the kernel's, which the
	 * library, never going backwards, cannot follow */
	int64_t kernel_last, kernel_back_max;
	uint64_t kernel_back;
};

static void iv_reset(struct stat_iv *s)
{
	memset(s, 0, sizeof *s);
	s->excess_max = INT64_MIN;
}

static int64_t run_report_ns = 1000000;

#define MAXSTEPS 16
static int nsteps;
static double step_at[MAXSTEPS], step_delta[MAXSTEPS];

static void run_close(int c, struct clockstate *cs, int64_t t_good)
{
	struct run *r = &cs->run;
	if (!r->open)
		return;
	r->open = false;
	cs->runs++;
	if (r->err_max < run_report_ns)
		return;
	/* span: first bad read to the first read that was good again */
	printf("{\"event\":\"bad-run\",\"clock\":\"%s\",\"t\":%" PRId64 ",\"reads\":%" PRIu64
	       ",\"span_bad_ns\":%" PRId64 ",\"span_to_good_ns\":%" PRId64 ",\"err_max\":%" PRId64
	       ",\"bound\":%" PRId64 "}\n",
	       clk_name[c], r->t0, r->reads, r->t_last - r->t0, t_good == INT64_MIN ? -1 : t_good - r->t0, r->err_max,
	       r->bound);
	fflush(stdout);
}

/* The counter and a kernel clock at one moment: the tightest of 16
 * brackets "counter, kernel, counter", the counter at its midpoint.  Two
 * of these on CLOCK_MONOTONIC_RAW seconds apart give the counter's rate on
 * the kernel's raw clock, measured apart from the library (the reference a
 * verdict's wrong frequency is judged by). */
static void counter_at(clockid_t id, uint64_t *counter, int64_t *kernel)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 16; i++) {
		uint64_t c0 = fc_cycles();
		int64_t k = kns(id);
		uint64_t c1 = fc_cycles();
		if (c1 - c0 < best) {
			best = c1 - c0;
			*counter = c0 + (c1 - c0) / 2;
			*kernel = k;
		}
	}
}

static int cmd_follow(double secs, int interval_ms)
{
	struct clockstate cs[NCLK];
	memset(cs, 0, sizeof cs);
	for (int c = 0; c < NCLK; c++) {
		iv_reset(&cs[c].iv);
		cs[c].excess_max_total = INT64_MIN;
	}
	struct fc_info i0, i1, prev;
	info_or_die(&prev);
	uint64_t counter0, counter1;
	int64_t raw0, raw1;
	counter_at(CLOCK_MONOTONIC_RAW, &counter0, &raw0);
	printf("{\"event\":\"start\",\"t\":%" PRId64 ",", kns(CLOCK_MONOTONIC));
	print_info_fields(&prev);
	printf("}\n");
	fflush(stdout);
	int64_t start = kns(CLOCK_MONOTONIC), end = start + (int64_t)(secs * 1e9);
	int64_t iv_start = start, iv_len = (int64_t)interval_ms * 1000000;
	int64_t bound_min = INT64_MAX, bound_max = 0, bound_max_total = 0;
	uint64_t iters = 0, iv_iters = 0;
	int changes = 0, done_steps = 0, ksteps = 0;
	int64_t prev_lo = INT64_MIN, prev_hi = 0, prev_tm = 0;
	for (;;) {
		if (done_steps < nsteps && kns(CLOCK_MONOTONIC) >= start + (int64_t)(step_at[done_steps] * 1e9)) {
			struct timespec ts;
			int64_t m = kns(CLOCK_MONOTONIC);
			int64_t want = kns(CLOCK_REALTIME) + (int64_t)(step_delta[done_steps] * 1e9);
			ts.tv_sec = want / NS;
			ts.tv_nsec = want % NS;
			int r = (int)syscall(SYS_clock_settime, (long)CLOCK_REALTIME, &ts);
			printf("{\"event\":\"step\",\"t\":%" PRId64 ",\"delta_s\":%.3f,\"rc\":%d}\n", m,
			       step_delta[done_steps], r == 0 ? 0 : errno);
			fflush(stdout);
			done_steps++;
		}
		info_or_die(&i0);
		int64_t tm[BATCH], off_lo[BATCH], off_hi[BATCH], m2 = 0;
		int64_t e[BATCH][NCLK], w[BATCH][NCLK];
		bool last_batch = false;
		for (int b = 0; b < BATCH; b++) {
			for (int c = 0; c < NCLK; c++) {
				int64_t k1 = kns(clk_id[c]);
				if (c == C_RT) {
					/* REALTIME - MONOTONIC lies in [lo, hi] */
					int64_t mx = kns(CLOCK_MONOTONIC);
					off_lo[b] = k1 - mx;
					off_hi[b] = k1 - m2;
				}
				int64_t v = lib_read(c);
				int64_t k2 = kns(clk_id[c]);
				if (cs[c].kernel_last && k1 < cs[c].kernel_last) {
					cs[c].kernel_back++;
					if (cs[c].kernel_last - k1 > cs[c].kernel_back_max)
						cs[c].kernel_back_max = cs[c].kernel_last - k1;
				}
				cs[c].kernel_last = k2;
				if (c == C_MONO) {
					tm[b] = k1;
					m2 = k2;
				}
				e[b][c] = v < k1 ? v - k1 : v > k2 ? v - k2 : 0;
				w[b][c] = k2 - k1;
				struct clockstate *s = &cs[c];
				if (s->have_last && v < s->last) {
					s->iv.back++;
					s->back_total++;
					if (s->last - v > s->back_max)
						s->back_max = s->last - v;
				}
				s->last = v;
				s->have_last = true;
			}
		}
		info_or_die(&i1);
		int64_t bound = i0.error_bound_ns > i1.error_bound_ns ? i0.error_bound_ns : i1.error_bound_ns;
		bound_min = bound < bound_min ? bound : bound_min;
		bound_max = bound > bound_max ? bound : bound_max;
		for (int b = 0; b < BATCH; b++) {
			/* a step: the new bracket of the offset is 1 ms away from the old */
			if (prev_lo != INT64_MIN && (off_lo[b] > prev_hi + 1000000 || off_hi[b] < prev_lo - 1000000)) {
				ksteps++;
				printf("{\"event\":\"kernel-step\",\"t\":%" PRId64 ",\"delta_ns\":%" PRId64
				       ",\"gap_ns\":%" PRId64 "}\n", tm[b], off_lo[b] - prev_lo, tm[b] - prev_tm);
				fflush(stdout);
			}
			prev_lo = off_lo[b];
			prev_hi = off_hi[b];
			prev_tm = tm[b];
		}
		int64_t now = kns(CLOCK_MONOTONIC);
		if (now >= iv_start + iv_len || now >= end)
			last_batch = true;
		for (int c = 0; c < NCLK; c++) {
			struct clockstate *s = &cs[c];
			int64_t batch_err = 0;
			for (int b = 0; b < BATCH; b++) {
				int64_t a = e[b][c] < 0 ? -e[b][c] : e[b][c];
				s->iv.n++;
				s->n_total++;
				if (a > s->iv.err_max) {
					s->iv.err_max = a;
					s->iv.err_signed = e[b][c];
				}
				if (a > batch_err)
					batch_err = a;
				if (a - bound > s->iv.excess_max)
					s->iv.excess_max = a - bound;
				if (w[b][c] > s->iv.bracket_max)
					s->iv.bracket_max = w[b][c];
				if (a > bound) {
					s->iv.bad++;
					s->bad_total++;
					if (!s->run.open) {
						memset(&s->run, 0, sizeof s->run);
						s->run.open = true;
						s->run.t0 = tm[b];
					}
					s->run.t_last = tm[b];
					s->run.reads++;
					if (a > s->run.err_max)
						s->run.err_max = a;
					if (bound > s->run.bound)
						s->run.bound = bound;
				} else {
					run_close(c, s, tm[b]);
				}
			}
			if (last_batch)
				s->iv.err_last = batch_err;
		}
		iters += BATCH;
		iv_iters += BATCH;
		if (i1.source != prev.source || i1.reason != prev.reason) {
			changes++;
			printf("{\"event\":\"change\",\"t\":%" PRId64 ",\"from\":\"%s/%s\",", now,
			       fc_source_name(prev.source), fc_reason_name(prev.reason));
			print_info_fields(&i1);
			printf("}\n");
			fflush(stdout);
		}
		prev = i1;
		if (last_batch) {
			printf("{\"t\":%" PRId64 ",\"t0\":%" PRId64 ",\"iters\":%" PRIu64 ",\"source\":\"%s\",\"reason\":\"%s\""
			       ",\"bound_min\":%" PRId64 ",\"bound_max\":%" PRId64 ",\"syncs\":%" PRIu64
			       ",\"sync_interval_ns\":%" PRId64 ",\"freq_err_ppm\":%.4g",
			       now, iv_start, iv_iters, fc_source_name(i1.source), fc_reason_name(i1.reason), bound_min,
			       bound_max, i1.syncs, i1.sync_interval_ns, i1.freq_err_ppm);
			for (int c = 0; c < NCLK; c++) {
				struct stat_iv *v = &cs[c].iv;
				printf(",\"%s\":{\"err\":%" PRId64 ",\"err_signed\":%" PRId64 ",\"excess\":%" PRId64
				       ",\"err_last\":%" PRId64 ",\"bracket\":%" PRId64 ",\"bad\":%" PRIu64 ",\"back\":%" PRIu64 "}",
				       clk_name[c], v->err_max, v->err_signed, v->excess_max, v->err_last, v->bracket_max, v->bad,
				       v->back);
				if (v->err_max > cs[c].err_max_total)
					cs[c].err_max_total = v->err_max;
				if (v->excess_max > cs[c].excess_max_total)
					cs[c].excess_max_total = v->excess_max;
				iv_reset(v);
			}
			printf("}\n");
			fflush(stdout);
			if (bound_max > bound_max_total)
				bound_max_total = bound_max;
			bound_min = INT64_MAX;
			bound_max = 0;
			iv_iters = 0;
			iv_start = now;
			if (now >= end)
				break;
		}
	}
	for (int c = 0; c < NCLK; c++)
		run_close(c, &cs[c], INT64_MIN);
	struct fc_info fin;
	info_or_die(&fin);
	counter_at(CLOCK_MONOTONIC_RAW, &counter1, &raw1);
	printf("{\"summary\":true,\"secs\":%.3f,\"iters\":%" PRIu64 ",\"changes\":%d,\"kernel_steps\":%d"
	       ",\"bound_max\":%" PRId64 ",\"counter_hz_on_raw\":%.1f",
	       (kns(CLOCK_MONOTONIC) - start) / 1e9, iters, changes, ksteps, bound_max_total,
	       (double)(counter1 - counter0) * 1e9 / (double)(raw1 - raw0));
	for (int c = 0; c < NCLK; c++)
		printf(",\"%s\":{\"n\":%" PRIu64 ",\"err_max\":%" PRId64 ",\"excess_max\":%" PRId64 ",\"bad\":%" PRIu64
		       ",\"runs\":%" PRIu64 ",\"back\":%" PRIu64 ",\"back_max_ns\":%" PRId64
		       ",\"kernel_back\":%" PRIu64 ",\"kernel_back_max_ns\":%" PRId64 "}",
		       clk_name[c], cs[c].n_total, cs[c].err_max_total, cs[c].excess_max_total, cs[c].bad_total, cs[c].runs,
		       cs[c].back_total, cs[c].back_max, cs[c].kernel_back, cs[c].kernel_back_max);
	printf(",\"info\":{");
	print_info_fields(&fin);
	printf("}}\n");
	return 0;
}

/* ---- cost ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static volatile int64_t sink;

enum { K_FC, K_FCU, K_CG, K_SYS, NKIND };
static const char *const kind_name[NKIND] = { "fc_now_ns", "fc_now_ns_unordered", "clock_gettime",
	                                      "syscall" };

static double batch_ns(int kind, long n)
{
	struct timespec ts;
	int64_t acc = 0;
	int64_t t0 = kns(CLOCK_MONOTONIC);
	switch (kind) {
	case K_FC:
		for (long i = 0; i < n; i++)
			acc += fc_now_ns();
		break;
	case K_FCU:
		for (long i = 0; i < n; i++)
			acc += fc_now_ns_unordered();
		break;
	case K_CG:
		for (long i = 0; i < n; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			acc += ts.tv_nsec;
		}
		break;
	case K_SYS:
		for (long i = 0; i < n; i++) {
			syscall(SYS_clock_gettime, (long)CLOCK_MONOTONIC, &ts);
			acc += ts.tv_nsec;
		}
		break;
	}
	int64_t t1 = kns(CLOCK_MONOTONIC);
	sink = acc;
	return (double)(t1 - t0) / (double)n;
}

static int allowed_cpus(char *list, size_t len)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	list[0] = '\0';
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return -1;
	size_t o = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && o + 8 < len)
			o += (size_t)snprintf(list + o, len - o, "%s%d", o ? "," : "", c);
	return CPU_COUNT(&set);
}

static int cmd_cost(long n, int batches, double batch_ms)
{
	struct fc_info before, after;
	/* 200 ms of reads first: a library that measures the counter's
	 * frequency before it uses it has done so by then */
	for (int64_t t_end = kns(CLOCK_MONOTONIC) + 200000000; kns(CLOCK_MONOTONIC) < t_end;)
		for (int i = 0; i < 1000; i++)
			sink = fc_now_ns();
	info_or_die(&before);
	char cpus[256];
	int ncpu = allowed_cpus(cpus, sizeof cpus);
	double *r[NKIND];
	/* Every kind's batch lasts about batch_ms (at most n calls), so that
	 * the host's preemptions of the vCPU weigh on each kind alike. */
	long calls[NKIND];
	for (int k = 0; k < NKIND; k++) {
		r[k] = calloc((size_t)batches, sizeof(double));
		if (!r[k])
			return 1;
		(void)batch_ns(k, 200);  /* warm up */
		double ns = batch_ns(k, 1000);
		double want = batch_ms * 1e6 / (ns > 1 ? ns : 1);
		calls[k] = want > (double)n ? n : want < 100 ? 100 : (long)want;
	}
	for (int b = 0; b < batches; b++)
		for (int k = 0; k < NKIND; k++)
			r[k][b] = batch_ns(k, calls[k]);
	info_or_die(&after);
	double med[NKIND], lo[NKIND], hi[NKIND];
	for (int k = 0; k < NKIND; k++) {
		qsort(r[k], (size_t)batches, sizeof(double), cmp_double);
		med[k] = r[k][batches / 2];
		lo[k] = r[k][0];
		hi[k] = r[k][batches - 1];
	}
	printf("{\"cpus_allowed\":%d,\"cpus\":\"%s\",\"batches\":%d", ncpu, cpus, batches);
	for (int k = 0; k < NKIND; k++)
		printf(",\"%s\":{\"ns\":%.2f,\"min\":%.2f,\"max\":%.2f,\"calls\":%ld}", kind_name[k], med[k], lo[k], hi[k],
		       calls[k]);
	printf(",\"ratio\":%.2f,\"ratio_syscall\":%.2f,\"before\":{", med[K_CG] / med[K_FC], med[K_SYS] / med[K_FC]);
	print_info_fields(&before);
	printf("},\"after\":{");
	print_info_fields(&after);
	printf("}}\n");
	return 0;
}

/* ---- warp: backward steps across threads and CPUs ---- */

static _Atomic int64_t w_last;
static atomic_int w_stop;
static int w_use_tsc;

struct wthr {
	pthread_t th;
	int cpu;              /* -1: not pinned */
	uint64_t reads, back, self_back, migrations;
	int64_t max_back;
	int pinned_ok;
};

static inline int64_t w_read(void)
{
#if defined(__x86_64__)
	if (w_use_tsc) {
		uint32_t lo, hi;
		__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
		return (int64_t)(((uint64_t)hi << 32) | lo);
	}
#endif
	return fc_now_ns();
}

static void *warp_thread(void *p)
{
	struct wthr *t = p;
	if (t->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		t->pinned_ok = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
	}
	int64_t mine = INT64_MIN;
	int last_cpu = sched_getcpu();
	while (!atomic_load_explicit(&w_stop, memory_order_relaxed)) {
		for (int i = 0; i < 256; i++) {
			int64_t g = atomic_load_explicit(&w_last, memory_order_acquire);
			int64_t v = w_read();
			t->reads++;
			if (v < g) {
				t->back++;
				if (g - v > t->max_back)
					t->max_back = g - v;
			}
			if (v < mine)
				t->self_back++;
			mine = v;
			while (v > g && !atomic_compare_exchange_weak_explicit(&w_last, &g, v, memory_order_acq_rel,
			                                                       memory_order_acquire))
				;
		}
		int cpu = sched_getcpu();
		if (cpu != last_cpu)
			t->migrations++;
		last_cpu = cpu;
	}
	return NULL;
}

static int run_warp(double secs, int nthr, bool pin, int ncpu, int *cpus, const char *what)
{
	struct wthr *t = calloc((size_t)nthr, sizeof *t);
	if (!t)
		return 1;
	atomic_store(&w_last, INT64_MIN);
	atomic_store(&w_stop, 0);
	for (int i = 0; i < nthr; i++) {
		t[i].cpu = pin ? cpus[i % ncpu] : -1;
		if (pthread_create(&t[i].th, NULL, warp_thread, &t[i]) != 0) {
			fprintf(stderr, "fcprobe: pthread_create failed\n");
			return 1;
		}
	}
	struct timespec d = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
	nanosleep(&d, NULL);
	atomic_store(&w_stop, 1);
	uint64_t reads = 0, back = 0, self_back = 0, mig = 0;
	int64_t max_back = 0;
	printf("\"%s\":{\"threads\":[", what);
	for (int i = 0; i < nthr; i++) {
		pthread_join(t[i].th, NULL);
		printf("%s{\"cpu\":%d,\"pinned\":%d,\"reads\":%" PRIu64 ",\"back\":%" PRIu64 ",\"self_back\":%" PRIu64
		       ",\"max_back\":%" PRId64 ",\"migrations\":%" PRIu64 "}",
		       i ? "," : "", t[i].cpu, t[i].pinned_ok, t[i].reads, t[i].back, t[i].self_back, t[i].max_back,
		       t[i].migrations);
		reads += t[i].reads;
		back += t[i].back;
		self_back += t[i].self_back;
		mig += t[i].migrations;
		if (t[i].max_back > max_back)
			max_back = t[i].max_back;
	}
	printf("],\"reads\":%" PRIu64 ",\"back\":%" PRIu64 ",\"self_back\":%" PRIu64 ",\"max_back\":%" PRId64
	       ",\"migrations\":%" PRIu64 "}",
	       reads, back, self_back, max_back, mig);
	free(t);
	return 0;
}

static int cmd_warp(double secs, int nthr, bool pin)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof set, &set);
	int cpus[CPU_SETSIZE], ncpu = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpu++] = c;
	if (nthr <= 0)
		nthr = ncpu;
	struct fc_info before, after;
	info_or_die(&before);
	printf("{\"secs\":%.2f,\"pinned\":%s,\"cpus_allowed\":%d,", secs, pin ? "true" : "false", ncpu);
	w_use_tsc = 0;
	if (run_warp(secs, nthr, pin, ncpu, cpus, "fc_now_ns"))
		return 1;
	putchar(',');
	w_use_tsc = 1;
	if (run_warp(secs, nthr, pin, ncpu, cpus, "tsc"))
		return 1;
	info_or_die(&after);
	printf(",\"before\":{");
	print_info_fields(&before);
	printf("},\"after\":{");
	print_info_fields(&after);
	printf("}}\n");
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: fcprobe info | now | counter | follow SECS [-i MS] [-r NS] [-s AT:DELTA]... | cost [-n CALLS] [-b BATCHES] [-d MS] |\n"
	                "       warp SECS [-t THREADS] [--nopin]\n");
	return 1;
}

/* The value of the last "FLAG VALUE" pair of argv[from...] (the pairs are
 * read two by two, as given), or dflt. */
static const char *pair_value(int argc, char **argv, int from, const char *flag, const char *dflt)
{
	const char *v = dflt;
	for (int a = from; a + 1 < argc; a += 2)
		if (!strcmp(argv[a], flag))
			v = argv[a + 1];
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *m = argv[1];
	if (!strcmp(m, "info"))
		return cmd_info();
	if (!strcmp(m, "now")) {
		printf("%" PRId64 "\n", kns(CLOCK_MONOTONIC));
		return 0;
	}
	if (!strcmp(m, "counter")) {
		uint64_t c;
		int64_t mono;
		counter_at(CLOCK_MONOTONIC, &c, &mono);
		printf("%" PRIu64 " %" PRId64 "\n", c, mono);
		return 0;
	}
	if (!strcmp(m, "follow") && argc >= 3) {
		int iv = atoi(pair_value(argc, argv, 3, "-i", "200"));
		const char *r = pair_value(argc, argv, 3, "-r", NULL);
		if (r)
			run_report_ns = atoll(r);
		for (int a = 3; a + 1 < argc; a += 2)
			if (!strcmp(argv[a], "-s") && nsteps < MAXSTEPS &&
			    sscanf(argv[a + 1], "%lf:%lf", &step_at[nsteps], &step_delta[nsteps]) == 2)
				nsteps++;
		return cmd_follow(atof(argv[2]), iv > 0 ? iv : 200);
	}
	if (!strcmp(m, "cost")) {
		long n = atol(pair_value(argc, argv, 2, "-n", "1000000"));
		int b = atoi(pair_value(argc, argv, 2, "-b", "9"));
		double ms = atof(pair_value(argc, argv, 2, "-d", "5"));
		return cmd_cost(n > 0 ? n : 1000000, b > 0 ? b : 9, ms > 0 ? ms : 5);
	}
	if (!strcmp(m, "warp") && argc >= 3) {
		int t = 0;
		bool pin = true;
		for (int a = 3; a < argc; a++) {
			if (!strcmp(argv[a], "-t") && a + 1 < argc)
				t = atoi(argv[++a]);
			else if (!strcmp(argv[a], "--nopin"))
				pin = false;
		}
		return cmd_warp(atof(argv[2]), t, pin);
	}
	return usage();
}
