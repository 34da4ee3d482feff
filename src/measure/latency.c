/* SPDX-License-Identifier: MIT */
/*
 * latency.c: single calls timed back to back (latency.h).
 *
 * One loop per kind of call, written out by a macro, so that the code between
 * the two timer readings is the call and nothing else (no switch, no
 * function pointer).  Every reading's value is kept to find the smallest
 * step and any step backwards; the deadline is checked every 16 calls (a
 * compare between two calls, outside what is timed), so that a call that
 * costs milliseconds, a trapped counter's, still ends in time.
 */
#include "measure/latency.h"

#include "fastclock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct loop {
	const struct cd_timer *tm;
	uint32_t *buf;
	size_t n, cap;
	uint64_t deadline;
	const volatile sig_atomic_t *stop;
	long glitches;
	bool have_prev;
	int64_t prev, min_step, back_max;
	long backward;
};

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* Keep one sample; false when the loop must end. */
static inline bool record(struct loop *l, uint64_t a, uint64_t b, int64_t v)
{
	if (b >= a)
		l->buf[l->n++] = b - a > UINT32_MAX ? UINT32_MAX : (uint32_t)(b - a);
	else
		l->glitches++;
	if (l->have_prev) {
		int64_t d = v - l->prev;
		if (d < 0) {
			l->backward++;
			if (-d > l->back_max)
				l->back_max = -d;
		} else if (d > 0 && (l->min_step < 0 || d < l->min_step)) {
			l->min_step = d;
		}
	}
	l->prev = v;
	l->have_prev = true;
	if (l->n >= l->cap)
		return false;
	if (((l->n + (size_t)l->glitches) & 15) == 0)
		return b < l->deadline && !(l->stop && *l->stop);
	return true;
}

#define LAT_LOOP(CALL, VALUE) \
	for (;;) { \
		uint64_t a_ = cd_timer_now(l->tm); \
		CALL; \
		uint64_t b_ = cd_timer_now(l->tm); \
		if (!record(l, a_, b_, (VALUE))) \
			break; \
	}


static void fastclock_loop(int which, struct loop *l)
{
	struct timespec ts = { 0, 0 };
	int64_t v = 0;
	switch (which) {
	case CD_FC_NOW:
		LAT_LOOP(v = fc_now_ns(), v);
		break;
	case CD_FC_NOW_UNORDERED:
		LAT_LOOP(v = fc_now_ns_unordered(), v);
		break;
	case CD_FC_REALTIME:
		LAT_LOOP(v = fc_realtime_ns(), v);
		break;
	case CD_FC_GETTIME_MONO:
		LAT_LOOP(fc_gettime(CLOCK_MONOTONIC, &ts), ts_ns(&ts));
		break;
	case CD_FC_CYCLES:
		LAT_LOOP(v = (int64_t)fc_cycles(), v);
		break;
	default:
		LAT_LOOP(v = fc_coarse_ns(), v);
		break;
	}
}

static void run_loop(const struct cd_clock_spec *spec, struct loop *l)
{
	struct timespec ts = { 0, 0 };
	struct timeval tv = { 0, 0 };
	clockid_t id = spec->clockid;
	switch (spec->kind) {
	case CD_CALL_CLOCK_GETTIME:
		LAT_LOOP(clock_gettime(id, &ts), ts_ns(&ts));
		break;
	case CD_CALL_SYSCALL_CLOCK_GETTIME:
		LAT_LOOP(syscall(SYS_clock_gettime, id, &ts), ts_ns(&ts));
		break;
	case CD_CALL_GETTIMEOFDAY:
		LAT_LOOP(gettimeofday(&tv, NULL), (int64_t)tv.tv_sec * 1000000000 + tv.tv_usec * 1000);
		break;
	case CD_CALL_SYSCALL_GETTIMEOFDAY:
		LAT_LOOP(syscall(SYS_gettimeofday, &tv, NULL), (int64_t)tv.tv_sec * 1000000000 + tv.tv_usec * 1000);
		break;
	case CD_CALL_TIME: {
		time_t t = 0;
		LAT_LOOP(t = time(NULL), (int64_t)t * 1000000000);
		break;
	}
	case CD_CALL_SYSCALL_TIME: {
		long t = 0;
		LAT_LOOP(t = cd_time_syscall(), (int64_t)t * 1000000000);
		break;
	}
	case CD_CALL_COUNTER: {
		uint64_t c = 0;
		if (spec->clockid == 0) {
			LAT_LOOP(c = cd_counter_read0(), (int64_t)c);
		} else if (spec->clockid == 1) {
			LAT_LOOP(c = cd_counter_read1(), (int64_t)c);
		} else {
			LAT_LOOP(c = cd_counter_read2(), (int64_t)c);
		}
		break;
	}
	case CD_CALL_FASTCLOCK:
		fastclock_loop(spec->clockid, l);
		break;
	}
}

/* LSD radix sort, 8 bits a pass: a million samples sort in a few ms, where
 * qsort takes a tenth of a second, which a run of 25 ways would feel.
 * Falls back to qsort when there is no memory for the scratch copy. */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static void sort_u32(uint32_t *v, size_t n)
{
	uint32_t *tmp = malloc(n * sizeof *tmp);
	if (!tmp) {
		qsort(v, n, sizeof v[0], cmp_u32);
		return;
	}
	uint32_t *src = v, *dst = tmp;
	for (int shift = 0; shift < 32; shift += 8) {
		size_t count[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[((src[i] >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xff]++] = src[i];
		uint32_t *t = src;
		src = dst;
		dst = t;
	}
	/* Four passes: the result is back in v. */
	free(tmp);
}

static double to_ns(uint32_t ticks, double overhead, double ns_per_tick)
{
	double t = (double)ticks - overhead;
	return t > 0 ? t * ns_per_tick : 0;
}

void cd_latency_summarize(uint32_t *ticks, size_t n, double overhead_ticks, double ns_per_tick,
                          struct cd_latency *out)
{
	memset(&out->hist, 0, sizeof out->hist);
	out->samples = (long)n;
	if (n == 0)
		return;
	sort_u32(ticks, n);
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		double ns = to_ns(ticks[i], overhead_ticks, ns_per_tick);
		sum += ns;
		cd_hist_add(&out->hist, (uint64_t)llround(ns));
	}
	out->mean_ns = sum / (double)n;
	out->min_ns = to_ns(ticks[0], overhead_ticks, ns_per_tick);
	out->p50_ns = to_ns(cd_percentile_u32(ticks, n, 50), overhead_ticks, ns_per_tick);
	out->p99_ns = to_ns(cd_percentile_u32(ticks, n, 99), overhead_ticks, ns_per_tick);
	out->p999_ns = to_ns(cd_percentile_u32(ticks, n, 99.9), overhead_ticks, ns_per_tick);
	out->max_ns = to_ns(ticks[n - 1], overhead_ticks, ns_per_tick);
	out->measured = true;
}

/* What the interface promises: clock_getres for clock ids, the unit of
 * gettimeofday and time, one tick of the counter. */
static void promised_resolution(const struct cd_clock_spec *spec, const struct cd_timer *tm,
                                struct cd_latency *out)
{
	struct timespec res;
	out->res_ns = -1;
	switch (spec->kind) {
	case CD_CALL_CLOCK_GETTIME:
	case CD_CALL_SYSCALL_CLOCK_GETTIME:
		out->res_source = "clock_getres";
		if (clock_getres(spec->clockid, &res) == 0)
			out->res_ns = (double)ts_ns(&res);
		break;
	case CD_CALL_GETTIMEOFDAY:
	case CD_CALL_SYSCALL_GETTIMEOFDAY:
		out->res_source = "interface";
		out->res_ns = 1000;
		break;
	case CD_CALL_TIME:
	case CD_CALL_SYSCALL_TIME:
		out->res_source = "interface";
		out->res_ns = 1e9;
		break;
	case CD_CALL_COUNTER:
		out->res_source = "counter";
		if (tm->hz > 0)
			out->res_ns = 1e9 / tm->hz;
		break;
	case CD_CALL_FASTCLOCK:
		/* The library's values are nanoseconds; fc_cycles is the
		 * counter; the coarse clock is the kernel's tick. */
		if (spec->clockid == CD_FC_CYCLES) {
			out->res_source = "counter";
			if (tm->hz > 0)
				out->res_ns = 1e9 / tm->hz;
		} else if (spec->clockid == CD_FC_COARSE) {
			out->res_source = "clock_getres";
			if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0)
				out->res_ns = (double)ts_ns(&res);
		} else {
			out->res_source = "interface";
			out->res_ns = 1;
		}
		break;
	}
}

void cd_latency_measure(const struct cd_clock_spec *spec, const struct cd_latency_params *p,
                        struct cd_latency *out)
{
	memset(out, 0, sizeof *out);
	promised_resolution(spec, p->timer, out);
	out->step_ns = -1;
	if (!p->buf || p->cap == 0)
		return;
	struct loop l = { .tm = p->timer, .buf = p->buf, .cap = p->cap, .stop = p->stop, .min_step = -1 };
	if (p->max_calls > 0 && (size_t)p->max_calls < l.cap)
		l.cap = (size_t)p->max_calls;
	l.deadline = cd_timer_now(p->timer) + (uint64_t)(p->budget_s * 1e9 / p->timer->ns_per_tick);
	run_loop(spec, &l);

	/* Steps of the counter are in its ticks; of everything else in ns. */
	double unit = 1;
	if (spec->kind == CD_CALL_COUNTER || (spec->kind == CD_CALL_FASTCLOCK && spec->clockid == CD_FC_CYCLES))
		unit = p->timer->hz > 0 ? 1e9 / p->timer->hz : 0;
	out->glitches = l.glitches;
	out->backward = l.backward;
	out->backward_max_ns = (double)l.back_max * unit;
	out->step_ns = l.min_step < 0 ? -1 : (double)l.min_step * unit;
	cd_latency_summarize(p->buf, l.n, p->timer->overhead_ticks, p->timer->ns_per_tick, out);
}
