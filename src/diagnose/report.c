/* SPDX-License-Identifier: MIT */
/*
 * report.c: the report assembled from the rules: the context derived, the
 * rules run in their order, the findings sorted most severe first, the
 * overall status, and the summary line that opens check's output.
 */
#include "diagnose/rules.h"

#include <stdio.h>
#include <string.h>

static const char *const severity_names[] = {
	[CD_SEV_INFO] = "info", [CD_SEV_WARNING] = "warning", [CD_SEV_CRITICAL] = "critical",
};
static const char *const status_names[] = {
	[CD_STATUS_OK] = "ok", [CD_STATUS_WARNING] = "warning",
	[CD_STATUS_CRITICAL] = "critical", [CD_STATUS_UNKNOWN] = "unknown",
};

static int by_severity(const void *a, const void *b)
{
	const struct cd_finding *x = a, *y = b;
	return (int)y->severity - (int)x->severity;
}

/* One line for people, the first of the text output (JSON's "verdict"). */
static void summary_line(struct cd_ctx *c)
{
	struct cd_report *r = c->r;
	char *v = r->summary;
	size_t cap = sizeof r->summary;
	const char *cs = cd_cs_name(c);
	switch (r->status) {
	case CD_STATUS_CRITICAL:
		if (c->mono && c->mono->syscall)
			snprintf(v, cap, "time calls are system calls (clocksource %s, CLOCK_MONOTONIC %.0f ns)",
			         cs, c->mono->ns_per_call);
		else
			snprintf(v, cap, "time calls are system calls (clocksource %s, %s)", cs,
			         c->cur_known ? c->cur.typical : c->tick_left || c->only_slow[0] ? "a system call each" : "cost unknown");
		break;
	case CD_STATUS_WARNING:
		snprintf(v, cap, "clocksource %s; %s needs attention", cs, r->f[0].code);
		break;
	case CD_STATUS_OK:
		if (c->mono)
			snprintf(v, cap, "time is cheap here: clocksource %s, CLOCK_MONOTONIC %.0f ns", cs,
			         c->mono->ns_per_call);
		else
			snprintf(v, cap, "clocksource %s%s (not measured)", cs,
			         c->cur.vdso == CD_VDSO_YES ? ", read by the vDSO" : "");
		break;
	case CD_STATUS_UNKNOWN:
		if (c->cur_known)
			snprintf(v, cap, "could not tell: the clocksource %s is not one this tool knows, and "
			         "nothing was measured", cs);
		else
			snprintf(v, cap, "could not tell: neither the clocksource nor a measurement is available");
		break;
	}
}

/* Critical or warning by the worst finding; unknown when nothing was found
 * and nothing could be: no clocksource known, nothing measured. */
static enum cd_status status_of(const struct cd_ctx *c)
{
	const struct cd_report *r = c->r;
	enum cd_severity worst = CD_SEV_INFO;
	for (int i = 0; i < r->n; i++)
		if (r->f[i].severity > worst)
			worst = r->f[i].severity;
	if (worst == CD_SEV_CRITICAL)
		return CD_STATUS_CRITICAL;
	if (worst == CD_SEV_WARNING)
		return CD_STATUS_WARNING;
	if (!c->cur_known && !c->m)
		return CD_STATUS_UNKNOWN;
	/* A clocksource the table does not know says nothing about the cost
	 * of a time call: only a measurement does. */
	if (c->cur_known && c->cur.vdso == CD_VDSO_UNKNOWN && !(c->m && c->m->done))
		return CD_STATUS_UNKNOWN;
	return CD_STATUS_OK;
}

void cd_diagnose(const struct cd_facts *facts, const struct cd_measurements *m, struct cd_report *r)
{
	cd_diagnose_deep(facts, m, NULL, r);
}

void cd_diagnose_deep(const struct cd_facts *facts, const struct cd_measurements *m,
                      const struct cd_tsc_report *tsc, struct cd_report *r)
{
	memset(r, 0, sizeof *r);
	struct cd_ctx c = { .f = facts, .m = (m && m->done) ? m : NULL, .tsc = tsc, .r = r };
	r->measured = c.m != NULL;
	cd_derive(&c);

	cd_rule_slow_clocksource(&c);
	cd_rule_tick_based_left(&c);
	cd_rule_only_slow_listed(&c);
	cd_rule_vdso_fallback(&c);
	cd_rule_kvmclock(&c);
	cd_rule_xen(&c);
	cd_rule_unverified_other(&c);
	cd_rule_tsc_unstable_sync(&c);
	cd_rule_tsc_unstable_watchdog(&c);
	cd_rule_needs_newer_kernel(&c);
	cd_rule_clocksource_forced(&c);
	cd_rule_better_clocksource(&c);
	cd_rule_tsc_not_invariant(&c);
	cd_rule_tsc_reliable(&c);
	cd_rule_tsc_adjust(&c);
	cd_rule_tsc_unsound(&c);
	cd_rule_ntp(&c);  /* last: its severity depends on what the others advised */
	cd_rule_where_the_fix_is(&c);  /* after all: a container's fixes are on the host */

	/* Stable sort by severity: insertion order within a severity is the
	 * order above, which reads as cause after effect. */
	for (int i = 1; i < r->n; i++)
		for (int j = i; j > 0 && by_severity(&r->f[j - 1], &r->f[j]) > 0; j--) {
			struct cd_finding t = r->f[j];
			r->f[j] = r->f[j - 1];
			r->f[j - 1] = t;
		}
	r->status = status_of(&c);
	summary_line(&c);
}

const char *cd_severity_name(enum cd_severity s)
{
	return CD_NAME_OF(severity_names, s, "unknown");
}

const char *cd_status_name(enum cd_status s)
{
	return CD_NAME_OF(status_names, s, "unknown");
}

const struct cd_finding *cd_report_find(const struct cd_report *r, const char *code)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->f[i].code, code) == 0)
			return &r->f[i];
	return NULL;
}
