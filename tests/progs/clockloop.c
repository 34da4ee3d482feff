/* SPDX-License-Identifier: MIT */
/*
 * clockloop: a clock-heavy program for the accelerator's tests.  For each
 * way of reading the time named on the command line it makes CALLS calls
 * through libc's symbols (so LD_PRELOAD can reach them), in BATCHES
 * batches, and prints one line:
 *
 *   NAME NS_PER_CALL PASSED_ON
 *
 * NS_PER_CALL is the best batch's cost, timed with the raw system call
 * (never through the functions under test).  PASSED_ON is how many calls
 * reached libc's function: when the test spy (libcdspy.so, preloaded after
 * the accelerator) is loaded, it counts the calls the accelerator handed on
 * to the next definition; -1 without the spy.  A served call never does.
 *
 * usage: clockloop [-n CALLS] [-b BATCHES] WAY...
 * ways: realtime monotonic raw boottime tai coarse gettimeofday time
 *       timespec_get cputime
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ways.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long raw_ns(void)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long calls = 200000, batches = 5;
	int opt;
	while ((opt = getopt(argc, argv, "n:b:")) != -1) {
		if (opt == 'n')
			calls = atol(optarg);
		else if (opt == 'b')
			batches = atol(optarg);
		else
			return 2;
	}
	if (optind >= argc || calls < 1 || batches < 1) {
		fprintf(stderr, "usage: clockloop [-n CALLS] [-b BATCHES] WAY...\n");
		return 2;
	}
	long long (*spy)(void) = (long long (*)(void))dlsym(RTLD_DEFAULT, "cdspy_calls");
	for (int a = optind; a < argc; a++) {
		const struct way *w = way_named(argv[a]);
		if (!w) {
			fprintf(stderr, "clockloop: unknown way '%s'\n", argv[a]);
			return 2;
		}
		long long before = spy ? spy() : 0, best = -1;
		volatile long sink = 0;
		for (long b = 0; b < batches; b++) {
			long long t0 = raw_ns();
			for (long i = 0; i < calls; i++) {
				struct timespec ts;
				struct timeval tv;
				switch (w->call) {
				case WAY_CLOCK_GETTIME: clock_gettime(w->id, &ts); sink += ts.tv_nsec; break;
				case WAY_GETTIMEOFDAY: gettimeofday(&tv, NULL); sink += tv.tv_usec; break;
				case WAY_TIME: sink += time(NULL); break;
				case WAY_TIMESPEC_GET: timespec_get(&ts, TIME_UTC); sink += ts.tv_nsec; break;
				}
			}
			long long d = raw_ns() - t0;
			if (best < 0 || d < best)
				best = d;
		}
		printf("%s %.1f %lld\n", w->name, (double)best / (double)calls,
		       spy ? spy() - before : -1LL);
	}
	return 0;
}
