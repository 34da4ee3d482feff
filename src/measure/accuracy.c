/* SPDX-License-Identifier: MIT */
/*
 * accuracy.c: the threads of `clockdoctor accuracy` (accuracy.h).
 *
 * Each thread loops over blocks of BLOCK iterations; an iteration takes one
 * bracketed reading of each clock (CLOCK_MONOTONIC, fc_now_ns,
 * CLOCK_MONOTONIC; then the same for REALTIME) into a buffer, and checks for
 * backward steps as it goes.  Between blocks the thread asks fc_info() for
 * the library's error bound and counts the block's readings against the
 * larger of the bounds before and after it: the bound may grow between
 * re-anchors, and each reading is judged by what the library claimed around
 * it.  Nothing but the buffer write sits between the three reads of a
 * bracket, so the bracket is as narrow as the kernel's clock allows.
 *
 * The kernel's clocks are read through glibc's own clock_gettime, looked up
 * in libc.so.6 itself: were this process run under the preload shim
 * (LD_PRELOAD, which serves clock_gettime from libfastclock), a plain call
 * would compare the library with itself.  glibc's call is the vDSO's read,
 * no system call, wherever the clocksource allows.
 */
#include "measure/accuracy.h"
#include "util/threads.h"

#include "fastclock.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Iterations between two looks at fc_info() and the clock: about 0.5 ms on
 * a machine where the kernel's clock is a vDSO read, so the bound is sampled
 * a couple of thousand times a second at a cost of well under 1%. */
#define BLOCK 4096
/* Readings taken before the run to find the usual bracket: CALIB_READS, or
 * as many as fit in CALIB_SHARE of the run's duration (at least
 * CALIB_MIN_READS), each clock.  Where the kernel's clock is a system call
 * that reads a trapped counter (an arm64 timer erratum), one bracket costs
 * hundreds of microseconds and 20001 of them would outlast the run. */
#define CALIB_READS CD_ACC_CALIB_READS
#define CALIB_MIN_READS 101
#define CALIB_SHARE 0.05
/* The spacing of thread 0's points for the frequency error, and how many it
 * keeps: 128 at 100 ms reach back 12.8 s, past the 10 s tail. */
#define POINT_SPACING_NS 100000000LL
#define RING 128

typedef int (*clock_fn)(clockid_t, struct timespec *);

/* Resolved once by cd_accuracy_run before any thread starts; read-only after. */
static clock_fn kclock = clock_gettime;

static inline int64_t kread(clockid_t id)
{
	struct timespec ts;
	kclock(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* libc's clock_gettime, past any interposer; the plain symbol when libc
 * cannot be opened by name (a static build). */
static const char *resolve_kernel_clock(void)
{
	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	clock_fn fn = h ? (clock_fn)(uintptr_t)dlsym(h, "clock_gettime") : NULL;
	if (fn) {
		kclock = fn;
		return "libc's clock_gettime (the vDSO where it serves)";
	}
	kclock = clock_gettime;
	return "clock_gettime as linked (libc.so.6 could not be opened by name)";
}

struct shared {
	_Atomic int64_t latest_mono, latest_real; /* the largest value any thread has returned */
	int64_t deadline_ns;                      /* CLOCK_MONOTONIC */
	int64_t cut_mono, cut_real;
	int64_t start_ns, slice_ns;               /* the slices of the run (thread 0) */
	struct cd_acc_slice *slice_mono, *slice_real;
	const volatile sig_atomic_t *stop;
};

struct ring {
	struct cd_acc_point p[RING];
	int n, head;            /* head: the next slot */
};

struct worker {
	struct shared *sh;
	int index;
	struct cd_acc_stats *mono, *real;
	struct cd_acc_sample *bm, *br;      /* the block's readings */
	uint64_t back_thread[2], back_cross[2];
	int64_t back_max[2];
	uint64_t bound_samples;
	int64_t bound_min, bound_max, bound_last;
	/* thread 0 only: points for the frequency error */
	struct cd_acc_point first, last;
	struct ring ring;
	bool stopped;           /* by the stop flag, before the deadline */
	int err;
};

/* fc_info gives up with -EAGAIN while a re-anchor holds the state (its
 * writer may be preempted for milliseconds on a loaded machine): this is
 * no signal handler, so try again for up to 50 ms. */
static int64_t bound_now(void)
{
	struct fc_info info;
	for (int i = 0; i < 500; i++) {
		if (fc_info(&info) == 0)
			return info.error_bound_ns;
		struct timespec pause = { 0, 100000 };
		nanosleep(&pause, NULL);
	}
	return 0;
}

/* Keep v as the largest value returned so far. */
static inline void publish(_Atomic int64_t *latest, int64_t seen, int64_t v)
{
	while (v > seen && !atomic_compare_exchange_weak_explicit(latest, &seen, v, memory_order_acq_rel,
	                                                           memory_order_acquire))
		;
}

static inline void backward(struct worker *w, int c, int64_t v, int64_t prev, int64_t g)
{
	if (v < prev) {
		w->back_thread[c]++;
		if (prev - v > w->back_max[c])
			w->back_max[c] = prev - v;
	}
	if (v < g) {
		w->back_cross[c]++;
		if (g - v > w->back_max[c])
			w->back_max[c] = g - v;
	}
}

static void note_bound(struct worker *w, int64_t b)
{
	if (w->bound_samples == 0 || b < w->bound_min)
		w->bound_min = b;
	if (w->bound_samples == 0 || b > w->bound_max)
		w->bound_max = b;
	w->bound_last = b;
	w->bound_samples++;
}

static void ring_push(struct ring *r, const struct cd_acc_point *p)
{
	r->p[r->head] = *p;
	r->head = (r->head + 1) % RING;
	if (r->n < RING)
		r->n++;
}

static const struct cd_acc_point *ring_newest(const struct ring *r)
{
	return r->n ? &r->p[(r->head + RING - 1) % RING] : NULL;
}

/* Thread 0: the block's narrowest bracket is its point; one point every
 * POINT_SPACING_NS goes into the ring. */
static void keep_points(struct worker *w, int n)
{
	struct cd_acc_point best = { 0 };
	for (int i = 0; i < n; i++)
		cd_acc_point_offer(&best, &w->bm[i]);
	if (!best.set)
		return;
	if (!w->first.set)
		w->first = best;
	w->last = best;
	const struct cd_acc_point *newest = ring_newest(&w->ring);
	if (!newest || best.s.k1 - newest->s.k1 >= POINT_SPACING_NS)
		ring_push(&w->ring, &best);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	int64_t prev_m = INT64_MIN, prev_r = INT64_MIN;
	int64_t before = bound_now();
	note_bound(w, before);
	for (;;) {
		int n = 0;
		bool past = false;
		for (; n < BLOCK && !past; n++) {
			/* The shared latest value is loaded before the bracket, so
			 * that a cache miss on it does not widen the bracket; what
			 * any thread published before this load must not exceed
			 * what fc_now_ns() returns after it. */
			int64_t g = atomic_load_explicit(&sh->latest_mono, memory_order_acquire);
			int64_t k1 = kread(CLOCK_MONOTONIC);
			int64_t f = fc_now_ns();
			int64_t k2 = kread(CLOCK_MONOTONIC);
			w->bm[n] = (struct cd_acc_sample){ k1, f, k2 };
			/* the run's end, seen within an iteration: a block of slow
			 * reads (system calls on a trapped counter) must not
			 * outlast it */
			past = k2 >= sh->deadline_ns;
			backward(w, 0, f, prev_m, g);
			prev_m = f;
			publish(&sh->latest_mono, g, f);

			g = atomic_load_explicit(&sh->latest_real, memory_order_acquire);
			k1 = kread(CLOCK_REALTIME);
			f = fc_realtime_ns();
			k2 = kread(CLOCK_REALTIME);
			w->br[n] = (struct cd_acc_sample){ k1, f, k2 };
			backward(w, 1, f, prev_r, g);
			prev_r = f;
			publish(&sh->latest_real, g, f);
		}
		int64_t after = bound_now();
		note_bound(w, after);
		int64_t b = before > after ? before : after;
		for (int i = 0; i < n; i++) {
			cd_acc_add(w->mono, &w->bm[i], sh->cut_mono, b);
			cd_acc_add(w->real, &w->br[i], sh->cut_real, b);
		}
		if (w->index == 0) {
			keep_points(w, n);
			/* Each REALTIME reading goes in the slice of the MONOTONIC one
			 * taken just before it. */
			cd_acc_slices_add(sh->slice_mono, w->bm, n, sh->start_ns, sh->slice_ns, sh->cut_mono, b);
			for (int i = 0; i < n; i++) {
				struct cd_acc_sample at = w->br[i];
				at.k1 = w->bm[i].k1;
				at.k2 = at.k1 + (w->br[i].k2 - w->br[i].k1);
				at.f = at.k1 + (w->br[i].f - w->br[i].k1);
				cd_acc_slices_add(sh->slice_real, &at, 1, sh->start_ns, sh->slice_ns, sh->cut_real, b);
			}
		}
		before = after;
		if (sh->stop && *sh->stop) {
			w->stopped = true;
			break;
		}
		if (w->bm[n - 1].k2 >= sh->deadline_ns)
			break;
	}
	return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The median bracket of one clock before the run: it sets the cut.  The
 * library is read in it as in the run, so the bracket is what the run's
 * readings will see. */
static int64_t calib_bracket(clockid_t id, int64_t *scratch, int64_t budget_ns, int *reads)
{
	int64_t end = kread(CLOCK_MONOTONIC) + budget_ns;
	int i = 0;
	while (i < CALIB_READS) {
		int64_t k1 = kread(id);
		int64_t f = id == CLOCK_MONOTONIC ? fc_now_ns() : fc_realtime_ns();
		int64_t k2 = kread(id);
		(void)f;
		scratch[i++] = k2 - k1;
		if (i >= CALIB_MIN_READS && (i & 15) == 0 && kread(CLOCK_MONOTONIC) > end)
			break;
	}
	*reads = i;
	qsort(scratch, (size_t)i, sizeof scratch[0], cmp_i64);
	return scratch[i / 2];
}

/* The cost of one kernel read, from a batch: what widens every bracket. */
static volatile int64_t sink;

static double kernel_read_cost(int64_t budget_ns)
{
	enum { N = 100000 };
	int64_t acc = 0, t0 = kread(CLOCK_MONOTONIC), t1 = t0;
	int i = 0;
	/* the batch's own reads tell when it has lasted long enough */
	while (i < N) {
		t1 = kread(CLOCK_MONOTONIC);
		acc += t1;
		i++;
		if (i >= 64 && t1 - t0 > budget_ns)
			break;
	}
	sink = acc;
	return (double)(t1 - t0) / i;
}

/* The frequency error from thread 0's points. */
static void frequency(const struct worker *w, struct cd_acc_clock *c)
{
	c->ppm = cd_acc_ppm(&w->first, &w->last, &c->ppm_err);
	c->ppm_span_s = w->first.set && w->last.set ? (double)(w->last.s.k1 - w->first.s.k1) / 1e9 : 0;
	/* The oldest point no more than 10 s before the last. */
	const struct cd_acc_point *from = &w->first;
	for (int i = 0; i < w->ring.n; i++) {
		const struct cd_acc_point *p = &w->ring.p[(w->ring.head + RING - w->ring.n + i) % RING];
		if (w->last.s.k1 - p->s.k1 <= CD_ACC_TAIL_NS) {
			from = p;
			break;
		}
	}
	c->tail_ppm = cd_acc_ppm(from, &w->last, &c->tail_ppm_err);
	c->tail_span_s = from->set && w->last.set ? (double)(w->last.s.k1 - from->s.k1) / 1e9 : 0;
}

static void free_workers(struct worker *w, int n)
{
	for (int i = 0; w && i < n; i++) {
		free(w[i].mono);
		free(w[i].real);
		free(w[i].bm);
		free(w[i].br);
	}
	free(w);
}

static void collect(struct cd_acc_result *r, struct worker *w, int n)
{
	struct cd_acc_clock *c[2] = { &r->mono, &r->real };
	for (int i = 0; i < n; i++) {
		cd_acc_merge(&r->mono.st, w[i].mono);
		cd_acc_merge(&r->real.st, w[i].real);
		for (int k = 0; k < 2; k++) {
			c[k]->backward_thread += w[i].back_thread[k];
			c[k]->backward_cross += w[i].back_cross[k];
			if (w[i].back_max[k] > c[k]->backward_max_ns)
				c[k]->backward_max_ns = w[i].back_max[k];
		}
		if (i == 0 || w[i].bound_min < r->bound_min_ns)
			r->bound_min_ns = w[i].bound_min;
		if (i == 0 || w[i].bound_max > r->bound_max_ns)
			r->bound_max_ns = w[i].bound_max;
		r->bound_samples += w[i].bound_samples;
		r->interrupted |= w[i].stopped;
	}
	r->bound_last_ns = w[0].bound_last;
	frequency(&w[0], &r->mono);
	/* The wall clock's slope is the same as the monotonic one's bar steps:
	 * not measured twice. */
	r->real.ppm = r->real.ppm_err = r->real.tail_ppm = r->real.tail_ppm_err = NAN;
	cd_acc_summarize(&r->mono.st, &r->mono.sum);
	cd_acc_summarize(&r->real.st, &r->real.sum);
}

void cd_accuracy_run(const struct cd_acc_params *p, struct cd_acc_result *r)
{
	memset(r, 0, sizeof *r);
	r->threads = p->threads;
	r->mono.name = "fc_now_ns";
	r->mono.kernel = "CLOCK_MONOTONIC";
	r->real.name = "fc_realtime_ns";
	r->real.kernel = "CLOCK_REALTIME";
	r->kernel_read = resolve_kernel_clock();
	struct fc_info info;
	if (fc_info(&info) == 0)
		r->syncs_before = info.syncs;

	int64_t *scratch = malloc(CALIB_READS * sizeof *scratch);
	struct worker *w = calloc((size_t)p->threads, sizeof *w);
	pthread_t *tid = calloc((size_t)p->threads, sizeof *tid);
	struct shared sh = { .stop = p->stop };
	bool ok = scratch && w && tid;
	for (int i = 0; ok && i < p->threads; i++) {
		w[i].sh = &sh;
		w[i].index = i;
		w[i].mono = calloc(1, sizeof *w[i].mono);
		w[i].real = calloc(1, sizeof *w[i].real);
		w[i].bm = malloc(BLOCK * sizeof *w[i].bm);
		w[i].br = malloc(BLOCK * sizeof *w[i].br);
		ok = w[i].mono && w[i].real && w[i].bm && w[i].br;
	}
	if (!ok) {
		r->err = -ENOMEM;
		free(scratch);
		free(tid);
		free_workers(w, p->threads);
		return;
	}
	/* the calibration's share of the run, each clock */
	int64_t calib_ns = (int64_t)(p->duration_s * CALIB_SHARE * 1e9);
	r->kernel_read_ns = kernel_read_cost(calib_ns / 4);
	r->mono.calib_bracket_ns = calib_bracket(CLOCK_MONOTONIC, scratch, calib_ns, &r->mono.calib_reads);
	r->real.calib_bracket_ns = calib_bracket(CLOCK_REALTIME, scratch, calib_ns, &r->real.calib_reads);
	free(scratch);
	r->mono.cut_ns = sh.cut_mono = cd_acc_cut(r->mono.calib_bracket_ns);
	r->real.cut_ns = sh.cut_real = cd_acc_cut(r->real.calib_bracket_ns);
	atomic_init(&sh.latest_mono, INT64_MIN);
	atomic_init(&sh.latest_real, INT64_MIN);

	r->mono.start_ns = kread(CLOCK_MONOTONIC);
	r->real.start_ns = kread(CLOCK_REALTIME);
	sh.deadline_ns = r->mono.start_ns + (int64_t)(p->duration_s * 1e9);
	sh.start_ns = r->mono.start_ns;
	sh.slice_ns = (int64_t)(p->duration_s * 1e9) / CD_ACC_SLICES;
	if (sh.slice_ns < 1)
		sh.slice_ns = 1;
	r->slice_s = (double)sh.slice_ns / 1e9;
	sh.slice_mono = r->mono.slice;
	sh.slice_real = r->real.slice;
	int err = 0;
	int started = cd_threads_start(tid, p->threads, work, w, sizeof w[0], &err);
	if (started < p->threads) {
		/* Run with fewer threads than asked would test something else:
		 * stop the ones that started and say why. */
		sh.deadline_ns = 0;
		r->err = err;
	}
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	r->elapsed_s = (double)(kread(CLOCK_MONOTONIC) - r->mono.start_ns) / 1e9;
	if (r->err == 0)
		collect(r, w, started);
	if (fc_info(&info) == 0)
		r->syncs_after = info.syncs;
	free(tid);
	free_workers(w, p->threads);
}

bool cd_accuracy_ok(const struct cd_acc_result *r)
{
	const struct cd_acc_clock *c[2] = { &r->mono, &r->real };
	if (r->err)
		return false;
	for (int k = 0; k < 2; k++)
		if (c[k]->st.over_bound || c[k]->backward_thread || c[k]->backward_cross)
			return false;
	return true;
}
