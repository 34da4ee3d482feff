/* SPDX-License-Identifier: MIT */
/*
 * bench/served.c: what the accelerator's served calls cost against libc's
 * own, in one process: run under LD_PRELOAD=libfastclock-preload.so with
 * FASTCLOCK=force (`make bench-served`).  clock_gettime and gettimeofday
 * called by name reach the accelerator; libc's are looked up in libc.so.6
 * itself (the vDSO's read wherever the clocksource allows).  Interleaved
 * batches, each timed by the thread's CPU time (a system call, never the
 * functions measured), the order swapped every round; the figure is the
 * median over the rounds of the served call's ns over libc's in that round.
 */
#include "probe/probe.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 31
#define CALLS 200000

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);

static clock_gettime_fn libc_clock_gettime;
static gettimeofday_fn libc_gettimeofday;
static volatile long sink;

static double cpu_ns(void)
{
	struct timespec t;
	syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ns a call: clock_gettime(id) (id >= 0) or gettimeofday (id < 0), served
 * or libc's */
static double batch(int id, int served)
{
	struct timespec ts;
	struct timeval tv;
	long acc = 0;
	double t0 = cpu_ns();
	for (long i = 0; i < CALLS; i++) {
		if (id >= 0) {
			if (served)
				clock_gettime(id, &ts);
			else
				libc_clock_gettime(id, &ts);
			acc += ts.tv_nsec;
		} else {
			if (served)
				gettimeofday(&tv, NULL);
			else
				libc_gettimeofday(&tv, NULL);
			acc += tv.tv_usec;
		}
	}
	double t1 = cpu_ns();
	sink = acc;
	return (t1 - t0) / CALLS;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (!libc || !(libc_clock_gettime = (clock_gettime_fn)dlsym(libc, "clock_gettime")) ||
	    !(libc_gettimeofday = (gettimeofday_fn)dlsym(libc, "gettimeofday"))) {
		fprintf(stderr, "bench-served: libc's clock_gettime not found\n");
		return 1;
	}
	static const struct {
		const char *name;
		int id;
	} calls[] = {
		{ "clock_gettime(MONOTONIC)", CLOCK_MONOTONIC },
		{ "clock_gettime(REALTIME)", CLOCK_REALTIME },
		{ "gettimeofday", -1 },
	};
	enum { N = sizeof calls / sizeof calls[0] };
	static double ratio[N][ROUNDS], served[N][ROUNDS], own[N][ROUNDS];
	for (int r = 0; r < ROUNDS; r++)
		for (int c = 0; c < N; c++) {
			double a, b;
			if (r & 1) {
				a = batch(calls[c].id, 1);
				b = batch(calls[c].id, 0);
			} else {
				b = batch(calls[c].id, 0);
				a = batch(calls[c].id, 1);
			}
			served[c][r] = a;
			own[c][r] = b;
			ratio[c][r] = a / b;
		}
	char cpu[200];
	cd_cpu_describe_live(cpu, sizeof cpu);
	printf("served calls against libc's own (the vDSO) on %s,\n"
	       "%d interleaved rounds of %d calls, medians:\n", cpu, ROUNDS, CALLS);
	printf("  %-26s %9s %9s %6s %11s\n", "call", "served ns", "libc ns", "ratio", "(min-max)");
	for (int c = 0; c < N; c++) {
		qsort(ratio[c], ROUNDS, sizeof(double), cmp);
		qsort(served[c], ROUNDS, sizeof(double), cmp);
		qsort(own[c], ROUNDS, sizeof(double), cmp);
		printf("  %-26s %9.1f %9.1f %6.2f %5.2f-%5.2f\n", calls[c].name, served[c][ROUNDS / 2],
		       own[c][ROUNDS / 2], ratio[c][ROUNDS / 2], ratio[c][0], ratio[c][ROUNDS - 1]);
	}
	return 0;
}
