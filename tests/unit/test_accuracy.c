/* SPDX-License-Identifier: MIT */
/* Unit tests of `clockdoctor accuracy`'s statistics (measure/accstats.c) on
 * known readings: the histogram and its percentiles, the counting of one
 * bracketed reading (kept or wide, over 1 us and 10 us, beyond the bound
 * with and without the bracket), merging threads, the cut, and the
 * frequency error in ppm. */
#include "measure/accuracy.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>

static struct cd_acc_stats *new_stats(void)
{
	struct cd_acc_stats *s = calloc(1, sizeof *s);
	if (!s) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return s;
}

/* The statistics of readings { kernel before, library, kernel after }, all
 * with that cut and bound. */
static struct cd_acc_stats *stats_of(const struct cd_acc_sample *r, size_t n, int64_t cut, int64_t bound)
{
	struct cd_acc_stats *s = new_stats();
	for (size_t i = 0; i < n; i++)
		cd_acc_add(s, &r[i], cut, bound);
	return s;
}

static void test_percentiles(void)
{
	struct cd_acc_hist *h = calloc(1, sizeof *h);
	bool exact;
	CHECK_INT(cd_acc_hist_percentile(h, 50, &exact), 0);
	CHECK(exact);
	/* 1..1000: nearest rank. */
	for (uint64_t v = 1; v <= 1000; v++)
		cd_acc_hist_add(h, v);
	CHECK_INT(h->n, 1000);
	CHECK_INT(cd_acc_hist_percentile(h, 50, &exact), 500);
	CHECK(exact);
	CHECK_INT(cd_acc_hist_percentile(h, 99, NULL), 990);
	CHECK_INT(cd_acc_hist_percentile(h, 99.9, NULL), 999);
	CHECK_INT(cd_acc_hist_percentile(h, 100, NULL), 1000);
	CHECK_INT(cd_acc_hist_percentile(h, 0.01, NULL), 1);
	/* A value past the linear range: its power-of-two bin's upper edge. */
	cd_acc_hist_add(h, 20000); /* in [16384, 32768) */
	CHECK_INT(cd_acc_hist_percentile(h, 100, &exact), 32767);
	CHECK(!exact);
	CHECK_INT(cd_acc_hist_percentile(h, 50, &exact), 501);
	CHECK(exact);
	/* The last edge of the linear range, and a huge value in the last bin. */
	struct cd_acc_hist *g = calloc(1, sizeof *g);
	cd_acc_hist_add(g, CD_ACC_LINEAR_NS - 1);
	cd_acc_hist_add(g, UINT64_MAX);
	CHECK_INT(cd_acc_hist_percentile(g, 50, &exact), CD_ACC_LINEAR_NS - 1);
	CHECK(exact);
	CHECK_INT(g->log2[CD_ACC_LOG_BINS - 1], 1);
	/* Merging is adding. */
	cd_acc_hist_merge(g, h);
	CHECK_INT(g->n, 1003);
	CHECK_INT(g->lin[500], 1);
	free(h);
	free(g);
}

static void test_add(void)
{
	static const struct cd_acc_sample r[] = {
		/* Error exactly 0: f in the middle of a 40 ns bracket. */
		{ 1000, 1020, 1040 },
		/* Error +5.5: midpoint 1020, f 1025.5 cannot be; use f 1026,
		 * bracket 1001..1040 (midpoint 1020.5). */
		{ 1001, 1026, 1040 },
		/* Error -1500 ns: over 1 us, and beyond a bound of 100 even with
		 * the bracket's 20 ns. */
		{ 5000, 3520, 5040 },
		/* A wide bracket (200 > cut 80): left out of the figures; f
		 * inside it. */
		{ 9000, 9190, 9200 },
		/* A wide bracket whose f is beyond the bound all the same. */
		{ 20000, 20400, 20200 },
	};
	struct cd_acc_stats *s = stats_of(r, UNIT_COUNT(r), 80, 100);
	struct cd_acc_summary sum;
	CHECK_INT(s->reads, 5);
	CHECK_INT(s->kept, 3);
	CHECK_INT(s->wide, 2);
	CHECK_INT(s->max_abs2, 3000);
	CHECK_INT(s->sum2, 0 + 11 - 3000);
	CHECK_INT(s->sum_abs2, 0 + 11 + 3000);
	CHECK_INT(s->over_1us, 1);
	CHECK_INT(s->over_10us, 0);
	/* 3520 < 5000 - 100 by 1380; 20400 > 20200 + 100 by 100. */
	CHECK_INT(s->over_bound, 2);
	CHECK_INT(s->worst_excess_ns, 1380);
	CHECK_INT(s->over_bound_naive, 1);
	CHECK_INT(s->bracket_hist.n, 5);
	/* The worst kept reading and the first beyond the bound, kept whole. */
	CHECK(s->has_worst && s->worst.k1 == 5000 && s->worst.f == 3520 && s->worst_bound_ns == 100);
	CHECK(s->has_first_over && s->first_over.k1 == 5000);
	cd_acc_summarize(s, &sum);
	CHECK(sum.max_abs_ns == 1500);
	CHECK(fabs(sum.mean_ns - (-2989.0 / 2 / 3)) < 1e-9);
	CHECK(fabs(sum.mean_abs_ns - (3011.0 / 2 / 3)) < 1e-9);
	/* |err| rounded half up: 0, 6 (5.5), 1500. */
	CHECK(sum.median_ns == 6);
	CHECK(sum.p99_ns == 1500 && sum.p999_ns == 1500);
	CHECK(sum.percentiles_exact);
	CHECK(fabs(sum.share_1us - 1.0 / 3) < 1e-12);
	CHECK(sum.share_10us == 0);
	/* Brackets 40, 39, 40, 200, 200: the median is 40. */
	CHECK(sum.bracket_median_ns == 40);
	CHECK(fabs(sum.wide_share - 0.4) < 1e-12);
	free(s);
}

static void test_thresholds(void)
{
	struct cd_acc_stats *s = new_stats();
	/* Exactly 1 us is not over it; 1000.5 is. */
	cd_acc_add(s, &(struct cd_acc_sample){ 0, 1010, 20 }, 40, 1000000);
	cd_acc_add(s, &(struct cd_acc_sample){ 0, 1011, 21 }, 40, 1000000);
	/* Exactly 10 us is not over it; 10.001 us is. */
	cd_acc_add(s, &(struct cd_acc_sample){ 100000, 90010, 100020 }, 40, 1000000);
	cd_acc_add(s, &(struct cd_acc_sample){ 100000, 90009, 100020 }, 40, 1000000);
	CHECK_INT(s->over_1us, 3);
	CHECK_INT(s->over_10us, 1);
	CHECK_INT(s->over_bound, 0);
	/* Bound 0 (the kernel fallback): inside the bracket is within it. */
	cd_acc_add(s, &(struct cd_acc_sample){ 500, 500, 520 }, 40, 0);
	cd_acc_add(s, &(struct cd_acc_sample){ 500, 521, 520 }, 40, 0);
	CHECK_INT(s->over_bound, 1);
	CHECK_INT(s->worst_excess_ns, 1);
	/* A kernel clock that went backwards in the bracket counts as wide,
	 * and proves nothing against the library. */
	cd_acc_add(s, &(struct cd_acc_sample){ 600, 700, 590 }, 40, 0);
	CHECK_INT(s->wide, 1);
	CHECK_INT(s->over_bound, 1);
	/* A negative bound is taken as 0, a huge one is clamped: no overflow. */
	cd_acc_add(s, &(struct cd_acc_sample){ 0, 10, 20 }, 40, -5);
	cd_acc_add(s, &(struct cd_acc_sample){ 0, 10, 20 }, 40, INT64_MAX);
	CHECK_INT(s->over_bound, 1);
	/* Merging two threads' figures. */
	struct cd_acc_stats *t = new_stats();
	cd_acc_add(t, &(struct cd_acc_sample){ 0, 20000, 20 }, 40, 100);
	cd_acc_merge(t, s);
	CHECK_INT(t->reads, s->reads + 1);
	CHECK_INT(t->over_10us, 2);
	CHECK_INT(t->over_bound, 2);
	CHECK_INT(t->worst_excess_ns, 20000 - 20 - 100);
	CHECK_INT(t->max_abs2, 2 * 20000 - 20);
	CHECK_INT(t->abs_hist.n, t->kept);
	/* Merged: the worst of both, and the earlier first-over (k1 500 in s,
	 * 0 in t). */
	CHECK(t->worst.f == 20000);
	CHECK(t->has_first_over && t->first_over.k1 == 0 && t->first_over.f == 20000);
	struct cd_acc_stats *u = new_stats();
	CHECK(!u->has_worst && !u->has_first_over);
	cd_acc_merge(u, s);
	CHECK(u->has_first_over && u->first_over.k1 == 500 && u->first_over.f == 521);
	free(u);
	free(s);
	free(t);
}

/* A percentile past the linear range is its bin's upper edge, but never
 * more than the largest value seen. */
static void test_inexact_clamped(void)
{
	static const struct cd_acc_sample r[] = { { 0, 20010, 20 }, { 0, 10, 20 } };
	struct cd_acc_stats *s = stats_of(r, UNIT_COUNT(r), 40, 0);
	struct cd_acc_summary sum;
	cd_acc_summarize(s, &sum);
	CHECK(!sum.percentiles_exact);
	CHECK(sum.max_abs_ns == 20000);
	CHECK(sum.p99_ns == 20000 && sum.p999_ns == 20000);
	CHECK(sum.median_ns == 0);
	free(s);
}

static void test_empty_and_cut(void)
{
	struct cd_acc_stats *s = new_stats();
	struct cd_acc_summary sum;
	cd_acc_summarize(s, &sum);
	CHECK(isnan(sum.max_abs_ns) && isnan(sum.median_ns) && isnan(sum.share_1us));
	/* Only wide readings: the error figures stay unknown. */
	cd_acc_add(s, &(struct cd_acc_sample){ 0, 50, 100 }, 40, 100);
	cd_acc_summarize(s, &sum);
	CHECK(isnan(sum.mean_ns));
	CHECK(sum.bracket_median_ns == 100 && sum.wide_share == 1);
	CHECK_INT(cd_acc_cut(40), 80);
	CHECK_INT(cd_acc_cut(5), 20);
	CHECK_INT(cd_acc_cut(0), 20);
	CHECK_INT(cd_acc_cut(1500), 3000);
	free(s);
}

static void test_ppm(void)
{
	struct cd_acc_point a = { 0 }, b = { 0 };
	double err;
	CHECK(isnan(cd_acc_ppm(&a, &b, &err)) && isnan(err));
	/* The narrower bracket wins. */
	cd_acc_point_offer(&a, &(struct cd_acc_sample){ 0, 30, 60 });
	cd_acc_point_offer(&a, &(struct cd_acc_sample){ 1000000000, 1000000020, 1000000040 });
	cd_acc_point_offer(&a, &(struct cd_acc_sample){ 5, 100, 2 }); /* backwards: ignored */
	CHECK_INT(a.s.k1, 1000000000);
	/* 10 s later the library has gained 10 us on the kernel: +1 ppm. */
	cd_acc_point_offer(&b, &(struct cd_acc_sample){ 11000000000LL, 11000010020LL, 11000000040LL });
	double ppm = cd_acc_ppm(&a, &b, &err);
	CHECK(fabs(ppm - 1.0) < 1e-9);
	/* Uncertainty: half-widths 20 + 20 over 10 s = 0.004 ppm. */
	CHECK(fabs(err - 0.004) < 1e-12);
	/* Slower by 0.5 ppm, on the wall clock's scale (large values). */
	struct cd_acc_point c = { 0 }, d = { 0 };
	int64_t base = 1700000000000000000LL;
	cd_acc_point_offer(&c, &(struct cd_acc_sample){ base, base + 10, base + 20 });
	cd_acc_point_offer(&d, &(struct cd_acc_sample){ base + 60000000000LL, base + 60000000000LL + 10 - 30000,
	                                               base + 60000000000LL + 20 });
	CHECK(fabs(cd_acc_ppm(&c, &d, &err) + 0.5) < 1e-6);
	/* Out of order: no figure. */
	CHECK(isnan(cd_acc_ppm(&d, &c, &err)));
}

/* The run in slices: each reading by its k1, wide brackets left out of the
 * extremes but not of the bound, the last slice taking what lies beyond. */
static void test_slices(void)
{
	struct cd_acc_slice sl[CD_ACC_SLICES];
	memset(sl, 0, sizeof sl);
	const struct cd_acc_sample s[] = {
		{ 1000, 1015, 1020 },        /* slice 0: err +5 */
		{ 1100, 1090, 1120 },        /* slice 0: err -20 */
		{ 2000, 2000, 2600 },        /* slice 1: a wide bracket */
		{ 999000, 999010, 999020 },  /* beyond the run: the last slice */
	};
	cd_acc_slices_add(sl, s, 4, 1000, 1000, 100, 250);
	CHECK_INT(sl[0].kept, 2);
	CHECK_INT(sl[0].min2, -40);
	CHECK_INT(sl[0].max2, 10);
	CHECK_INT(sl[0].bound_ns, 250);
	CHECK_INT(sl[1].kept, 0);
	CHECK_INT(sl[1].bound_ns, 250);
	CHECK_INT(sl[CD_ACC_SLICES - 1].kept, 1);
	CHECK_INT(sl[2].bound_ns, 0);
	/* a larger bound later raises the slice's */
	cd_acc_slices_add(sl, s, 1, 1000, 1000, 100, 400);
	CHECK_INT(sl[0].bound_ns, 400);
	CHECK_INT(sl[0].kept, 3);
}

int main(void)
{
	test_slices();
	test_percentiles();
	test_add();
	test_thresholds();
	test_inexact_clamped();
	test_empty_and_cut();
	test_ppm();
	return unit_done("accuracy");
}
