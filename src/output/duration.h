/* SPDX-License-Identifier: MIT */
/*
 * duration.h: a duration written for people, in the unit that reads best.
 *
 * The diagnosis puts these into findings' titles, evidence and risks, which
 * every format of `check` prints: the spellings are part of the output and
 * do not change.
 */
#ifndef CD_OUTPUT_DURATION_H
#define CD_OUTPUT_DURATION_H

#include <stddef.h>

/* Seconds, whole, with the larger unit beside them from two minutes on:
 * "95 s", "300 s (5 min)", "9000 s (2.5 h)", "334800 s (3.9 days)". */
void cd_fmt_duration_s(char *buf, size_t cap, double s);

/* Nanoseconds in ns, us, ms or s: "850 ns", "12.5 us", "3.2 ms", "1.50 s". */
void cd_fmt_duration_ns(char *buf, size_t cap, double ns);

#endif
