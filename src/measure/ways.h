/* SPDX-License-Identifier: MIT */
/*
 * ways.h: every way of reading the time that `bench` knows, and the parser
 * of their names.
 *
 * The ways, in output order: the clock ids through libc (the vDSO where it
 * serves), gettimeofday and time, the same forced through syscall(2)
 * ("CLOCK_MONOTONIC/syscall"), the CPU's raw counter (counter.h), and
 * libfastclock's calls ("fc_now_ns", ...).
 */
#ifndef CD_WAYS_H
#define CD_WAYS_H

#include "measure/measure.h"

#include <stddef.h>

/* The whole table and its size. */
const struct cd_clock_spec *cd_ways(int *n);

/* The way named `name`: the exact name, or the name without "CLOCK_", in
 * any case, with '-', ';' or '+' for '_' ("monotonic", "realtime-coarse",
 * "Monotonic/syscall", "lfence_rdtsc"), or an alias ("gtod",
 * "process_cputime").  NULL when unknown. */
const struct cd_clock_spec *cd_way_find(const char *name);

/* Parse a comma-separated list of names and groups ("all", "libc",
 * "syscall", "counter", "library" or its alias "fastclock") into out (up to
 * max, each way once, in table order).  Returns how many, or -1 with a
 * message in err. */
int cd_ways_parse(const char *list, const struct cd_clock_spec **out, int max, char *err, size_t errlen);

/* "clock_gettime", "gettimeofday", "time", "counter" or "libfastclock":
 * what the way calls. */
const char *cd_way_call(const struct cd_clock_spec *w);

/* Whether the way always goes through syscall(2). */
bool cd_way_forced(const struct cd_clock_spec *w);

#endif
