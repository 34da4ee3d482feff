/* SPDX-License-Identifier: MIT */
/*
 * ways.h: the ways of reading the time that the test programs take by name
 * (clockloop, inconsistency): the libc call, and the kernel's clock it
 * reads.  Each program is built alone (the Makefile's progs rule), so the
 * table is static data of a header.
 */
#ifndef CD_PROGS_WAYS_H
#define CD_PROGS_WAYS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

enum way_call {
	WAY_CLOCK_GETTIME,  /* clock_gettime(id) */
	WAY_GETTIMEOFDAY,   /* gettimeofday: microseconds */
	WAY_TIME,           /* time: seconds */
	WAY_TIMESPEC_GET,   /* timespec_get(TIME_UTC) */
};

struct way {
	const char *name;
	enum way_call call;
	clockid_t id;        /* the kernel's clock it reads */
	long dropped_ns;     /* what its resolution drops: a value may sit that much under the kernel's */
	bool checked;        /* one inconsistency checks against the kernel */
};

static const struct way ways[] = {
	{ "realtime", WAY_CLOCK_GETTIME, CLOCK_REALTIME, 0, true },
	{ "monotonic", WAY_CLOCK_GETTIME, CLOCK_MONOTONIC, 0, true },
	{ "raw", WAY_CLOCK_GETTIME, CLOCK_MONOTONIC_RAW, 0, true },
	{ "boottime", WAY_CLOCK_GETTIME, CLOCK_BOOTTIME, 0, true },
	{ "tai", WAY_CLOCK_GETTIME, CLOCK_TAI, 0, true },
	{ "coarse", WAY_CLOCK_GETTIME, CLOCK_MONOTONIC_COARSE, 0, false },
	{ "cputime", WAY_CLOCK_GETTIME, CLOCK_PROCESS_CPUTIME_ID, 0, false },
	{ "gettimeofday", WAY_GETTIMEOFDAY, CLOCK_REALTIME, 1000, true },
	{ "time", WAY_TIME, CLOCK_REALTIME, 1000000000, true },
	{ "timespec_get", WAY_TIMESPEC_GET, CLOCK_REALTIME, 0, false },
};

/* The way of that name, or NULL. */
static inline const struct way *way_named(const char *name)
{
	for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++)
		if (strcmp(name, ways[i].name) == 0)
			return &ways[i];
	return NULL;
}

#endif
