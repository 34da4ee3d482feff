/* SPDX-License-Identifier: MIT */
/*
 * benchrun.h: one bench run: a list of ways of reading the time, each
 * measured three ways on the clocksource of the moment (the cost of a call
 * in batches, clockcost.c; single calls one by one, latency.c; N threads at
 * once, scaling.c), within a budget of time or a number of calls.
 */
#ifndef CD_BENCHRUN_H
#define CD_BENCHRUN_H

#include "measure/fcratio.h"
#include "measure/latency.h"
#include "measure/measure.h"
#include "measure/scaling.h"
#include "measure/timer.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct cd_bench_way {
	const struct cd_clock_spec *spec;
	bool done;
	struct cd_clock_cost cost;
	struct cd_latency lat;
	struct cd_scaling scal;     /* measured only with threads > 1 */
	/* System CPU time over all CPU time while this thread made the call
	 * (the batches and the single calls together); < 0 when there was too
	 * little CPU time for the kernel's tick-sampled split to mean much. */
	double sys_share;
	int kernel_calls;           /* cd_kernel_path's answer, -errno when unknown */
	/* For libfastclock's calls, what the library read while measured:
	 * fc_info().source (enum fc_source), -1 unknown. */
	int fc_source;
};

struct cd_bench_params {
	double budget_s;            /* for all the ways together, when calls is 0 */
	long calls;                 /* per way; 0: by time */
	int threads;                /* > 1: also that many threads at once */
	const volatile sig_atomic_t *stop; /* set: end after the current step; may be NULL */
	/* Called before each way (may be NULL). */
	void (*progress)(void *ctx, int index, int total, const char *name);
	void *ctx;
};

struct cd_bench_run {
	int n;
	struct cd_bench_way *w;
	int done;                   /* ways measured (fewer when stopped) */
	bool interrupted;
	double elapsed_s;
	struct cd_timer timer;      /* its overhead measured again for this run */
	/* libfastclock's calls against their references, side by side (when
	 * the ways include any of the library's calls). */
	int nfc;
	struct cd_fc_ratio fc[CD_FC_RATIO_MAX];
};

/* 0, or -ENOMEM. */
int cd_bench_run_init(struct cd_bench_run *r, const struct cd_clock_spec *const *ways, int n,
                      const struct cd_timer *timer);
void cd_bench_run_free(struct cd_bench_run *r);

/* Measure every way in order; buf holds cap latency samples, reused. */
void cd_bench_measure(struct cd_bench_run *r, const struct cd_bench_params *p, uint32_t *buf, size_t cap);

/* Backward steps seen in the run, all ways together. */
long cd_bench_backward(const struct cd_bench_run *r);

#endif
