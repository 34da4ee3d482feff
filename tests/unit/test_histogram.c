/* SPDX-License-Identifier: MIT */
/* Unit tests of the log2 histogram (bucket edges as bcc's bpf_log2l; the
 * printed layout: test_histprint.c) and of nearest-rank percentiles on known
 * data; and of cd_latency_summarize, which turns timer ticks into ns with
 * the timer's overhead subtracted. */
#include "measure/histogram.h"
#include "measure/latency.h"
#include "unit.h"

#include <stdlib.h>

static void test_buckets(void)
{
	CHECK_INT(cd_hist_bucket(0), 1);
	CHECK_INT(cd_hist_bucket(1), 1);
	CHECK_INT(cd_hist_bucket(2), 2);
	CHECK_INT(cd_hist_bucket(3), 2);
	CHECK_INT(cd_hist_bucket(4), 3);
	CHECK_INT(cd_hist_bucket(7), 3);
	CHECK_INT(cd_hist_bucket(8), 4);
	CHECK_INT(cd_hist_bucket(1023), 10);
	CHECK_INT(cd_hist_bucket(1024), 11);
	CHECK_INT(cd_hist_bucket((uint64_t)1 << 32), 33);
	CHECK_INT(cd_hist_bucket(UINT64_MAX), 64);
	/* Every value lies within its bucket's printed bounds, at each edge. */
	for (int i = 1; i < 64; i++) {
		uint64_t lo, hi, edge = (uint64_t)1 << i;
		cd_hist_bounds(cd_hist_bucket(edge), &lo, &hi);
		CHECK(lo <= edge && edge <= hi);
		cd_hist_bounds(cd_hist_bucket(edge - 1), &lo, &hi);
		CHECK(lo <= edge - 1 && edge - 1 <= hi);
	}
	uint64_t lo, hi;
	cd_hist_bounds(1, &lo, &hi);
	CHECK_INT(lo, 0);
	CHECK_INT(hi, 1);
	cd_hist_bounds(2, &lo, &hi);
	CHECK_INT(lo, 2);
	CHECK_INT(hi, 3);
	cd_hist_bounds(5, &lo, &hi);
	CHECK_INT(lo, 16);
	CHECK_INT(hi, 31);
	cd_hist_bounds(64, &lo, &hi);
	CHECK(lo == (uint64_t)1 << 63 && hi == UINT64_MAX);
}

static void test_percentiles(void)
{
	uint32_t v[1000];
	for (int i = 0; i < 100; i++)
		v[i] = (uint32_t)(i + 1); /* 1..100 */
	CHECK_INT(cd_percentile_u32(v, 100, 50), 50);
	CHECK_INT(cd_percentile_u32(v, 100, 99), 99);
	CHECK_INT(cd_percentile_u32(v, 100, 99.9), 100);
	CHECK_INT(cd_percentile_u32(v, 100, 100), 100);
	CHECK_INT(cd_percentile_u32(v, 100, 1), 1);
	CHECK_INT(cd_percentile_u32(v, 1, 50), 1);
	CHECK_INT(cd_percentile_u32(v, 1, 99.9), 1);
	CHECK_INT(cd_percentile_u32(v, 0, 50), 0);
	for (int i = 0; i < 1000; i++)
		v[i] = (uint32_t)(i + 1); /* 1..1000: 99.9% is exactly the 999th */
	CHECK_INT(cd_percentile_u32(v, 1000, 99.9), 999);
	CHECK_INT(cd_percentile_u32(v, 1000, 99), 990);
	CHECK_INT(cd_percentile_u32(v, 1000, 50), 500);
	CHECK_INT(cd_percentile_u32(v, 3, 50), 2);
}

/* Samples in ticks of 0.5 ns, 10 ticks of overhead: percentiles in ns. */
static void test_summarize(void)
{
	enum { N = 10000 };
	uint32_t *t = malloc(N * sizeof *t);
	/* Shuffled 10..10009 ticks: summarize must sort. */
	for (int i = 0; i < N; i++)
		t[i] = (uint32_t)(10 + (i * 7919) % N);
	struct cd_latency l;
	memset(&l, 0, sizeof l);
	cd_latency_summarize(t, N, 10, 0.5, &l);
	CHECK(l.measured);
	CHECK_INT(l.samples, N);
	CHECK_INT((long)l.min_ns, 0);               /* 10 ticks - 10 overhead */
	CHECK_INT((long)(l.p50_ns * 2), 4999);      /* 5000th sample, 5009 ticks */
	CHECK_INT((long)(l.p99_ns * 2), 9899);
	CHECK_INT((long)(l.p999_ns * 2), 9989);
	CHECK_INT((long)(l.max_ns * 2), 9999);
	CHECK_INT((long)l.hist.total, N);
	CHECK(t[0] <= t[1] && t[N - 2] <= t[N - 1]);
	/* A sample below the overhead counts as 0, never negative. */
	uint32_t small[3] = { 3, 5, 40 };
	cd_latency_summarize(small, 3, 10, 1, &l);
	CHECK(l.min_ns == 0 && l.p50_ns == 0);
	CHECK_INT((long)l.max_ns, 30);
	CHECK_INT((long)l.hist.count[1], 2);
	free(t);
}

int main(void)
{
	test_buckets();
	test_percentiles();
	test_summarize();
	return unit_done("histogram");
}
