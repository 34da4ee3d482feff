/* SPDX-License-Identifier: MIT */
/*
 * fc_threads: libfastclock under concurrency, for ThreadSanitizer (tests/tsan/run
 * builds it with the sources in lib/ and -fsanitize=thread, and once without).
 *
 *   fc_threads [SECONDS]      (default 2)
 *
 * For SECONDS, at once:
 *   - 4 reader threads call every reading function (fc_now_ns,
 *     fc_now_ns_unordered, fc_realtime_ns, fc_gettime for MONOTONIC,
 *     REALTIME, MONOTONIC_RAW, BOOTTIME, TAI and an id it passes on,
 *     fc_coarse_ns, fc_cycles/fc_cycles_to_ns, fc_elapsed_ns, and now and
 *     then fc_info).  MONOTONIC, MONOTONIC_RAW and BOOTTIME must never go
 *     backwards across threads: each reader loads the largest value any
 *     thread has published (a shared atomic, acquire) before it reads the
 *     clock, and must read no less; then raises the shared value to its own.
 *     fc_now_ns_unordered must not go backwards within a thread.
 *   - a re-anchor thread calls fc_resync() in a loop (forced re-anchors:
 *     the readers race the writer all the time);
 *   - a fork thread forks every 20 ms while the others read and re-anchor;
 *     the child (alarm(5): a deadlock kills it) reads every clock no less
 *     than what the parent had published before the fork, calls fc_resync()
 *     (0 or -ENOTSUP: never -EBUSY, the lock must have been released in the
 *     child) and fc_info(), and exits 0;
 *   - the main thread re-anchors in a loop while a signaller thread sends it
 *     SIGUSR1 every 200 us; the handler reads fc_now_ns, fc_realtime_ns,
 *     fc_gettime(MONOTONIC_RAW), calls fc_resync() (0, -EBUSY or -ENOTSUP)
 *     and, one time in 16, fc_info() (0 or -EAGAIN), and checks
 *     never-backwards like a reader.
 * At the end: fc_info before and after (the number of re-anchors must have
 * grown when the counter is in use), the counts, and exit status 0, or 1
 * with every failed check printed.  Environment as for the library
 * (FASTCLOCK=force, FASTCLOCK=off, FASTCLOCK_VERDICT=...).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fastclock.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NREADERS 4
#define NS 1000000000LL

enum { G_MONO, G_RAW, G_BOOT, NG };
static _Atomic int64_t g_last[NG];
static atomic_int stop;
static atomic_ulong failures, reads, handler_runs, handler_busy, forks, resyncs, resync_busy;

/* A backward step: got < want.  (Not for the signal handler: stdio.) */
static void fail(const char *what, int64_t got, int64_t want)
{
	if (atomic_fetch_add(&failures, 1) < 20)
		fprintf(stderr, "FAIL: %s: %" PRId64 " < %" PRId64 " (by %" PRId64 " ns)\n", what, got, want, want - got);
}

/* Any other failed check, with the value that failed it. */
static void fail_code(const char *what, long code)
{
	if (atomic_fetch_add(&failures, 1) < 20)
		fprintf(stderr, "FAIL: %s: %ld\n", what, code);
}

/* In a signal handler: count only, print from the main thread later. */
static atomic_ulong sig_fail_count;
static _Atomic int64_t sig_fail_by;

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NS + t->tv_nsec;
}

static int64_t gettime_ns(clockid_t id)
{
	struct timespec t;
	int r = fc_gettime(id, &t);
	if (r != 0) {
		fail_code("fc_gettime returned an error", r);
		return 0;
	}
	return ts_ns(&t);
}

/* Load the published maximum, then read: the read must be no less.  Then
 * publish.  Returns 0 if it went backwards. */
static int check_publish(int g, int64_t (*rd)(void), int64_t *got, int64_t *was)
{
	int64_t before = atomic_load_explicit(&g_last[g], memory_order_acquire);
	int64_t v = rd();
	*got = v;
	*was = before;
	int ok = v >= before;
	int64_t cur = before;
	while (v > cur && !atomic_compare_exchange_weak_explicit(&g_last[g], &cur, v, memory_order_acq_rel,
	                                                       memory_order_acquire))
		;
	return ok;
}

static int64_t rd_mono(void)
{
	return fc_now_ns();
}

static int64_t rd_mono_gettime(void)
{
	return gettime_ns(CLOCK_MONOTONIC);
}

static int64_t rd_raw(void)
{
	return gettime_ns(CLOCK_MONOTONIC_RAW);
}

static int64_t rd_boot(void)
{
	return gettime_ns(CLOCK_BOOTTIME);
}

static _Thread_local volatile int64_t sink;  /* per thread: no race of our own */

static void *reader(void *arg)
{
	long id = (long)arg;
	int64_t last_unord = INT64_MIN, got, was;
	uint64_t n = 0;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (!check_publish(G_MONO, rd_mono, &got, &was))
			fail("fc_now_ns backwards across threads", got, was);
		if (!check_publish(G_MONO, rd_mono_gettime, &got, &was))
			fail("fc_gettime(CLOCK_MONOTONIC) backwards across threads", got, was);
		if (!check_publish(G_RAW, rd_raw, &got, &was))
			fail("fc_gettime(CLOCK_MONOTONIC_RAW) backwards across threads", got, was);
		if (!check_publish(G_BOOT, rd_boot, &got, &was))
			fail("fc_gettime(CLOCK_BOOTTIME) backwards across threads", got, was);
		int64_t u = fc_now_ns_unordered();
		if (u < last_unord)
			fail("fc_now_ns_unordered backwards on one thread", u, last_unord);
		last_unord = u;
		sink = fc_realtime_ns();
		sink = gettime_ns(CLOCK_REALTIME);
		sink = gettime_ns(CLOCK_TAI);
		sink = gettime_ns(CLOCK_PROCESS_CPUTIME_ID);  /* passed on to the kernel */
		sink = fc_coarse_ns();
		uint64_t c0 = fc_cycles();
		sink = fc_cycles_to_ns(fc_cycles() - c0);
		sink = fc_elapsed_ns(got);
		struct timespec bad;
		if (fc_gettime((clockid_t)12345, &bad) != -EINVAL)
			fail_code("fc_gettime(unknown id) is not -EINVAL", 0);
		if ((++n & 1023) == (unsigned long)id) {
			struct fc_info info;
			int r = fc_info(&info);
			if (r != 0 && r != -EAGAIN)
				fail_code("fc_info failed", r);
		}
	}
	atomic_fetch_add(&reads, n);
	return NULL;
}

static void *resyncer(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int r = fc_resync();
		if (r == 0)
			atomic_fetch_add(&resyncs, 1);
		else if (r == -EBUSY)
			atomic_fetch_add(&resync_busy, 1);
		else if (r != -ENOTSUP)
			fail_code("fc_resync returned an unexpected error", r);
		struct timespec d = { 0, 50000 };
		nanosleep(&d, NULL);
	}
	return NULL;
}

/* The child of a fork: only async-signal-safe calls, then _exit. */
static int child_checks(const int64_t *before)
{
	alarm(5);
	int bad = 0;
	for (int i = 0; i < 2000; i++) {
		if (fc_now_ns() < before[G_MONO])
			bad |= 1;
		if (rd_raw() < before[G_RAW])
			bad |= 2;
		if (rd_boot() < before[G_BOOT])
			bad |= 4;
		sink = fc_realtime_ns();
	}
	int r = fc_resync();
	if (r != 0 && r != -ENOTSUP)
		bad |= 8;  /* -EBUSY: the lock of a writer in another thread survived the fork */
	struct fc_info info;
	if (fc_info(&info) != 0)
		bad |= 16;
	if (fc_now_ns() < before[G_MONO])
		bad |= 32;
	return bad;
}

static void *forker(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int64_t before[NG];
		for (int g = 0; g < NG; g++)
			before[g] = atomic_load_explicit(&g_last[g], memory_order_acquire);
		pid_t pid = fork();
		if (pid < 0) {
			fail_code("fork failed", errno);
			break;
		}
		if (pid == 0)
			_exit(child_checks(before));
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		atomic_fetch_add(&forks, 1);
		if (WIFSIGNALED(st))
			fail_code("forked child killed by a signal (alarm: a deadlock?)", WTERMSIG(st));
		else if (WEXITSTATUS(st) != 0)
			fail_code("forked child's checks failed (bits: 1 mono, 2 raw, 4 boot backwards, 8 fc_resync "
			          "-EBUSY, 16 fc_info failed, 32 mono backwards at the end)",
			          WEXITSTATUS(st));
		struct timespec d = { 0, 20000000 };
		nanosleep(&d, NULL);
	}
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	int saved = errno;
	unsigned long k = atomic_fetch_add(&handler_runs, 1);
	int64_t before = atomic_load_explicit(&g_last[G_MONO], memory_order_acquire);
	int64_t v = fc_now_ns();
	if (v < before) {
		atomic_fetch_add(&sig_fail_count, 1);
		atomic_store(&sig_fail_by, before - v);
	}
	int64_t cur = before;
	while (v > cur && !atomic_compare_exchange_weak_explicit(&g_last[G_MONO], &cur, v, memory_order_acq_rel,
	                                                       memory_order_acquire))
		;
	before = atomic_load_explicit(&g_last[G_RAW], memory_order_acquire);
	struct timespec t;
	if (fc_gettime(CLOCK_MONOTONIC_RAW, &t) != 0 || ts_ns(&t) < before)
		atomic_fetch_add(&sig_fail_count, 1);
	sink = fc_realtime_ns();
	int r = fc_resync();
	if (r == -EBUSY)
		atomic_fetch_add(&handler_busy, 1);
	else if (r != 0 && r != -ENOTSUP)
		atomic_fetch_add(&sig_fail_count, 1);
	if ((k & 15) == 0) {
		struct fc_info info;
		r = fc_info(&info);
		if (r != 0 && r != -EAGAIN)
			atomic_fetch_add(&sig_fail_count, 1);
	}
	errno = saved;
}

static pthread_t main_thread;

static void *signaller(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_kill(main_thread, SIGUSR1);
		struct timespec d = { 0, 200000 };
		nanosleep(&d, NULL);
	}
	return NULL;
}

static void print_info(const char *when, const struct fc_info *i)
{
	printf("%s: source %s (%s): %s; syncs %" PRIu64 ", bound %" PRId64 " ns, counter_backwards %" PRIu64 "\n",
	       when, fc_source_name(i->source), fc_reason_name(i->reason), i->reason_text, i->syncs, i->error_bound_ns,
	       i->counter_backwards);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	for (int g = 0; g < NG; g++)
		atomic_store(&g_last[g], INT64_MIN);
	struct fc_info i0, i1;
	if (fc_info(&i0) != 0) {
		fprintf(stderr, "fc_info failed\n");
		return 1;
	}
	print_info("start", &i0);
	main_thread = pthread_self();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);

	pthread_t th[NREADERS + 3];
	int n = 0;
	for (long i = 0; i < NREADERS; i++)
		pthread_create(&th[n++], NULL, reader, (void *)i);
	pthread_create(&th[n++], NULL, resyncer, NULL);
	pthread_create(&th[n++], NULL, forker, NULL);
	pthread_create(&th[n++], NULL, signaller, NULL);

	/* the main thread re-anchors while SIGUSR1 interrupts it */
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned long main_resyncs = 0;
	do {
		if (fc_resync() == 0)
			main_resyncs++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (ts_ns(&now) - ts_ns(&t0) < (int64_t)(secs * 1e9));
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	/* let a last pending SIGUSR1 run */
	fc_resync();

	if (fc_info(&i1) != 0) {
		fprintf(stderr, "fc_info failed\n");
		return 1;
	}
	print_info("end", &i1);
	unsigned long sf = atomic_load(&sig_fail_count);
	if (sf) {
		fprintf(stderr, "FAIL: %lu check(s) failed in the signal handler (last backward step %" PRId64 " ns)\n", sf,
		        atomic_load(&sig_fail_by));
		atomic_fetch_add(&failures, sf);
	}
	if (i1.source == FC_SOURCE_COUNTER && i1.syncs < i0.syncs + 100) {
		fprintf(stderr, "FAIL: only %" PRIu64 " re-anchors during the test\n", i1.syncs - i0.syncs);
		atomic_fetch_add(&failures, 1);
	}
	if (atomic_load(&handler_runs) < 10) {
		fprintf(stderr, "FAIL: the signal handler ran %lu times\n", atomic_load(&handler_runs));
		atomic_fetch_add(&failures, 1);
	}
	if (atomic_load(&forks) < 5) {
		fprintf(stderr, "FAIL: only %lu forks\n", atomic_load(&forks));
		atomic_fetch_add(&failures, 1);
	}
	printf("%.1f s: %lu reads by %d threads; re-anchors: %lu by the re-anchor thread (%lu busy), %lu by main; "
	       "%lu signal handler runs (%lu found the lock busy); %lu forks; %" PRIu64 " re-anchors in all; "
	       "%lu failed checks\n",
	       secs, atomic_load(&reads), NREADERS, atomic_load(&resyncs), atomic_load(&resync_busy), main_resyncs,
	       atomic_load(&handler_runs), atomic_load(&handler_busy), atomic_load(&forks), i1.syncs - i0.syncs,
	       atomic_load(&failures));
	return atomic_load(&failures) ? 1 : 0;
}
