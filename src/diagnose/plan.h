/* SPDX-License-Identifier: MIT */
/*
 * plan.h: what `clockdoctor fix` would do, drawn from check's findings.
 *
 * check already decides, for this platform and kernel, what to switch now
 * and what to change on the kernel command line; each finding carries those
 * as actions (act_switch, act_add, act_remove) beside its texts.  The plan
 * gathers them, most severe finding first, into three parts:
 *
 *   now       one clocksource switch (`fix --apply`), only to a clocksource
 *             the kernel lists that is faster than the current one by
 *             cd_clocksource_state's rank;
 *   lasting   kernel parameters to add or remove (`fix --persist`), one per
 *             parameter name: two findings that both advise a clocksource=
 *             are not both taken, and a clocksource= other than tsc is not
 *             taken beside a parameter that keeps the TSC (it would pin the
 *             kernel away from the very TSC the other brings back);
 *   hypervisor  what only the hypervisor's owner can do (printed only).
 *
 * Pure: facts and report in, plan out, so unit tests feed it any machine.
 */
#ifndef CD_PLAN_H
#define CD_PLAN_H

#include "diagnose/diagnose.h"

#define CD_PLAN_MAX_PARAMS 4
#define CD_PLAN_MAX_HV 4
#define CD_PLAN_MAX_NOTES 6
#define CD_PLAN_MAX_OTHER 8
#define CD_PLAN_FROM_MAX 160

struct cd_plan_param {
	char token[CD_NAME_MAX * 2];  /* "tsc=reliable", "clocksource=acpi_pm" */
	bool add;                     /* add it, or remove it */
	char from[CD_PLAN_FROM_MAX];  /* the findings that advise it: "slow-clocksource, tsc-unstable-sync" */
	char risk[CD_FIX_MAX];        /* the first of them's risk text ("" when none) */
};

struct cd_plan {
	enum cd_status status;        /* check's status */
	char summary[200];            /* check's summary line */
	bool serious;                 /* some finding is a warning or critical */
	bool nothing_to_do;           /* nothing to switch now, no parameter to change */

	/* now */
	bool have_switch;
	char switch_from[CD_NAME_MAX];
	char switch_to[CD_NAME_MAX];
	char switch_finding[48];      /* the code of the finding that advises it */
	char switch_risk[CD_FIX_MAX];
	char no_switch_why[400];      /* when there is none: why, for people */

	/* lasting */
	int n_params;
	struct cd_plan_param params[CD_PLAN_MAX_PARAMS];

	/* what only the hypervisor's owner can do */
	int n_hv;
	char hv[CD_PLAN_MAX_HV][CD_FIX_MAX];
	char hv_from[CD_PLAN_MAX_HV][CD_PLAN_FROM_MAX];

	/* findings that advise something fix does not carry out ("ntp-unsynchronized") */
	int n_other;
	const char *other[CD_PLAN_MAX_OTHER];

	/* actions left out, and why ("clocksource=hpet: not with tsc=reliable") */
	int n_notes;
	char notes[CD_PLAN_MAX_NOTES][240];
};

/* Build the plan.  f: the facts the report was made from. */
void cd_plan_build(const struct cd_facts *f, const struct cd_report *r, struct cd_plan *p);

/* A kernel parameter fix may write into a boot configuration: letters,
 * digits and "_-.,:=", at most CD_NAME_MAX * 2 - 1 characters, no "..". */
bool cd_plan_token_safe(const char *token);

#endif
