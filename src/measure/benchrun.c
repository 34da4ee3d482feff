/* SPDX-License-Identifier: MIT */
/*
 * benchrun.c: measure a list of ways within a budget (benchrun.h).
 *
 * The budget is shared equally between the ways; within a way, most goes to
 * the batches (the figure people quote), the rest to single calls and, with
 * threads, to the threaded run.  Measuring the ways one after another, each
 * completely, keeps a way's three figures close in time: on a noisy machine
 * they then see the same load.
 */
#include "measure/benchrun.h"
#include "util/monotime.h"

#include "fastclock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* A run by calls has no time budget; single calls still stop somewhere. */
#define CALLS_LATENCY_LIMIT_S 3600.0

int cd_bench_run_init(struct cd_bench_run *r, const struct cd_clock_spec *const *ways, int n,
                      const struct cd_timer *timer)
{
	memset(r, 0, sizeof *r);
	r->w = calloc((size_t)(n > 0 ? n : 1), sizeof *r->w);
	if (!r->w)
		return -ENOMEM;
	r->n = n;
	for (int i = 0; i < n; i++) {
		r->w[i].spec = ways[i];
		r->w[i].fc_source = -1;
	}
	r->timer = *timer;
	r->nfc = cd_fc_ratio_pairs(ways, n, r->fc, CD_FC_RATIO_MAX);
	return 0;
}

void cd_bench_run_free(struct cd_bench_run *r)
{
	free(r->w);
	r->w = NULL;
	r->n = 0;
}

/* Below this much CPU time the user/system split, which the kernel keeps
 * by sampling at each tick, is mostly noise. */
#define MIN_SPLIT_CPU_S 0.05

static void thread_cpu(double *user, double *sys)
{
	struct rusage ru;
	*user = *sys = 0;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return;
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static bool stopped(const struct cd_bench_params *p)
{
	return p->stop && *p->stop;
}

static void measure_way(struct cd_bench_run *r, struct cd_bench_way *w, double share,
                        const struct cd_bench_params *p, uint32_t *buf, size_t cap)
{
	bool threads = p->threads > 1;
	double cost_s = share * (threads ? 0.5 : 0.6);
	double lat_s = share * (threads ? 0.3 : 0.4);
	double thr_s = share * 0.2;
	cd_measure_clock_stoppable(w->spec, cost_s, p->calls, p->stop, &w->cost);
	w->sys_share = w->cost.sys_share;
	/* The library reads the counter or, when it cannot trust it, the
	 * kernel's clock: which one it did decides the way's path. */
	struct fc_info info;
	if (w->spec->kind == CD_CALL_FASTCLOCK && fc_info(&info) == 0)
		w->fc_source = (int)info.source;
	if (!w->cost.measured || stopped(p))
		return;
	struct cd_latency_params lp = {
		.timer = &r->timer,
		.budget_s = p->calls > 0 ? CALLS_LATENCY_LIMIT_S : lat_s,
		.max_calls = p->calls,
		.buf = buf,
		.cap = cap,
		.stop = p->stop,
	};
	double u0, s0, u1, s1;
	thread_cpu(&u0, &s0);
	cd_latency_measure(w->spec, &lp, &w->lat);
	thread_cpu(&u1, &s1);
	double user = w->cost.cpu_user_s + (u1 - u0), sys = w->cost.cpu_sys_s + (s1 - s0);
	w->sys_share = user + sys >= MIN_SPLIT_CPU_S ? sys / (user + sys) : -1;
	if (threads && !stopped(p))
		cd_scaling_measure(w->spec, p->threads, w->cost.ns_per_call, thr_s, p->calls, p->stop, &w->scal);
}

/* The call whose path cd_kernel_path counts for a way: the way itself, or
 * for a library call the kernel's clock it reads when it does not serve
 * from the counter (through the vDSO's entry, as libc's call does), so
 * that its path too is counted, not guessed from its cost. */
static const struct cd_clock_spec *kernel_spec(const struct cd_clock_spec *w)
{
	if (w->kind != CD_CALL_FASTCLOCK || w->clockid == CD_FC_CYCLES)
		return w;
	int id = cd_fc_kernel_clockid(w->clockid);
	for (int i = 0; i < CD_N_CHECK_CLOCKS; i++)
		if (cd_check_clocks[i].kind == CD_CALL_CLOCK_GETTIME && cd_check_clocks[i].clockid == id)
			return &cd_check_clocks[i];
	return w;
}

/* The counted path of a way: a library call's only when it read the
 * kernel's clock. */
static int counted_path(const struct cd_bench_way *w)
{
	if (w->spec->kind == CD_CALL_FASTCLOCK && (w->fc_source == FC_SOURCE_COUNTER || w->spec->clockid == CD_FC_CYCLES))
		return -ENOSYS;
	return w->kernel_calls;
}

/* The share of the budget that goes to the library's side-by-side ratios,
 * when there are any. */
#define FC_RATIO_SHARE 0.2

void cd_bench_measure(struct cd_bench_run *r, const struct cd_bench_params *p, uint32_t *buf, size_t cap)
{
	double t0 = cd_mono_s();
	double ways_budget = r->nfc > 0 ? p->budget_s * (1 - FC_RATIO_SHARE) : p->budget_s;
	/* The clock fallback's cost depends on the clocksource: measure the
	 * timer's overhead again on this one. */
	r->timer.overhead_ticks = cd_timer_overhead(&r->timer);
	r->timer.overhead_ns = r->timer.overhead_ticks * r->timer.ns_per_tick;
	/* Whether each libc way reaches the kernel, exactly (kernelpath.c), asked
	 * now while the process has one thread: the scaling threads come later. */
	int reached[CD_KERNEL_PATH_MAX];
	for (int i = 0; i < r->n; i += CD_KERNEL_PATH_MAX) {
		int k = r->n - i < CD_KERNEL_PATH_MAX ? r->n - i : CD_KERNEL_PATH_MAX;
		const struct cd_clock_spec *specs[CD_KERNEL_PATH_MAX];
		for (int j = 0; j < k; j++)
			specs[j] = kernel_spec(r->w[i + j].spec);
		if (cd_kernel_path(specs, k, reached) < 0)
			for (int j = 0; j < k; j++)
				reached[j] = -ENOSYS;
		for (int j = 0; j < k; j++)
			r->w[i + j].kernel_calls = reached[j];
	}
	for (int i = 0; i < r->n; i++) {
		if (stopped(p)) {
			r->interrupted = true;
			break;
		}
		if (p->progress)
			p->progress(p->ctx, i, r->n, r->w[i].spec->name);
		/* What is left, shared by the ways left: a way that overran its
		 * share (a slow clock, a busy machine) is paid for by the others. */
		double left = ways_budget - (cd_mono_s() - t0);
		double share = left / (r->n - i);
		if (share < ways_budget / r->n / 4)
			share = ways_budget / r->n / 4;
		measure_way(r, &r->w[i], share, p, buf, cap);
		cd_apply_kernel_path(&r->w[i].cost, counted_path(&r->w[i]));
		r->w[i].done = true;
		r->done = i + 1;
	}
	for (int i = 0; i < r->nfc && !stopped(p); i++) {
		if (p->progress)
			p->progress(p->ctx, r->n, r->n + 1, "libfastclock against its references");
		cd_fc_ratio_measure(&r->fc[i], p->budget_s * FC_RATIO_SHARE / r->nfc, p->calls, p->stop);
	}
	if (stopped(p))
		r->interrupted = true;
	r->elapsed_s = cd_mono_s() - t0;
}

long cd_bench_backward(const struct cd_bench_run *r)
{
	long n = 0;
	for (int i = 0; i < r->done; i++)
		n += r->w[i].lat.backward;
	return n;
}
