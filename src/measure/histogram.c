/*
 * histogram.c: log2 histograms printed as bcc prints them, and nearest-rank
 * percentiles.
 */
#include "measure/histogram.h"

#include <math.h>
#include <stdbool.h>

#define STARS_MAX 40

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

/* bcc's _stars: floor(width * val / max) stars, at most width. */
static int stars(uint64_t val, uint64_t max, int width)
{
	if (max == 0)
		return 0;
	double n = floor((double)width * (double)val / (double)max);
	return n > width ? width : (int)n;
}

void cd_hist_print(FILE *out, const struct cd_hist *h, const char *unit)
{
	int first = -1, last = -1;
	uint64_t max = 0;
	for (int i = 1; i < CD_HIST_BUCKETS; i++) {
		if (h->count[i] == 0)
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (h->count[i] > max)
			max = h->count[i];
	}
	if (last < 0)
		return;
	/* bcc widens the value columns, and halves the bar, past 2^32. */
	bool wide = last > 32;
	int width = wide ? STARS_MAX / 2 : STARS_MAX;
	if (wide)
		fprintf(out, "               %-29s : count     distribution\n", unit);
	else
		fprintf(out, "     %-19s : count     distribution\n", unit);
	for (int i = first; i <= last; i++) {
		uint64_t low, high;
		cd_hist_bounds(i, &low, &high);
		int s = stars(h->count[i], max, width);
		fprintf(out, wide ? "%20llu -> %-20llu : %-8llu |%.*s%*s|\n" : "%10llu -> %-10llu : %-8llu |%.*s%*s|\n",
		        (unsigned long long)low, (unsigned long long)high, (unsigned long long)h->count[i], s,
		        "****************************************", width - s, "");
	}
	fprintf(out, "\navg = %.0f %s, total: %.0f %s, count: %llu\n", h->sum / (double)h->total, unit, h->sum,
	        unit, (unsigned long long)h->total);
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
