/* SPDX-License-Identifier: MIT */
/*
 * fcratio.h: what each of libfastclock's calls costs as a multiple of the
 * call it competes with, measured side by side.
 *
 * The library's promises are ratios, not nanoseconds (issue 6): fc_now_ns
 * at most 0.8 times the vDSO's clock_gettime(CLOCK_MONOTONIC), and
 * fc_now_ns_unordered at most 1.1 times a bare rdtsc.  A ratio of two
 * figures taken seconds apart on a shared machine mixes the calls' costs
 * with the machine's moods, so each pair is timed in interleaved batches
 * (the call, then its reference, the order swapped every round) and the
 * figure is the median of the rounds' ratios.
 */
#ifndef CD_FCRATIO_H
#define CD_FCRATIO_H

#include "measure/measure.h"

#include <signal.h>
#include <stdbool.h>

#define CD_FC_RATIO_MAX 8
#define CD_FC_RATIO_ROUNDS 21

struct cd_fc_ratio {
	const struct cd_clock_spec *way;    /* the library's call */
	const struct cd_clock_spec *ref;    /* what it competes with */
	double target;          /* the promise: ratio <= target; 0 for none */
	bool measured;
	int err;                /* -errno: a call failed */
	int rounds;
	double ratio;           /* median of the rounds' way/ref */
	double ratio_min, ratio_max;
	double way_ns, ref_ns;  /* median batch of each, ns a call (thread CPU time) */
};

/* The pairs that apply to the library's calls among ways[0..n): fills out
 * (up to max) and returns how many.  The reference need not be in ways. */
int cd_fc_ratio_pairs(const struct cd_clock_spec *const *ways, int n, struct cd_fc_ratio *out, int max);

/* Measure one pair within about budget_s (or, with calls > 0, batches of
 * calls / CD_FC_RATIO_ROUNDS); ends early, with the rounds done, when *stop
 * is set. */
void cd_fc_ratio_measure(struct cd_fc_ratio *r, double budget_s, long calls, const volatile sig_atomic_t *stop);

/* Whether a measured pair met its target (true when it has none). */
bool cd_fc_ratio_met(const struct cd_fc_ratio *r);

#endif
