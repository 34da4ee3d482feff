/* SPDX-License-Identifier: MIT */
/*
 * clockfault: what an NTP daemon (or an operator) does to a guest's clock,
 * for the fault-* lab scenarios.  Static, root, inside a lab guest only.
 *
 *   clockfault step SECS       REALTIME stepped by SECS (may be negative,
 *                              fractional) with adjtimex ADJ_SETOFFSET, as
 *                              chronyd's makestep does
 *   clockfault slew US         adjtime() by US microseconds: the old BSD slew
 *                              (ADJ_OFFSET_SINGLESHOT, 500 ppm at most)
 *   clockfault pll US          adjtimex ADJ_OFFSET with STA_PLL set: the
 *                              kernel's PLL slews the offset away, as ntpd does
 *   clockfault freq PPM        adjtimex ADJ_FREQUENCY
 *   clockfault leap ins|del [SECS]  sets REALTIME to SECS (2.5) before midnight UTC of
 *                              2026-12-31 (ins) or 2027-06-30 (del), then
 *                              announces the leap with ADJ_STATUS STA_INS or
 *                              STA_DEL: the kernel inserts 23:59:60 (REALTIME
 *                              back by 1 s at midnight, TAI offset + 1) or
 *                              skips 23:59:59 (REALTIME + 1 s, TAI offset - 1)
 *   clockfault reset           status, offset, frequency, tick and TAI
 *                              offset back to the kernel's defaults (STA_UNSYNC)
 *   clockfault state           adjtimex's return (TIME_OK 0, INS 1, DEL 2,
 *                              OOP 3, WAIT 4), status, TAI offset, freq, and
 *                              BOOTTIME - MONOTONIC (the time spent asleep)
 *   clockfault calls RATE SECS raw clock_gettime system calls (past the
 *                              vDSO), RATE a second for SECS: something
 *                              for `clockdoctor top` to count
 *
 * Each prints one line "key=value ..." with the kernel's CLOCK_MONOTONIC in
 * ns at the change (mono_ns=), so a scenario can find it in a probe's
 * output.  Exit 0, 1 when the kernel refused (errno printed), 2 usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000LL

static long long kns(clockid_t id)
{
	struct timespec ts;
	syscall(SYS_clock_gettime, (long)id, &ts);
	return (long long)ts.tv_sec * NS + ts.tv_nsec;
}

static int fail(const char *what)
{
	printf("error=%s errno=%d (%s)\n", what, errno, strerror(errno));
	return 1;
}

static int set_realtime_ns(long long want)
{
	struct timespec ts = { (time_t)(want / NS), (long)(want % NS) };
	return clock_settime(CLOCK_REALTIME, &ts);
}

static int state(void)
{
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	int r = adjtimex(&tx);
	if (r < 0)
		return fail("adjtimex");
	long long m = kns(CLOCK_MONOTONIC), b = kns(CLOCK_BOOTTIME), m2 = kns(CLOCK_MONOTONIC);
	printf("time_state=%d status=0x%x tai=%d freq=%ld offset=%ld tick=%ld mono_ns=%lld boot_minus_mono_ns=%lld\n", r,
	       (unsigned)tx.status, tx.tai, tx.freq, tx.offset, tx.tick, m, b - (m + m2) / 2);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		goto usage;
	const char *c = argv[1];
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	if (!strcmp(c, "step") && argc == 3) {
		/* relative, in the kernel (ADJ_SETOFFSET, as chronyd's makestep):
		 * a read-then-set from here would lose the time this process was
		 * descheduled in between */
		long long d = (long long)(atof(argv[2]) * 1e9);
		long long m = kns(CLOCK_MONOTONIC);
		tx.modes = ADJ_SETOFFSET | ADJ_NANO;
		tx.time.tv_sec = (time_t)(d / NS);
		tx.time.tv_usec = (long)(d % NS);
		if (tx.time.tv_usec < 0) {
			tx.time.tv_sec -= 1;
			tx.time.tv_usec += NS;
		}
		if (adjtimex(&tx) < 0)
			return fail("adjtimex ADJ_SETOFFSET");
		printf("step_ns=%lld mono_ns=%lld\n", d, m);
		return 0;
	}
	if (!strcmp(c, "slew") && argc == 3) {
		long us = atol(argv[2]);
		struct timeval tv = { us / 1000000, us % 1000000 }, old;
		long long m = kns(CLOCK_MONOTONIC);
		if (adjtime(&tv, &old) != 0)
			return fail("adjtime");
		printf("slew_us=%ld mono_ns=%lld\n", us, m);
		return 0;
	}
	if (!strcmp(c, "pll") && argc == 3) {
		tx.modes = ADJ_OFFSET | ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR;
		tx.status = STA_PLL;
		tx.offset = atol(argv[2]);
		long long m = kns(CLOCK_MONOTONIC);
		if (adjtimex(&tx) < 0)
			return fail("adjtimex");
		printf("pll_us=%s mono_ns=%lld\n", argv[2], m);
		return 0;
	}
	if (!strcmp(c, "freq") && argc == 3) {
		tx.modes = ADJ_FREQUENCY;
		tx.freq = (long)(atof(argv[2]) * 65536);
		long long m = kns(CLOCK_MONOTONIC);
		if (adjtimex(&tx) < 0)
			return fail("adjtimex");
		printf("freq_ppm=%s mono_ns=%lld\n", argv[2], m);
		return 0;
	}
	if (!strcmp(c, "leap") && (argc == 3 || argc == 4) && (!strcmp(argv[2], "ins") || !strcmp(argv[2], "del"))) {
		int ins = !strcmp(argv[2], "ins");
		/* 2027-01-01 00:00:00 UTC and 2027-07-01 00:00:00 UTC */
		long long midnight = ins ? 1798761600LL : 1814400000LL;
		long long lead = (long long)((argc == 4 ? atof(argv[3]) : 2.5) * 1e9);
		long long set_to = midnight * NS - lead;
		long long m = kns(CLOCK_MONOTONIC);
		if (set_realtime_ns(set_to) != 0)
			return fail("clock_settime");
		tx.modes = ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR;
		tx.status = ins ? STA_INS : STA_DEL;
		if (adjtimex(&tx) < 0)
			return fail("adjtimex");
		/* the leap is due `lead` of MONOTONIC after the set (at 23:59:59 for a deletion) */
		printf("leap=%s set_mono_ns=%lld leap_mono_ns=%lld midnight=%lld\n", argv[2], m,
		       m + lead - (ins ? 0 : NS), midnight);
		return 0;
	}
	if (!strcmp(c, "reset") && argc == 2) {
		struct timeval zero = { 0, 0 };
		adjtime(&zero, NULL);
		/* a PLL offset still being slewed is zeroed while STA_PLL is set
		 * (the kernel keeps slewing it after STA_PLL is cleared) */
		tx.modes = ADJ_OFFSET | ADJ_STATUS;
		tx.status = STA_PLL;
		if (adjtimex(&tx) < 0)
			return fail("adjtimex");
		memset(&tx, 0, sizeof tx);
		tx.modes = ADJ_STATUS | ADJ_OFFSET | ADJ_FREQUENCY | ADJ_TICK | ADJ_MAXERROR | ADJ_ESTERROR | ADJ_TAI;
		tx.status = STA_UNSYNC;
		tx.constant = 0;
		tx.tick = 10000;
		tx.maxerror = 16000000;
		tx.esterror = 16000000;
		if (adjtimex(&tx) < 0)
			return fail("adjtimex");
		return state();
	}
	if (!strcmp(c, "state") && argc == 2)
		return state();
	if (!strcmp(c, "calls") && argc == 4) {
		long rate = atol(argv[2]);
		double secs = atof(argv[3]);
		long long t0 = kns(CLOCK_MONOTONIC_COARSE), n = 0;
		struct timespec ts;
		for (;;) {
			/* paced by the coarse clock, read through the vDSO (no system call) */
			clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
			double el = ((long long)ts.tv_sec * NS + ts.tv_nsec - t0) / 1e9;
			if (el >= secs)
				break;
			for (long long want = (long long)(el * rate); n < want; n++)
				syscall(SYS_clock_gettime, (long)CLOCK_MONOTONIC, &ts);
			struct timespec sl = { 0, 2000000 };
			nanosleep(&sl, NULL);
		}
		printf("calls=%lld secs=%.3f\n", n, secs);
		return 0;
	}
usage:
	fprintf(stderr, "usage: clockfault step SECS | slew US | pll US | freq PPM | leap ins|del [SECS] | reset | state |"
	                " calls RATE SECS\n");
	return 2;
}
