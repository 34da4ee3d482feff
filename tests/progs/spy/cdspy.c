/* SPDX-License-Identifier: MIT */
/*
 * cdspy.c: libcdspy.so, a test spy preloaded after the accelerator
 * (LD_PRELOAD="libfastclock-preload.so libcdspy.so").  The accelerator's
 * dlsym(RTLD_NEXT) then finds these definitions instead of libc's, so every
 * call it hands on is counted before going on to libc: a call it serves is
 * never seen here.  cdspy_calls() says how many were seen (clockloop finds
 * it with dlsym).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static _Atomic long long calls;

long long cdspy_calls(void);
long long cdspy_calls(void)
{
	return atomic_load(&calls);
}

typedef int (*cg_fn)(clockid_t, struct timespec *);
typedef int (*gtod_fn)(struct timeval *, void *);
typedef time_t (*time_fn)(time_t *);
typedef int (*tsg_fn)(struct timespec *, int);
static cg_fn next_cg;
static gtod_fn next_gtod;
static time_fn next_time;
static tsg_fn next_tsg;

/* Also called on first use: another library's constructor may read the
 * time before ours has run. */
__attribute__((constructor)) static void init(void)
{
	next_cg = (cg_fn)dlsym(RTLD_NEXT, "clock_gettime");
	next_gtod = (gtod_fn)dlsym(RTLD_NEXT, "gettimeofday");
	next_time = (time_fn)dlsym(RTLD_NEXT, "time");
	next_tsg = (tsg_fn)dlsym(RTLD_NEXT, "timespec_get");
}

/* CDSPY_SLOW_US=N: every clock_gettime of the program's own takes N
 * microseconds more (a spin), as a read that traps into the kernel does
 * on an arm64 timer erratum: for tests that a measurement of such a call
 * still ends in its time.  Read once, at the first call. */
static long slow_ns = -1;

static void spin(void)
{
	if (slow_ns < 0) {
		const char *e = getenv("CDSPY_SLOW_US");
		long us = e ? strtol(e, NULL, 10) : 0;
		slow_ns = us > 0 && us <= 1000000 ? us * 1000 : 0;
	}
	if (slow_ns == 0)
		return;
	struct timespec a, b;
	next_cg(CLOCK_MONOTONIC, &a);
	do
		next_cg(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < slow_ns);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
	if (!next_cg)
		init();
	spin();
	return next_cg(id, ts);
}

int gettimeofday(struct timeval *tv, void *tz)
{
	atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
	if (!next_gtod)
		init();
	return next_gtod(tv, tz);
}

time_t time(time_t *t)
{
	atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
	if (!next_time)
		init();
	return next_time(t);
}

int timespec_get(struct timespec *ts, int base)
{
	atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
	if (!next_tsg)
		init();
	return next_tsg(ts, base);
}

/* CDSPY_REPORT=1: the count on stderr at exit (how many time calls a
 * program makes, e.g. per request of a server). */
__attribute__((destructor)) static void report(void)
{
	const char *r = getenv("CDSPY_REPORT");
	if (r && r[0] == '1')
		fprintf(stderr, "cdspy: %lld time calls\n", cdspy_calls());
}
