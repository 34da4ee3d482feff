/* SPDX-License-Identifier: MIT */
/*
 * csapply.h: switch to a faster clocksource, and keep it only when the
 * kernel took it and reading the time got cheaper (`fix --apply`).
 *
 *   1. measure what one CLOCK_MONOTONIC call costs now;
 *   2. cd_cs_begin (the record and the restoring signal handlers of
 *      csswitch.h: from here any exit path puts the original back), switch;
 *   3. measure again, then read current_clocksource once more: the kernel
 *      may refuse the write, or switch away by itself while we measure (its
 *      watchdog rejecting the new clocksource);
 *   4. keep (cd_cs_keep) when the call got at least min_gain cheaper, else
 *      switch back (cd_cs_end).
 *
 * The measurement is a parameter, so that unit tests drive every outcome
 * with a fake sysfs tree and made-up costs.  Nothing here prints.
 */
#ifndef CD_CSAPPLY_H
#define CD_CSAPPLY_H

#include "measure/csswitch.h"

#include <stdbool.h>

struct cd_apply_cost {
	bool measured;
	double ns;           /* median cost of one CLOCK_MONOTONIC call */
	double syscall_ns;   /* the same forced through syscall(2) */
	bool syscall;        /* the call entered the kernel */
	bool exact;          /* that verdict came from the seccomp probe */
};

/* Measures the cost now; arg is cd_apply_switch's measure_arg. */
typedef void (*cd_apply_measure_fn)(struct cd_apply_cost *out, void *arg);

/* The real measurement: CLOCK_MONOTONIC for about *(double *)arg seconds
 * (0.3 when arg is NULL), with the exact system-call probe. */
void cd_apply_measure_monotonic(struct cd_apply_cost *out, void *arg);

enum cd_apply_outcome {
	CD_APPLY_KEPT,            /* switched, cheaper, kept */
	CD_APPLY_NOT_CHEAPER,     /* switched, not cheaper enough: switched back */
	CD_APPLY_REFUSED,         /* the kernel did not take it, or left it: switched back */
	CD_APPLY_ERROR,           /* could not start (a record in the way, not available, a write
	                             error): nothing is switched */
	CD_APPLY_RESTORE_FAILED,  /* could not switch back: the record stays (bench --restore) */
};

struct cd_apply_result {
	enum cd_apply_outcome outcome;
	char from[CD_CS_NAME_MAX], to[CD_CS_NAME_MAX];
	char now[CD_CS_NAME_MAX];    /* the current clocksource at the end */
	char seen[CD_CS_NAME_MAX];   /* what the kernel showed after the switch ("" unread) */
	struct cd_apply_cost before, after;
	double gain;                 /* 1 - after/before (0.95: 20 times cheaper); 0 unmeasured */
	char msg[700];               /* what happened, in a sentence or two */
};

const char *cd_apply_outcome_name(enum cd_apply_outcome o); /* "kept", "not-cheaper", ... */

/* Switch cs to target as above.  min_gain: the share of the cost the
 * switch must save to be kept (0.2: at least 20% cheaper).  cs must be
 * initialised (cd_cs_init) and not begun. */
void cd_apply_switch(struct cd_cs *cs, const char *target, double min_gain, cd_apply_measure_fn measure,
                     void *measure_arg, struct cd_apply_result *res);

#endif
