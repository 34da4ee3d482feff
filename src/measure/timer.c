/* SPDX-License-Identifier: MIT */
/*
 * timer.c: the timer of single calls (timer.h): measures the counter's
 * frequency against CLOCK_MONOTONIC_RAW, decides whether it can be trusted to
 * time calls, and measures what one timing costs.
 *
 * The frequency is measured over two intervals of about 20 ms with
 * lib/tscfreq.h (the tightest "clock, counter, clock" bracket at each end).
 * If the two disagree by more than 0.5% the counter is not steady (a counter
 * that stops, changes rate, or differs between the CPUs the thread ran on)
 * and single calls are timed by CLOCK_MONOTONIC_RAW instead, which is slower
 * but always right.
 */
#include "measure/timer.h"
#include "tscfreq.h" /* lib/tscfreq.h */
#include "util/monotime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CALIB_INTERVAL_NS 20000000L
#define CALIB_TRIES 15
#define CALIB_MAX_SPREAD 0.005
#define OVERHEAD_PAIRS 20001
/* ...or fewer, when the pairs would last longer than this: where reading the
 * counter traps into the kernel (an arm64 timer erratum's workaround), one
 * read costs tens of microseconds and 20001 pairs would take seconds.  The
 * median of a few hundred pairs is as good an overhead. */
#define OVERHEAD_MAX_NS 30e6
#define OVERHEAD_MIN_PAIRS 101

static void sleep_ns(long ns)
{
	struct timespec req = { ns / 1000000000L, ns % 1000000000L };
	while (nanosleep(&req, &req) != 0 && errno == EINTR)
		;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Back-to-back pairs of timer reads: the median pair (the overhead) and
 * the smallest nonzero one (the timer's step: some counters, e.g. the TSC of
 * recent AMD CPUs, advance in steps of many ticks). */
static void timer_pairs(const struct cd_timer *t, double *median, double *step)
{
	*median = 0;
	*step = 0;
	uint64_t *d = malloc(OVERHEAD_PAIRS * sizeof *d);
	if (!d)
		return;
	int n = 0;
	double end = cd_mono_ns() + OVERHEAD_MAX_NS;
	for (int i = 0; i < OVERHEAD_PAIRS; i++) {
		uint64_t a = cd_timer_now(t);
		uint64_t b = cd_timer_now(t);
		if (b >= a)
			d[n++] = b - a;
		if (i >= OVERHEAD_MIN_PAIRS && (i & 63) == 0 && cd_mono_ns() > end)
			break;
	}
	if (n > 0) {
		qsort(d, (size_t)n, sizeof d[0], cmp_u64);
		*median = (double)d[n / 2];
		for (int i = 0; i < n; i++)
			if (d[i] > 0) {
				*step = (double)d[i];
				break;
			}
	}
	free(d);
}

double cd_timer_overhead(const struct cd_timer *t)
{
	double median, step;
	timer_pairs(t, &median, &step);
	return median;
}

/* Why the counter cannot time calls, or NULL: t->hz and its error filled. */
static const char *calibrate(struct cd_timer *t)
{
	struct fc_counter_info info;
	fc_counter_probe(&info);
	if (info.usable != 0)
		return info.usable == -EPERM ? "reading the counter is turned off (prctl PR_SET_TSC)"
		                             : "no counter known on this CPU";
	struct fc_freq_sample s0, s1, s2;
	struct fc_freq_estimate e1, e2, all;
	if (fc_freq_sample(CLOCK_MONOTONIC_RAW, CALIB_TRIES, &s0) != 0)
		return "CLOCK_MONOTONIC_RAW cannot be read";
	sleep_ns(CALIB_INTERVAL_NS);
	fc_freq_sample(CLOCK_MONOTONIC_RAW, CALIB_TRIES, &s1);
	sleep_ns(CALIB_INTERVAL_NS);
	fc_freq_sample(CLOCK_MONOTONIC_RAW, CALIB_TRIES, &s2);
	if (fc_freq_between(&s0, &s1, &e1) != 0 || fc_freq_between(&s1, &s2, &e2) != 0 ||
	    fc_freq_between(&s0, &s2, &all) != 0)
		return "the counter did not advance";
	t->hz = all.hz;
	t->hz_err_ppm = all.err_ppm;
	t->hz_spread = e1.hz > e2.hz ? (e1.hz - e2.hz) / e2.hz : (e2.hz - e1.hz) / e1.hz;
	if (t->hz_spread > CALIB_MAX_SPREAD)
		return "the counter's rate was not steady";
	return NULL;
}

void cd_timer_init(struct cd_timer *t)
{
	memset(t, 0, sizeof *t);
	t->name = "CLOCK_MONOTONIC_RAW";
	t->ns_per_tick = 1;
	t->why_not = calibrate(t);
	if (!t->why_not) {
		t->counter = true;
		t->name = CD_COUNTER_ORDERED_NAME;
		t->ns_per_tick = 1e9 / t->hz;
	}
	double step;
	timer_pairs(t, &t->overhead_ticks, &step);
	t->overhead_ns = t->overhead_ticks * t->ns_per_tick;
	t->step_ns = step * t->ns_per_tick;
}
