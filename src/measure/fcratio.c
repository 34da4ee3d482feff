/*
 * fcratio.c: libfastclock's calls against their references, in interleaved
 * batches (fcratio.h).
 *
 * A batch is cd_clock_batch's: n calls timed by the thread's CPU time, so a
 * preempted batch does not look dear.  Both batches of a round are sized to
 * last about as long, from a first estimate of each call's cost.
 */
#include "measure/fcratio.h"
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

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
	double pw = per_call(r->way), pr = pw < 0 ? pw : per_call(r->ref);
	if (pw < 0 || pr < 0) {
		r->err = (int)(pw < 0 ? pw : pr);
		return;
	}
	long nw, nr;
	if (calls > 0) {
		nw = nr = calls / CD_FC_RATIO_ROUNDS;
	} else {
		double batch_ns = budget_s * 1e9 / (2.0 * CD_FC_RATIO_ROUNDS);
		nw = (long)(batch_ns / pw);
		nr = (long)(batch_ns / pr);
	}
	/* At least 1000 calls: the batch's two CPU-clock reads (a system call
	 * each) must stay far below the batch. */
	if (nw < 1000)
		nw = 1000;
	if (nr < 1000)
		nr = 1000;
	double ratio[CD_FC_RATIO_ROUNDS], wns[CD_FC_RATIO_ROUNDS], rns[CD_FC_RATIO_ROUNDS];
	int n = 0;
	while (n < CD_FC_RATIO_ROUNDS && !(n >= 3 && stop && *stop)) {
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
	qsort(ratio, (size_t)n, sizeof ratio[0], cmp_double);
	qsort(wns, (size_t)n, sizeof wns[0], cmp_double);
	qsort(rns, (size_t)n, sizeof rns[0], cmp_double);
	r->rounds = n;
	r->ratio = ratio[n / 2];
	r->ratio_min = ratio[0];
	r->ratio_max = ratio[n - 1];
	r->way_ns = wns[n / 2];
	r->ref_ns = rns[n / 2];
	r->measured = true;
}

bool cd_fc_ratio_met(const struct cd_fc_ratio *r)
{
	return r->target <= 0 || (r->measured && r->ratio <= r->target);
}
