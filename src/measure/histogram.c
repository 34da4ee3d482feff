/* SPDX-License-Identifier: MIT */
/*
 * histogram.c: log2 histograms with bcc's buckets, and nearest-rank
 * percentiles (printed by output/histprint.c).
 */
#include "measure/histogram.h"

#include <math.h>

int cd_hist_bucket(uint64_t v)
{
	int b = 1;
	while (v > 1) {
		v >>= 1;
		b++;
	}
	return b;
}

void cd_hist_bounds(int i, uint64_t *low, uint64_t *high)
{
	/* bcc: low = (1 << i) >> 1, high = (1 << i) - 1, and 0 -> 1 for the
	 * first bucket; written so that i = 64 does not shift by 64. */
	*high = i >= 64 ? UINT64_MAX : ((uint64_t)1 << i) - 1;
	*low = (uint64_t)1 << (i - 1);
	if (*low == *high)
		*low -= 1;
}

void cd_hist_add(struct cd_hist *h, uint64_t v)
{
	h->count[cd_hist_bucket(v)]++;
	h->total++;
	h->sum += (double)v;
}

uint32_t cd_percentile_u32(const uint32_t *sorted, size_t n, double p)
{
	if (n == 0)
		return 0;
	/* The small margin keeps 99.9% of 1000 at rank 999: 99.9 is not exact
	 * in binary, and p * n / 100 comes out a hair above 999. */
	double rank = ceil(p * (double)n / 100.0 - 1e-7);
	size_t k = rank < 1 ? 0 : (size_t)rank - 1;
	return sorted[k < n ? k : n - 1];
}
