/* SPDX-License-Identifier: MIT */
/*
 * tscmeasure.c: the numbers behind `clockdoctor tsc`, taken on the live
 * machine (tsc.h).
 *
 * The frequency interval and the cross-CPU test overlap: samples are taken
 * at the start, the CPU pairs are tested, and the end samples are taken once
 * the interval has passed, so the whole run lasts about the longer of the
 * two rather than their sum.  The thread that samples is pinned to the CPU it
 * is on (and unpinned after), because on a machine whose counters differ
 * between CPUs a migration between the two ends would show as a frequency
 * error.  The CPUs tested are the ones this process may run on: under
 * `taskset -c 0` or a one-CPU cpuset that is one CPU, and the report says so
 * rather than widening the mask the user chose.
 */
#include "measure/tsc.h"
#include "util/fsread.h"
#include "util/monotime.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Samples at each end of the interval: the tightest bracket is kept. */
#define SAMPLE_TRIES 200
/* Pairs kept at most: every pair of 64 CPUs.  More CPUs: each against the first. */
#define MAX_PAIRS 2016
#define MIN_PAIR_S 0.002
#define MIN_ROUNDS 1000

void cd_tsc_opts_default(struct cd_tsc_opts *o, double seconds, bool quick)
{
	*o = (struct cd_tsc_opts){ .seconds = seconds, .quick = quick, .pair_s = 0.05, .sync_budget_s = 2.0 };
}

void cd_tsc_opts_deep(struct cd_tsc_opts *o)
{
	/* check --deep: a quarter of a second in all on a small machine. */
	*o = (struct cd_tsc_opts){ .seconds = 0.25, .quick = true, .pair_s = 0.02, .sync_budget_s = 0.2 };
}

/* ---- which CPUs ---- */

static int allowed_cpus(cpu_set_t *set)
{
	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof *set, set) != 0)
		return 0;
	return CPU_COUNT(set);
}

static int nth_cpu(const cpu_set_t *set, int n)
{
	for (int c = 0, seen = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set) && seen++ == n)
			return c;
	return -1;
}

static long n_pairs_for(int allowed, bool quick)
{
	if (allowed < 2)
		return 0;
	return quick ? allowed - 1 : (long)allowed * (allowed - 1) / 2;
}

/* The pairs to test, in order: (first, x) for quick, every a < b else. */
static int plan_pairs(struct cd_tsc_report *t, const cpu_set_t *set, int allowed)
{
	long n = n_pairs_for(allowed, t->quick);
	if (n > MAX_PAIRS) {
		t->quick = true;   /* too many for every pair: say so (sync_truncated) */
		t->sync_truncated = true;
		n = n_pairs_for(allowed, true);
	}
	if (n == 0)
		return 0;
	t->pairs = calloc((size_t)n, sizeof *t->pairs);
	if (!t->pairs)
		return -ENOMEM;
	int k = 0;
	for (int i = 0; i < allowed && k < n; i++)
		for (int j = i + 1; j < allowed && k < n; j++) {
			if (t->quick && i > 0)
				break;
			t->pairs[k].cpu_a = nth_cpu(set, i);
			t->pairs[k].cpu_b = nth_cpu(set, j);
			k++;
		}
	t->n_pairs = k;
	return 0;
}

static void run_pairs(struct cd_tsc_report *t, const struct cd_tsc_opts *o)
{
	double pair_s = o->pair_s;
	if (t->n_pairs > 0 && pair_s * t->n_pairs > o->sync_budget_s)
		pair_s = o->sync_budget_s / t->n_pairs;
	if (pair_s < MIN_PAIR_S)
		pair_s = MIN_PAIR_S;
	t->pair_s = pair_s;
	/* Each pair is bounded, and so is the whole: on a busy machine with many
	 * CPUs the pairs' own bounds could add up to minutes.  Pairs left when the
	 * time is up are reported untested, not passed. */
	double budget = o->sync_budget_s > 0 ? o->sync_budget_s : pair_s * t->n_pairs;
	double deadline = cd_mono_s() + 4 * budget + 1.0;
	for (int i = 0; i < t->n_pairs; i++) {
		struct cd_tsc_pair *p = &t->pairs[i];
		if (o->stop && *o->stop) {
			p->err = -EINTR;
			continue;
		}
		double left = deadline - cd_mono_s();
		if (left <= 0) {
			p->err = -ETIMEDOUT;
			continue;
		}
		struct fc_sync_opts so = {
			.cpu_a = p->cpu_a, .cpu_b = p->cpu_b,
			.seconds = pair_s, .min_rounds = MIN_ROUNDS,
			/* A busy machine may leave a side waiting: bounded. */
			.max_seconds = pair_s * 10 + 0.2 < left ? pair_s * 10 + 0.2 : left,
		};
		p->err = fc_sync_pair(&so, &p->r);
	}
}

/* ---- the frequency interval ---- */

struct ends {
	struct fc_freq_sample raw, mono;
	int cpu;
};

static int sample_ends(struct ends *e)
{
	int err = fc_freq_sample(CLOCK_MONOTONIC_RAW, SAMPLE_TRIES, &e->raw);
	if (!err)
		err = fc_freq_sample(CLOCK_MONOTONIC, SAMPLE_TRIES, &e->mono);
	e->cpu = sched_getcpu();
	return err;
}


/* The signal that sets stop ends nanosleep (no SA_RESTART): seen at once. */
static void sleep_until(double t_end, const volatile sig_atomic_t *stop)
{
	double left;
	while ((left = t_end - cd_mono_s()) > 0 && !(stop && *stop)) {
		struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
		nanosleep(&ts, NULL);
	}
}

/* Pins the calling thread where it is; returns whether *saved must be
 * restored. */
static bool pin_here(cpu_set_t *saved)
{
	int cpu = sched_getcpu();
	if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof *saved, saved) != 0)
		return false;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof one, &one) == 0;
}

static void measure_freq_end(struct cd_tsc_report *t, const struct ends *a, const struct ends *b)
{
	if (t->freq_err)
		return;
	t->migrated = a->cpu != b->cpu;
	int e = fc_freq_between(&a->raw, &b->raw, &t->raw);
	if (!e)
		e = fc_freq_between(&a->mono, &b->mono, &t->mono);
	t->freq_err = e;
}

void cd_tsc_plan(const struct cd_tsc_opts *o, int *allowed, long *pairs, double *est_s)
{
	cpu_set_t set;
	*allowed = allowed_cpus(&set);
	*pairs = n_pairs_for(*allowed, o->quick);
	if (*pairs > MAX_PAIRS)
		*pairs = n_pairs_for(*allowed, true);
	double pair_s = o->pair_s;
	if (*pairs > 0 && pair_s * (double)*pairs > o->sync_budget_s)
		pair_s = o->sync_budget_s / (double)*pairs;
	if (pair_s < MIN_PAIR_S)
		pair_s = MIN_PAIR_S;
	double sync = pair_s * (double)*pairs;
	*est_s = sync > o->seconds ? sync : o->seconds;
}

void cd_tsc_measure(const struct cd_facts *f, const struct cd_tsc_opts *o, struct cd_tsc_report *t)
{
	double t0 = cd_mono_s();
	t->measured = true;
	t->quick = o->quick;
	t->ref_cpu = -1;
	t->perf_paranoid = -99;
	fc_counter_probe(&t->counter);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	t->cpus_online = online > 0 ? (int)online : f->cpu.count;
	cpu_set_t set;
	t->cpus_allowed = allowed_cpus(&set);
	t->ref_cpu = nth_cpu(&set, 0);
	if (t->counter.usable != 0) {
		t->freq_err = t->counter.usable;
		t->perf_err = t->counter.usable;
		t->elapsed_s = cd_mono_s() - t0;
		return;
	}
	fc_read_cost_measure_live(&t->read_cost);
	int e = plan_pairs(t, &set, t->cpus_allowed);
	if (e)
		t->sync_truncated = true;  /* out of memory: no pairs tested */

	cpu_set_t saved;
	bool pinned = pin_here(&saved);
	struct ends a, b;
	t->freq_err = sample_ends(&a);
	double start = cd_mono_s();
	t->perf_err = fc_freq_perf(&t->perf);
	if (t->perf_err) {
		char buf[16];
		if (cd_read_small("/", "/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf) > 0)
			t->perf_paranoid = atoi(buf);
	}
	run_pairs(t, o);
	sleep_until(start + o->seconds, o->stop);
	if (!t->freq_err)
		t->freq_err = sample_ends(&b);
	if (pinned)
		sched_setaffinity(0, sizeof saved, &saved);
	measure_freq_end(t, &a, &b);
	t->interrupted = o->stop && *o->stop;
	t->elapsed_s = cd_mono_s() - t0;
}

void cd_tsc_report_free(struct cd_tsc_report *t)
{
	free(t->pairs);
	t->pairs = NULL;
	t->n_pairs = 0;
}
