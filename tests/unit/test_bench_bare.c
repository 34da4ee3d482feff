/* SPDX-License-Identifier: MIT */
/* bench against a bare, hand-written loop of clock_gettime(CLOCK_MONOTONIC),
 * the way hand-made tests measure (20 million calls, wall clock, average).  The
 * figures are printed, never asserted: the machine is shared and noisy, and a
 * benchmark must not fail a test for being slow.  What is asserted cannot
 * depend on speed: the numbers exist, and no clock of the kernel went
 * backwards.  Typical line on the development machine (tsc, KVM guest):
 *
 *   bench-vs-bare: CLOCK_MONOTONIC bare loop 23.3 ns, bench 23.4 ns (+0.4%);
 *   .../syscall 250 ns (x10.7); CLOCK_MONOTONIC_COARSE 4.6 ns; backward 0
 */
#include "measure/benchrun.h"
#include "measure/ways.h"
#include "unit.h"

#include <stdlib.h>
#include <time.h>

#define BARE_CALLS 4000000L
#define BARE_LOOPS 5

static volatile long sink;

static double wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* What a person would write: call it in a loop, divide the time. */
static double bare_loop(void)
{
	struct timespec ts;
	long acc = 0;
	double t0 = wall_ns();
	for (long i = 0; i < BARE_CALLS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		acc += ts.tv_nsec;
	}
	double t1 = wall_ns();
	sink = acc;
	return (t1 - t0) / BARE_CALLS;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The run's backward steps add up over the ways measured, and only those. */
static void test_backward_sum(void)
{
	const struct cd_clock_spec *ways[3];
	char err[256];
	struct cd_timer timer = { .ns_per_tick = 1 };
	CHECK_INT(cd_ways_parse("realtime,monotonic,time", ways, 3, err, sizeof err), 3);
	struct cd_bench_run r;
	CHECK_INT(cd_bench_run_init(&r, ways, 3, &timer), 0);
	r.w[0].lat.backward = 2;
	r.w[2].lat.backward = 5;
	r.done = 2;
	CHECK_INT(cd_bench_backward(&r), 2);
	r.done = 3;
	CHECK_INT(cd_bench_backward(&r), 7);
	cd_bench_run_free(&r);
}

int main(void)
{
	test_backward_sum();

	const struct cd_clock_spec *ways[3];
	char err[256];
	CHECK_INT(cd_ways_parse("monotonic,monotonic_coarse,monotonic/syscall", ways, 3, err, sizeof err), 3);
	struct cd_timer timer;
	cd_timer_init(&timer);
	CHECK(timer.overhead_ns >= 0);
	CHECK(timer.ns_per_tick > 0);

	/* Interleave the bare loops with the bench's runs, so that both see the
	 * same machine. */
	double bare[BARE_LOOPS], bench[BARE_LOOPS], coarse = 0, sys = 0;
	long back = 0;
	uint32_t *buf = malloc((1u << 18) * sizeof *buf);
	for (int i = 0; i < BARE_LOOPS; i++) {
		bare[i] = bare_loop();
		struct cd_bench_run r;
		CHECK_INT(cd_bench_run_init(&r, ways, 3, &timer), 0);
		struct cd_bench_params p = { .budget_s = 0.3, .threads = 1 };
		cd_bench_measure(&r, &p, buf, 1u << 18);
		CHECK_INT(r.done, 3);
		for (int k = 0; k < 3; k++)
			CHECK(r.w[k].cost.measured && r.w[k].cost.ns_per_call > 0 && r.w[k].lat.samples > 0);
		bench[i] = r.w[0].cost.ns_per_call;
		coarse = r.w[1].cost.ns_per_call;
		sys = r.w[2].cost.ns_per_call;
		back += cd_bench_backward(&r);
		CHECK(!r.w[0].cost.syscall || r.w[0].cost.ratio > 0); /* a verdict exists */
		CHECK(r.w[2].cost.syscall);                          /* forced: by construction */
		cd_bench_run_free(&r);
	}
	free(buf);
	CHECK_INT(back, 0);
	qsort(bare, BARE_LOOPS, sizeof bare[0], cmp);
	qsort(bench, BARE_LOOPS, sizeof bench[0], cmp);
	double b = bare[BARE_LOOPS / 2], m = bench[BARE_LOOPS / 2];
	printf("bench-vs-bare: CLOCK_MONOTONIC bare loop %.1f ns, bench %.1f ns (%+.1f%%);\n"
	       "bench-vs-bare: CLOCK_MONOTONIC/syscall %.1f ns (x%.1f the vDSO), "
	       "CLOCK_MONOTONIC_COARSE %.1f ns; backward steps %ld\n",
	       b, m, (m - b) / b * 100, sys, sys / m, coarse, back);
	return unit_done("bench_bare");
}
