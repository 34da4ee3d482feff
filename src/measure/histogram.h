/* SPDX-License-Identifier: MIT */
/*
 * histogram.h: log2 latency histograms with the buckets of bcc's
 * funclatency, and percentiles of sorted samples.
 *
 * Bucket i holds the values from 2^(i-1) to 2^i - 1 (bucket 1 holds 0 and
 * 1), as bcc's bpf_log2l files them, so that output/histprint.c prints them
 * as bcc's print_log2_hist does (bcc's tools/funclatency.py).
 */
#ifndef CD_HISTOGRAM_H
#define CD_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define CD_HIST_BUCKETS 65

struct cd_hist {
	uint64_t count[CD_HIST_BUCKETS];
	uint64_t total;     /* values added */
	double sum;         /* their sum, for the average */
};

/* bcc's bpf_log2l: 0 and 1 go to bucket 1, 2..3 to 2, 4..7 to 3, ... */
int cd_hist_bucket(uint64_t v);

/* The values bucket i (1..64) holds, as bcc prints them. */
void cd_hist_bounds(int i, uint64_t *low, uint64_t *high);

void cd_hist_add(struct cd_hist *h, uint64_t v);

/* The p-th percentile (0 < p <= 100) of n sorted samples, nearest rank: the
 * smallest sample that at least p% of the samples do not exceed. */
uint32_t cd_percentile_u32(const uint32_t *sorted, size_t n, double p);

#endif
