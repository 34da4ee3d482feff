/* SPDX-License-Identifier: MIT */
/*
 * histprint.c: a log2 histogram printed as bcc prints it (histprint.h).
 */
#include "output/histprint.h"

#include <math.h>
#include <stdbool.h>

#define STARS_MAX 40

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
