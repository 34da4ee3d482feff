/* SPDX-License-Identifier: MIT */
/*
 * fastclock_serve.h: the accelerator's entry points into the library, for
 * the two clock ids programs ask for most and for gettimeofday.  Each is
 * fc_gettime()'s answer for that id (the same fast path, the same slow
 * one), reached without fc_gettime's dispatch on the id and the pointer:
 * the caller has checked the pointer (plausible, not NULL).  Hidden: the
 * shared library does not export them.
 */
#ifndef FASTCLOCK_SERVE_H
#define FASTCLOCK_SERVE_H

#include <sys/time.h>
#include <time.h>

/* CLOCK_MONOTONIC and CLOCK_REALTIME into *ts: 0, or fc_gettime's -errno. */
__attribute__((visibility("hidden"))) int fc_int_serve_mono(struct timespec *ts);
__attribute__((visibility("hidden"))) int fc_int_serve_realtime(struct timespec *ts);
/* CLOCK_REALTIME into *tv, the microseconds truncated as from a timespec. */
__attribute__((visibility("hidden"))) void fc_int_serve_timeval(struct timeval *tv);

#endif
