/* SPDX-License-Identifier: MIT */
/*
 * stepwatch SECONDS [READYFILE]: reads CLOCK_REALTIME through libc's symbol (served by
 * the accelerator) back to back for SECONDS, and beside it the kernel's
 * value with the raw system call, before and after.  While the served value
 * lies more than 1 ms outside that bracket (a step of the wall clock, `date
 * -s`, not yet seen), the reads count as stale; it prints the longest stale stretch,
 * measured on CLOCK_MONOTONIC (raw system call) from the start of its first
 * read to the start of its last, and the largest difference seen:
 *
 *   kernel_steps=K steps_seen=N longest_stale_ns=X max_diff_ns=Y reads=Z
 *
 * kernel_steps counts the jumps of the kernel's own clock (over 1 s between
 * two reads); steps_seen the stale stretches (0 when the library saw a step
 * before the next read).
 * The accelerator promises the stretch is at most FC_STEP_CHECK_NS (1 ms)
 * while the program keeps reading.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int64_t raw(clockid_t id)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, (long)id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	/* READYFILE: created once the reads begin, for the caller to step the
	 * clock only then (a process starts slowly under emulation) */
	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");
		if (f)
			fclose(f);
	}
	int64_t start = raw(CLOCK_MONOTONIC), stale_since = -1, longest = 0, max_diff = 0, reads = 0;
	int64_t prev_k2 = raw(CLOCK_REALTIME);
	long steps = 0, kernel_steps = 0;
	while (raw(CLOCK_MONOTONIC) - start < (int64_t)(secs * 1e9)) {
		struct timespec ts;
		/* bracketed by the kernel's value before and after: a read
		 * delayed by preemption is not a stale one */
		/* now: when the read began.  The library reads the counter at
		 * the start of the call and serves the offset in force at that
		 * counter value; a call held up inside (a preempted vCPU) is
		 * as stale as when it began, not as when it returned */
		int64_t now = raw(CLOCK_MONOTONIC);
		int64_t k1 = raw(CLOCK_REALTIME);
		clock_gettime(CLOCK_REALTIME, &ts);
		int64_t served = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		int64_t k2 = raw(CLOCK_REALTIME);
		int64_t d = served < k1 ? k1 - served : served > k2 ? served - k2 : 0;
		/* the kernel's own clock jumped between two of our reads */
		if (k1 - prev_k2 > 1000000000 || prev_k2 - k1 > 1000000000)
			kernel_steps++;
		prev_k2 = k2;
		reads++;
		if (d > max_diff)
			max_diff = d;
		if (d > 1000000) {
			if (stale_since < 0) {
				stale_since = now;
				steps++;
			}
			if (now - stale_since > longest)
				longest = now - stale_since;
		} else {
			stale_since = -1;
		}
	}
	printf("kernel_steps=%ld steps_seen=%ld longest_stale_ns=%lld max_diff_ns=%lld reads=%lld\n", kernel_steps,
	       steps, (long long)longest, (long long)max_diff, (long long)reads);
	return 0;
}
