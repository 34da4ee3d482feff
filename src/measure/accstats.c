/* SPDX-License-Identifier: MIT */
/*
 * accstats.c: the statistics of `clockdoctor accuracy` (accuracy.h): pure
 * functions of bracketed readings, no clock read here.
 *
 * Two billion readings do not fit in memory, so nothing is kept but counts:
 * sums for the means, and a histogram of |error| with 1 ns bins up to 16 us
 * for the percentiles (a million readings or a billion cost the same).
 */
#include "measure/accuracy.h"

#include <math.h>
#include <string.h>

static int log2_floor(uint64_t v)
{
	int b = 0;
	while (v >>= 1)
		b++;
	return b;
}

/* CD_ACC_LINEAR_NS is 2^14: the first power-of-two bin starts there. */
#define LINEAR_BITS 14

void cd_acc_hist_add(struct cd_acc_hist *h, uint64_t v)
{
	h->n++;
	if (v < CD_ACC_LINEAR_NS) {
		h->lin[v]++;
		return;
	}
	int b = log2_floor(v) - LINEAR_BITS;
	h->log2[b < CD_ACC_LOG_BINS ? b : CD_ACC_LOG_BINS - 1]++;
}

void cd_acc_hist_merge(struct cd_acc_hist *dst, const struct cd_acc_hist *src)
{
	dst->n += src->n;
	for (int i = 0; i < CD_ACC_LINEAR_NS; i++)
		dst->lin[i] += src->lin[i];
	for (int i = 0; i < CD_ACC_LOG_BINS; i++)
		dst->log2[i] += src->log2[i];
}

uint64_t cd_acc_hist_percentile(const struct cd_acc_hist *h, double pct, bool *exact)
{
	if (exact)
		*exact = true;
	if (h->n == 0)
		return 0;
	/* Nearest rank: the smallest value with at least ceil(pct% of n)
	 * values at or below it.  The rounding of 99.9% in binary must not
	 * push an exact rank (999 of 1000) up by one. */
	double x = pct * (double)h->n / 100.0;
	double r = ceil(x - x * 1e-12);
	uint64_t rank = r < 1 ? 1 : r > (double)h->n ? h->n : (uint64_t)r;
	uint64_t seen = 0;
	for (int i = 0; i < CD_ACC_LINEAR_NS; i++) {
		seen += h->lin[i];
		if (seen >= rank)
			return (uint64_t)i;
	}
	if (exact)
		*exact = false;
	for (int i = 0; i < CD_ACC_LOG_BINS; i++) {
		seen += h->log2[i];
		if (seen >= rank)
			return (UINT64_C(1) << (LINEAR_BITS + 1 + i)) - 1;
	}
	return UINT64_MAX; /* not reached: the bins hold n values */
}

int64_t cd_acc_cut(int64_t median_bracket_ns)
{
	int64_t cut = 2 * median_bracket_ns;
	return cut < 20 ? 20 : cut;
}

void cd_acc_add(struct cd_acc_stats *st, const struct cd_acc_sample *s, int64_t cut_ns, int64_t bound_ns)
{
	int64_t width = s->k2 - s->k1;
	int64_t e2 = 2 * s->f - s->k1 - s->k2;
	int64_t a2 = e2 < 0 ? -e2 : e2;
	/* A bound past a day means none; clamped so that the sums below cannot
	 * overflow. */
	if (bound_ns < 0)
		bound_ns = 0;
	if (bound_ns > 86400000000000LL)
		bound_ns = 86400000000000LL;
	st->reads++;
	/* A kernel clock that went backwards inside the bracket cannot happen;
	 * should it, the bracket proves nothing about f: the reading is wide,
	 * and not held against the bound. */
	if (width < 0) {
		cd_acc_hist_add(&st->bracket_hist, UINT64_MAX);
		st->wide++;
		return;
	}
	cd_acc_hist_add(&st->bracket_hist, (uint64_t)width);

	/* The bound, with the bracket's own uncertainty: certain either way. */
	int64_t excess = 0;
	if (s->f < s->k1 - bound_ns)
		excess = s->k1 - bound_ns - s->f;
	else if (s->f > s->k2 + bound_ns)
		excess = s->f - s->k2 - bound_ns;
	if (excess > 0) {
		st->over_bound++;
		if (excess > st->worst_excess_ns)
			st->worst_excess_ns = excess;
		if (!st->has_first_over) {
			st->has_first_over = true;
			st->first_over = *s;
			st->first_over_bound_ns = bound_ns;
		}
	}

	if (width > cut_ns) {
		st->wide++;
		return;
	}
	st->kept++;
	st->sum2 += e2;
	st->sum_abs2 += a2;
	if (a2 > st->max_abs2 || !st->has_worst) {
		st->max_abs2 = a2;
		st->has_worst = true;
		st->worst = *s;
		st->worst_bound_ns = bound_ns;
	}
	if (a2 > 2 * 1000)
		st->over_1us++;
	if (a2 > 2 * 10000)
		st->over_10us++;
	if (a2 > 2 * bound_ns)
		st->over_bound_naive++;
	/* Rounded half up to whole ns. */
	cd_acc_hist_add(&st->abs_hist, (uint64_t)((a2 + 1) / 2));
}

void cd_acc_merge(struct cd_acc_stats *dst, const struct cd_acc_stats *src)
{
	dst->reads += src->reads;
	dst->kept += src->kept;
	dst->wide += src->wide;
	if (src->has_worst && (!dst->has_worst || src->max_abs2 > dst->max_abs2)) {
		dst->max_abs2 = src->max_abs2;
		dst->has_worst = true;
		dst->worst = src->worst;
		dst->worst_bound_ns = src->worst_bound_ns;
	}
	if (src->has_first_over && (!dst->has_first_over || src->first_over.k1 < dst->first_over.k1)) {
		dst->has_first_over = true;
		dst->first_over = src->first_over;
		dst->first_over_bound_ns = src->first_over_bound_ns;
	}
	dst->sum2 += src->sum2;
	dst->sum_abs2 += src->sum_abs2;
	dst->over_1us += src->over_1us;
	dst->over_10us += src->over_10us;
	dst->over_bound += src->over_bound;
	if (src->worst_excess_ns > dst->worst_excess_ns)
		dst->worst_excess_ns = src->worst_excess_ns;
	dst->over_bound_naive += src->over_bound_naive;
	cd_acc_hist_merge(&dst->abs_hist, &src->abs_hist);
	cd_acc_hist_merge(&dst->bracket_hist, &src->bracket_hist);
}

void cd_acc_summarize(const struct cd_acc_stats *st, struct cd_acc_summary *out)
{
	memset(out, 0, sizeof *out);
	out->percentiles_exact = true;
	if (st->reads > 0) {
		out->bracket_median_ns = (double)cd_acc_hist_percentile(&st->bracket_hist, 50, NULL);
		out->wide_share = (double)st->wide / (double)st->reads;
	}
	if (st->kept == 0) {
		out->max_abs_ns = out->mean_ns = out->mean_abs_ns = NAN;
		out->median_ns = out->p99_ns = out->p999_ns = NAN;
		out->share_1us = out->share_10us = NAN;
		return;
	}
	double n = (double)st->kept;
	bool e1, e2, e3;
	out->max_abs_ns = (double)st->max_abs2 / 2;
	out->mean_ns = (double)st->sum2 / 2 / n;
	out->mean_abs_ns = (double)st->sum_abs2 / 2 / n;
	out->median_ns = (double)cd_acc_hist_percentile(&st->abs_hist, 50, &e1);
	out->p99_ns = (double)cd_acc_hist_percentile(&st->abs_hist, 99, &e2);
	out->p999_ns = (double)cd_acc_hist_percentile(&st->abs_hist, 99.9, &e3);
	out->percentiles_exact = e1 && e2 && e3;
	/* A power-of-two bin's upper edge can lie past the largest value seen:
	 * "at most" is then the largest. */
	if (out->median_ns > out->max_abs_ns)
		out->median_ns = out->max_abs_ns;
	if (out->p99_ns > out->max_abs_ns)
		out->p99_ns = out->max_abs_ns;
	if (out->p999_ns > out->max_abs_ns)
		out->p999_ns = out->max_abs_ns;
	out->share_1us = (double)st->over_1us / n;
	out->share_10us = (double)st->over_10us / n;
}

void cd_acc_point_offer(struct cd_acc_point *p, const struct cd_acc_sample *s)
{
	if (s->k2 < s->k1)
		return;
	if (!p->set || s->k2 - s->k1 < p->s.k2 - p->s.k1) {
		p->s = *s;
		p->set = true;
	}
}

double cd_acc_ppm(const struct cd_acc_point *a, const struct cd_acc_point *b, double *err_ppm)
{
	*err_ppm = NAN;
	if (!a->set || !b->set)
		return NAN;
	/* Doubled midpoints, exact in integers; the ratio in double is good to
	 * 1e-16, far below what a bracket allows. */
	int64_t dk2 = (b->s.k1 + b->s.k2) - (a->s.k1 + a->s.k2);
	int64_t df = b->s.f - a->s.f;
	if (dk2 <= 0)
		return NAN;
	double dk = (double)dk2 / 2;
	double half_a = (double)(a->s.k2 - a->s.k1) / 2, half_b = (double)(b->s.k2 - b->s.k1) / 2;
	*err_ppm = (half_a + half_b) / dk * 1e6;
	return ((double)df / dk - 1) * 1e6;
}

void cd_acc_slices_add(struct cd_acc_slice *slices, const struct cd_acc_sample *s, int n, int64_t start_ns,
                       int64_t slice_ns, int64_t cut_ns, int64_t bound_ns)
{
	for (int i = 0; i < n; i++) {
		int64_t at = s[i].k1 - start_ns;
		long k = at < 0 || slice_ns <= 0 ? 0 : (long)(at / slice_ns);
		if (k >= CD_ACC_SLICES)
			k = CD_ACC_SLICES - 1;
		struct cd_acc_slice *sl = &slices[k];
		if (bound_ns > sl->bound_ns)
			sl->bound_ns = bound_ns;
		if (s[i].k2 - s[i].k1 > cut_ns)
			continue;
		int64_t e2 = 2 * s[i].f - s[i].k1 - s[i].k2;
		if (sl->kept == 0 || e2 < sl->min2)
			sl->min2 = e2;
		if (sl->kept == 0 || e2 > sl->max2)
			sl->max2 = e2;
		sl->kept++;
	}
}
