/* SPDX-License-Identifier: MIT */
/*
 * fctimens: libfastclock in a child forked (without exec) into another time
 * namespace.  The parent starts the library on the counter, then calls
 * unshare(CLONE_NEWTIME) with MONOTONIC and BOOTTIME offsets of OFFSET
 * seconds (which apply to its children only), and forks.  The child's
 * first read, and every read over 20 ms, must be the namespace's clock
 * within the library's stated bound (bracketed by two raw system calls);
 * BOOTTIME too; an absolute clock_nanosleep until "served now + 50 ms"
 * must return within a second; REALTIME (not namespaced) the kernel's.
 * With "boottime", only BOOTTIME's offset is set: MONOTONIC is the
 * parent's, and the child's BOOTTIME and REALTIME must not be made from
 * the parent's BOOTTIME - MONOTONIC.  Prints one line per child:
 *   timens offset=S run=N first_ns=D worst_ns=W boot_ns=B rt_ns=R bound_ns=X back=K sleep_ms=M source=...
 * and exits 0 when every child held.
 *
 * Usage: fctimens OFFSET_S RUNS [boottime]
 */
#define _GNU_SOURCE
#include "fastclock.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static long long kns(clockid_t id)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, id, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long fc(clockid_t id)
{
	struct timespec ts;
	fc_gettime(id, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long off_by(long long v, long long k0, long long k1)
{
	return v < k0 ? v - k0 : v > k1 ? v - k1 : 0;
}

static int child(long offset, int run)
{
	long long k0 = kns(CLOCK_MONOTONIC);
	long long first = fc_now_ns();
	long long k1 = kns(CLOCK_MONOTONIC);
	long long first_off = off_by(first, k0, k1), worst = first_off, prev = first;
	long long b0 = kns(CLOCK_BOOTTIME), b = fc(CLOCK_BOOTTIME), b1 = kns(CLOCK_BOOTTIME);
	long long boot_off = off_by(b, b0, b1);
	long long r0 = kns(CLOCK_REALTIME), rt = fc_realtime_ns(), r1 = kns(CLOCK_REALTIME);
	long long rt_off = off_by(rt, r0, r1);
	int back = 0;
	long long end = k1 + 20000000;
	while (k1 < end) {
		k0 = kns(CLOCK_MONOTONIC);
		long long v = fc_now_ns();
		k1 = kns(CLOCK_MONOTONIC);
		long long o = off_by(v, k0, k1);
		if (llabs(o) > llabs(worst))
			worst = o;
		if (v < prev)
			back++;
		prev = v;
	}
	/* an absolute sleep until the served clock's now + 50 ms */
	struct timespec until;
	fc_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += 50000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_nsec -= 1000000000;
		until.tv_sec++;
	}
	long long s0 = kns(CLOCK_MONOTONIC);
	int r;
	do
		r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
	while (r == EINTR);
	long long slept = kns(CLOCK_MONOTONIC) - s0;
	struct fc_info in;
	memset(&in, 0, sizeof in);
	fc_info(&in);
	printf("timens offset=%ld run=%d first_ns=%lld worst_ns=%lld boot_ns=%lld rt_ns=%lld bound_ns=%lld back=%d "
	       "sleep_ms=%lld source=%s\n",
	       offset, run, first_off, worst, boot_off, rt_off, (long long)in.error_bound_ns, back, slept / 1000000,
	       fc_source_name(in.source));
	fflush(stdout);
	long long tol = in.error_bound_ns + 20000;  /* TCG's clocks jitter: see the scenario */
	return llabs(first_off) <= tol && llabs(worst) <= tol && llabs(boot_off) <= tol && llabs(rt_off) <= tol &&
	               back == 0 && slept < 1000000000 ? 0 : 1;
}

int main(int argc, char **argv)
{
	bool boot_only = argc == 4 && !strcmp(argv[3], "boottime");
	if (argc != 3 && !boot_only) {
		fprintf(stderr, "usage: fctimens OFFSET_S RUNS [boottime]\n");
		return 2;
	}
	long offset = atol(argv[1]);
	int runs = atoi(argv[2]);
	for (int i = 0; i < 200000; i++) {
		(void)fc_now_ns();  /* the library on its line, and its floors raised */
		if (i % 1000 == 0) {
			(void)fc(CLOCK_BOOTTIME);  /* and its offsets made */
			(void)fc_realtime_ns();
		}
	}
	if (unshare(CLONE_NEWTIME) != 0) {
		perror("unshare(CLONE_NEWTIME)");
		return 3;
	}
	char buf[128];
	if (boot_only)
		snprintf(buf, sizeof buf, "boottime %ld 0\n", offset);
	else
		snprintf(buf, sizeof buf, "monotonic %ld 0\nboottime %ld 0\n", offset, offset);
	int fd = open("/proc/self/timens_offsets", O_WRONLY);
	if (fd < 0 || write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf)) {
		perror("/proc/self/timens_offsets");
		return 3;
	}
	close(fd);
	int bad = 0;
	for (int run = 0; run < runs; run++) {
		for (int i = 0; i < 1000; i++)
			(void)fc_now_ns();  /* the parent reading, in its own namespace */
		pid_t p = fork();
		if (p == 0)
			_exit(child(offset, run));
		int st;
		waitpid(p, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
	}
	/* and the parent itself is still on its own clock */
	long long k0 = kns(CLOCK_MONOTONIC), v = fc_now_ns(), k1 = kns(CLOCK_MONOTONIC);
	printf("parent offset_ns=%lld bad=%d\n", off_by(v, k0, k1), bad);
	return bad == 0 && llabs(off_by(v, k0, k1)) < 1000000 ? 0 : 1;
}
