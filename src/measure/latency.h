/* SPDX-License-Identifier: MIT */
/*
 * latency.h: what single calls cost, one by one: the distribution with its
 * percentiles and log2 histogram, the resolution actually seen, and whether
 * the clock ever went backwards.
 *
 * Batches (clockcost.c) give the cost of a call on average; timing each call
 * alone shows the tail: the call that took 20 us because an interrupt or a
 * device read came in between.  Each call is framed by two timer readings
 * (counter.h) and the timer's own cost, measured, is subtracted.
 */
#ifndef CD_LATENCY_H
#define CD_LATENCY_H

#include "measure/timer.h"
#include "measure/histogram.h"
#include "measure/measure.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cd_latency {
	bool measured;
	long samples;           /* calls timed one by one */
	long glitches;          /* timer readings that went backwards: dropped */
	double min_ns, p50_ns, p99_ns, p999_ns, max_ns, mean_ns;
	struct cd_hist hist;    /* integer ns, overhead subtracted */
	/* Resolution: what the interface or clock_getres promises, and the
	 * smallest nonzero step seen between consecutive reads (< 0: none). */
	const char *res_source; /* "clock_getres", "interface" or "counter" */
	double res_ns;          /* < 0 unknown */
	double step_ns;
	/* Consecutive reads that went backwards (must be 0 for every clock of
	 * the kernel), and the largest such step. */
	long backward;
	double backward_max_ns;
};

struct cd_latency_params {
	const struct cd_timer *timer;
	double budget_s;        /* wall time to spend */
	long max_calls;         /* 0: as many as fit the budget and the buffer */
	uint32_t *buf;          /* room for the samples, in timer ticks */
	size_t cap;
	const volatile sig_atomic_t *stop; /* ends the loop early when set; may be NULL */
};

void cd_latency_measure(const struct cd_clock_spec *spec, const struct cd_latency_params *p,
                        struct cd_latency *out);

/* From raw samples in timer ticks (sorted in place): percentiles and
 * histogram in ns after subtracting overhead_ticks (a sample below it counts
 * as 0).  Apart so that it can be tested on known data. */
void cd_latency_summarize(uint32_t *ticks, size_t n, double overhead_ticks, double ns_per_tick,
                          struct cd_latency *out);

#endif
