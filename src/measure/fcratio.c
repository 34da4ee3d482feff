/* SPDX-License-Identifier: MIT */
/*
 * fcratio.c: libfastclock's calls against their references, in interleaved
 * batches (fcratio.h).
 *
 * A batch is cd_clock_batch's: n calls timed by the thread's CPU time, so a
 * preempted batch does not look dear.  Both batches of a round are sized to
 * last about as long, from a first estimate of each call's cost.
 */
#include "measure/fcratio.h"
#include "util/monotime.h"
#include "measure/timer.h"
#include "measure/ways.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The references, by the library call they are for.  The counter's names
 * differ by architecture (timer.h); a reference this machine lacks is
 * skipped. */
static const struct {
	int call;               /* enum cd_fc_call */
	const char *ref;
	double target;
} pairs[] = {
	{ CD_FC_NOW, "CLOCK_MONOTONIC", 0.8 },
	{ CD_FC_NOW, CD_COUNTER_ORDERED_NAME, 0 },
	{ CD_FC_NOW_UNORDERED, "counter-bare", 1.1 },
	{ CD_FC_REALTIME, "CLOCK_REALTIME", 0 },
	{ CD_FC_GETTIME_MONO, "CLOCK_MONOTONIC", 0 },
	{ CD_FC_CYCLES, "counter-bare", 0 },
	{ CD_FC_COARSE, "CLOCK_MONOTONIC_COARSE", 0 },
};

/* The bare counter read: the table's counter way of variant 0 (rdtsc,
 * cntvct_el0); NULL without a counter. */
static const struct cd_clock_spec *bare_counter(void)
{
	int n;
	const struct cd_clock_spec *w = cd_ways(&n);
	for (int i = 0; i < n; i++)
		if (w[i].kind == CD_CALL_COUNTER && w[i].clockid == 0)
			return &w[i];
	return NULL;
}

int cd_fc_ratio_pairs(const struct cd_clock_spec *const *ways, int n, struct cd_fc_ratio *out, int max)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (ways[i]->kind != CD_CALL_FASTCLOCK)
			continue;
		for (size_t p = 0; p < sizeof pairs / sizeof pairs[0] && k < max; p++) {
			if (pairs[p].call != ways[i]->clockid)
				continue;
			const struct cd_clock_spec *ref =
				strcmp(pairs[p].ref, "counter-bare") == 0 ? bare_counter() : cd_way_find(pairs[p].ref);
			if (!ref)
				continue;
			memset(&out[k], 0, sizeof out[k]);
			out[k].way = ways[i];
			out[k].ref = ref;
			out[k].target = pairs[p].target;
			k++;
		}
	}
	return k;
}

/* The shortest batch, in ns of calls. */
#define MIN_BATCH_NS 1e6

/* ns a call from enough calls to last about 0.2 ms; < 0: -errno. */
static double per_call(const struct cd_clock_spec *spec)
{
	for (long n = 64;; n *= 2) {
		double t = cd_clock_batch(spec, false, n);
		if (t < 0)
			return t;
		if (t >= 200e3 || n >= (1L << 24))
			return t / (double)n > 0.1 ? t / (double)n : 0.1;
	}
}

void cd_fc_ratio_measure(struct cd_fc_ratio *r, double budget_s, long calls, const volatile sig_atomic_t *stop)
{
	double per[2];  /* ns a call: the library's, its reference's */
	per[0] = per_call(r->way);
	per[1] = per[0] < 0 ? per[0] : per_call(r->ref);
	if (per[0] < 0 || per[1] < 0) {
		r->err = (int)(per[0] < 0 ? per[0] : per[1]);
		return;
	}
	long size[2];  /* calls a batch */
	if (calls > 0)
		size[0] = size[1] = calls / CD_FC_RATIO_ROUNDS;
	else
		cd_batch_pair_split(budget_s, CD_FC_RATIO_ROUNDS, per, size);
	/* At least 1000 calls, or 1 ms of them: the batch's two CPU-clock
	 * reads (a system call each) must stay far below the batch.  A call
	 * that costs tens of microseconds (a counter read that traps into
	 * the kernel) gets fewer. */
	for (int i = 0; i < 2; i++) {
		long least = (long)(MIN_BATCH_NS / per[i]) + 1;
		if (least > 1000)
			least = 1000;
		if (least < 16)
			least = 16;
		if (size[i] < least)
			size[i] = least;
	}
	long nw = size[0], nr = size[1];
	double ratio[CD_FC_RATIO_ROUNDS], wns[CD_FC_RATIO_ROUNDS], rns[CD_FC_RATIO_ROUNDS];
	/* By time as well as by rounds: past three times its budget (the
	 * batches are sized from a first estimate), it ends with the rounds
	 * done, at least 3. */
	double end = cd_mono_ns() + (3 * budget_s + 0.2) * 1e9;
	int n = 0;
	while (n < CD_FC_RATIO_ROUNDS && !(n >= 3 && stop && *stop) && !(n >= 3 && calls <= 0 && cd_mono_ns() > end)) {
		double tw, tr;
		/* Swapped every round, so that neither always runs on a cache or
		 * a predictor the other warmed. */
		if (n % 2 == 0) {
			tw = cd_clock_batch(r->way, false, nw);
			tr = cd_clock_batch(r->ref, false, nr);
		} else {
			tr = cd_clock_batch(r->ref, false, nr);
			tw = cd_clock_batch(r->way, false, nw);
		}
		if (tw < 0 || tr < 0) {
			r->err = (int)(tw < 0 ? tw : tr);
			return;
		}
		wns[n] = tw / (double)nw;
		rns[n] = tr / (double)nr;
		ratio[n] = rns[n] > 0 ? wns[n] / rns[n] : NAN;
		n++;
	}
	r->rounds = n;
	r->ratio = cd_median(ratio, n);
	r->ratio_min = ratio[0];
	r->ratio_max = ratio[n - 1];
	r->way_ns = cd_median(wns, n);
	r->ref_ns = cd_median(rns, n);
	r->measured = true;
}

bool cd_fc_ratio_met(const struct cd_fc_ratio *r)
{
	return r->target <= 0 || (r->measured && r->ratio <= r->target);
}
