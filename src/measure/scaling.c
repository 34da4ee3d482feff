/* SPDX-License-Identifier: MIT */
/*
 * scaling.c: N threads calling the clock at once (scaling.h).
 *
 * The threads start together (a start gate) and each runs batches of the call
 * (cd_clock_batch, the same batches as one thread's cost) until the wall
 * deadline or its share of calls; each keeps its median batch.
 */
#include "measure/scaling.h"
#include "util/monotime.h"
#include "util/threads.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_BATCHES 32
#define MIN_BATCHES 5

/* Holds the threads until all are created, then lets them go together; or
 * sends them home when one could not be created. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state;              /* 0 wait, 1 go, -1 give up */
	double deadline_ns;
	const volatile sig_atomic_t *stop;
};

struct worker {
	const struct cd_clock_spec *spec;
	struct gate *gate;
	long per_batch;
	int batches;            /* exactly this many when calls were given */
	double cost[MAX_BATCHES];
	int n;
	long calls;
	int err;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct gate *g = w->gate;
	pthread_mutex_lock(&g->lock);
	while (g->state == 0)
		pthread_cond_wait(&g->cond, &g->lock);
	int state = g->state;
	double deadline = g->deadline_ns;
	pthread_mutex_unlock(&g->lock);
	/* Without a number of calls: until the deadline, at least MIN_BATCHES. */
	while (state > 0 && w->n < MAX_BATCHES && !(w->n > 0 && g->stop && *g->stop)) {
		if (w->batches > 0 ? w->n >= w->batches : (w->n >= MIN_BATCHES && cd_mono_ns() >= deadline))
			break;
		double t = cd_clock_batch(w->spec, false, w->per_batch);
		if (t < 0) {
			w->err = (int)t;
			break;
		}
		w->cost[w->n++] = t / (double)w->per_batch;
		w->calls += w->per_batch;
	}
	return NULL;
}

static void open_gate(struct gate *g, int state, double deadline_ns)
{
	pthread_mutex_lock(&g->lock);
	g->state = state;
	g->deadline_ns = deadline_ns;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

void cd_scaling_measure(const struct cd_clock_spec *spec, int threads, double per_call_ns, double budget_s,
                        long calls, const volatile sig_atomic_t *stop, struct cd_scaling *out)
{
	memset(out, 0, sizeof *out);
	out->threads = threads;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	out->cpus = cpus > 0 ? (int)cpus : 1;
	pthread_t *tid = calloc((size_t)threads, sizeof *tid);
	struct worker *w = calloc((size_t)threads, sizeof *w);
	double *med = calloc((size_t)threads, sizeof *med);
	struct gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, stop };
	if (!tid || !w || !med) {
		out->err = -ENOMEM;
		free(tid);
		free(w);
		free(med);
		return;
	}
	/* Threads beyond the CPUs take turns: each gets a CPU a fraction of the
	 * time, so its batches are sized to what it can do in that fraction. */
	double share = threads > out->cpus ? (double)out->cpus / threads : 1.0;
	double per_batch_ns = budget_s * 1e9 * share / 8;
	long per_batch = per_call_ns > 0 ? (long)(per_batch_ns / per_call_ns) : 1000;
	int batches = 0;
	if (calls > 0) {
		batches = MIN_BATCHES;
		per_batch = calls / MIN_BATCHES;
	}
	if (per_batch < 16)
		per_batch = 16;
	for (int i = 0; i < threads; i++)
		w[i] = (struct worker){ .spec = spec, .gate = &gate, .per_batch = per_batch, .batches = batches };
	int err;
	int created = cd_threads_start(tid, threads, work, w, sizeof w[0], &err);
	double t0 = cd_mono_ns();
	open_gate(&gate, created == threads ? 1 : -1, t0 + budget_s * 1e9);
	if (created < threads)
		out->err = err;
	long total = 0;
	int nmed = 0;
	for (int i = 0; i < created; i++) {
		pthread_join(tid[i], NULL);
		total += w[i].calls;
		if (w[i].err)
			out->err = w[i].err;
		if (w[i].n > 0)
			med[nmed++] = cd_median(w[i].cost, w[i].n);
	}
	double elapsed = cd_mono_ns() - t0;
	if (nmed > 0 && !out->err) {
		out->ns_per_call = cd_median(med, nmed);
		out->ns_min = med[0];
		out->ns_max = med[nmed - 1];
		out->calls_per_s = elapsed > 0 ? (double)total / (elapsed / 1e9) : 0;
		out->measured = true;
	}
	free(tid);
	free(w);
	free(med);
}
