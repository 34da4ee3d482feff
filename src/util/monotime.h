/* SPDX-License-Identifier: MIT */
/*
 * monotime.h: a kernel clock's time as a double, in seconds (or, for a
 * batch of calls, nanoseconds): the one reading for deadlines, time
 * budgets, elapsed times and time stamps.  The timer a measurement
 * calibrates (measure/timer.h) and the accuracy test's reads past any
 * interposer are their own.
 */
#ifndef CD_MONOTIME_H
#define CD_MONOTIME_H

#include <time.h>

/* Clock id's time in seconds (CLOCK_REALTIME: since the epoch). */
double cd_clock_s(clockid_t id);

/* CLOCK_MONOTONIC in seconds, and in nanoseconds. */
double cd_mono_s(void);
double cd_mono_ns(void);

#endif
