/* SPDX-License-Identifier: MIT */
/*
 * inconsistency: the accelerator's answer to the kernel's
 * tools/testing/selftests/timers/inconsistency-check.c.  Run it under
 * libfastclock-preload.so (FASTCLOCK=force where the machine would not
 * otherwise be accelerated).  For each served way of reading the time,
 * THREADS threads read it back to back through libc's symbols (which the
 * preload interposes) for SECONDS, and check:
 *
 *   - never backwards within a thread (as the kernel's test);
 *   - never backwards across threads: a value is never below the largest
 *     value any thread had published before the read began;
 *   - within the bound around the kernel's value: every 64th read is
 *     bracketed by two raw system calls of the same clock (past the shim
 *     and the vDSO), kernel_before - bound <= value <= kernel_after +
 *     bound.  The bound is the one the accelerator's own library states
 *     for the values it serves this process (fastclock_preload_info(),
 *     found with dlsym: fc_info().error_bound_ns), the largest seen during
 *     the run; the offsets of REALTIME, BOOTTIME, TAI and the raw line add
 *     their bracket (docs/fastclock-internals.md, "Limits, in detail"), which fc_info() does not
 *     report: taken as the bound again plus twice the narrowest bracket of
 *     two system calls.  Without the accelerator the bound is 0: the
 *     values are the kernel's.
 *
 * On a failure the last values of the thread are printed, as the kernel's
 * test does.  One line per way; exit 0 when every way passed, 1 otherwise.
 *
 * usage: inconsistency [-t SECONDS] [-T THREADS] [-x SLACK_PERCENT] [-m MIN_ALLOWED_NS] [WAY...]
 * ways: realtime monotonic raw boottime tai gettimeofday time (default:
 * all but time, whose 1 s resolution makes the bound meaningless)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fastclock.h"
#include "ways.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define RING 16
#define BRACKET_EVERY 64
#define MAX_THREADS 64

static const struct way *way;
static _Atomic int64_t published;   /* the largest value any thread saw */
static atomic_bool stop;

struct result {
	long long calls, brackets, back, cross_back, outside;
	int64_t worst_back, worst_outside, narrowest;
	int64_t ring[RING];
	int ring_at;
	bool dumped;
};

static struct result res[MAX_THREADS];
/* -x: a percentage of the bound allowed beyond it (the lab's TCG guests,
 * whose emulated hpet jitters against their TSC by hundreds of us) */
static int64_t slack_percent;
/* -m: the least allowed, whatever the bound (the same guests: their jitter
 * does not scale with the bound) */
static int64_t min_allowed_ns;
static _Atomic int64_t bound_ns;   /* the library's, the largest seen */

static int64_t kernel_ns(clockid_t id)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, (long)id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One read through the (interposed) libc symbol, in ns. */
static int64_t read_way(void)
{
	struct timespec ts;
	struct timeval tv;
	switch (way->call) {
	case WAY_CLOCK_GETTIME:
		clock_gettime(way->id, &ts);
		return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	case WAY_GETTIMEOFDAY:
		gettimeofday(&tv, NULL);
		return (int64_t)tv.tv_sec * 1000000000 + tv.tv_usec * 1000;
	default:
		return (int64_t)time(NULL) * 1000000000;
	}
}

static void dump(struct result *r, int64_t v, const char *what)
{
	if (r->dumped)
		return;
	r->dumped = true;
	fprintf(stderr, "%s: %s; the thread's last values:\n", way->name, what);
	for (int i = 0; i < RING; i++) {
		int64_t x = r->ring[(r->ring_at + i) % RING];
		fprintf(stderr, "  %lld.%09lld\n", (long long)(x / 1000000000), (long long)(x % 1000000000));
	}
	fprintf(stderr, "  --------------------\n  %lld.%09lld\n", (long long)(v / 1000000000),
	        (long long)(v % 1000000000));
}

/* v read after ref, and below it: counted in *count, the worst kept, the
 * thread's last values shown (once). */
static void went_back(struct result *r, long long *count, int64_t ref, int64_t v, const char *what)
{
	(*count)++;
	if (ref - v > r->worst_back)
		r->worst_back = ref - v;
	dump(r, v, what);
}

static void *worker(void *arg)
{
	struct result *r = arg;
	int64_t last = INT64_MIN;
	r->narrowest = INT64_MAX;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < BRACKET_EVERY; i++) {
			int64_t before = atomic_load_explicit(&published, memory_order_acquire);
			int64_t v = read_way();
			r->calls++;
			if (v < last)
				went_back(r, &r->back, last, v, "went backwards within a thread");
			if (v < before)
				went_back(r, &r->cross_back, before, v, "below a value another thread saw earlier");
			r->ring[r->ring_at++ % RING] = v;
			last = v;
			int64_t p = before;
			while (v > p && !atomic_compare_exchange_weak_explicit(&published, &p, v, memory_order_release,
			                                                        memory_order_relaxed))
				;
		}
		int64_t k1 = kernel_ns(way->id);
		int64_t v = read_way();
		int64_t k2 = kernel_ns(way->id);
		r->brackets++;
		if (k2 - k1 < r->narrowest)
			r->narrowest = k2 - k1;
		/* gettimeofday and time truncate: compare what they can show */
		int64_t lo = k1 - way->dropped_ns, hi = k2;
		int64_t out = v < lo ? lo - v : v > hi ? v - hi : 0;
		if (out > r->worst_outside)
			r->worst_outside = out;
		if (v < last) {
			r->back++;
			dump(r, v, "went backwards within a thread");
		}
		last = v;
	}
	return NULL;
}

static int run_way(const struct way *w, int threads, double seconds)
{
	way = w;
	atomic_store(&published, INT64_MIN);
	atomic_store(&stop, false);
	atomic_store(&bound_ns, 0);
	memset(res, 0, sizeof res);
	pthread_t th[MAX_THREADS];
	int started = 0;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, worker, &res[i]) == 0)
			started++;
	struct timespec tick = { 0, 20000000 };
	int (*preload_info)(struct fc_info *, int *) =
		(int (*)(struct fc_info *, int *))dlsym(RTLD_DEFAULT, "fastclock_preload_info");
	for (double t = 0; t < seconds; t += 0.02) {
		nanosleep(&tick, NULL);
		struct fc_info fi;
		int serving = 0;
		if (preload_info && preload_info(&fi, &serving) == 0 && fi.source == FC_SOURCE_COUNTER &&
		    fi.error_bound_ns > atomic_load(&bound_ns))
			atomic_store(&bound_ns, fi.error_bound_ns);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	struct result t = { .narrowest = INT64_MAX };
	for (int i = 0; i < started; i++) {
		t.calls += res[i].calls;
		t.brackets += res[i].brackets;
		t.back += res[i].back;
		t.cross_back += res[i].cross_back;
		if (res[i].worst_back > t.worst_back)
			t.worst_back = res[i].worst_back;
		if (res[i].worst_outside > t.worst_outside)
			t.worst_outside = res[i].worst_outside;
		if (res[i].narrowest < t.narrowest)
			t.narrowest = res[i].narrowest;
	}
	int64_t bound = atomic_load(&bound_ns);
	/* MONOTONIC: the stated bound exactly.  The others add the bracket of
	 * their offset, which fc_info() does not report; it is measured at the
	 * same anchors with the same kind of kernel reads as the line, so it is
	 * taken as the line's own bound again, plus the narrowest bracket of
	 * two system calls seen here. */
	int64_t allowed = bound + (w->id == CLOCK_MONOTONIC && w->call == WAY_CLOCK_GETTIME ? 0 : bound + 2 * t.narrowest);
	allowed += bound * slack_percent / 100;
	if (allowed < min_allowed_ns)
		allowed = min_allowed_ns;
	bool ok = started == threads && t.back == 0 && t.cross_back == 0 && t.worst_outside <= allowed && t.calls > 0;
	printf("%s threads=%d calls=%lld backwards=%lld cross_thread_backwards=%lld worst_backwards_ns=%lld "
	       "brackets=%lld worst_outside_ns=%lld bound_ns=%lld allowed_ns=%lld %s\n",
	       w->name, started, t.calls, t.back, t.cross_back, (long long)t.worst_back, t.brackets,
	       (long long)t.worst_outside, (long long)bound, (long long)allowed, ok ? "PASS" : "FAIL");
	fflush(stdout);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	double seconds = 1.0;
	int threads = 4, opt;
	while ((opt = getopt(argc, argv, "t:T:x:m:")) != -1) {
		if (opt == 't')
			seconds = atof(optarg);
		else if (opt == 'T')
			threads = atoi(optarg);
		else if (opt == 'x')
			slack_percent = atoi(optarg);
		else if (opt == 'm')
			min_allowed_ns = atoll(optarg);
		else
			return 2;
	}
	if (!(seconds > 0) || threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "usage: inconsistency [-t SECONDS] [-T THREADS] [-x SLACK_PERCENT] [-m MIN_ALLOWED_NS] [WAY...]\n");
		return 2;
	}
	int failed = 0;
	if (optind == argc) {
		for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++)
			if (ways[i].checked && ways[i].call != WAY_TIME)
				failed |= run_way(&ways[i], threads, seconds);
		return failed;
	}
	for (int a = optind; a < argc; a++) {
		const struct way *w = way_named(argv[a]);
		if (!w || !w->checked) {
			fprintf(stderr, "inconsistency: unknown way '%s'\n", argv[a]);
			return 2;
		}
		failed |= run_way(w, threads, seconds);
	}
	return failed;
}
