/* SPDX-License-Identifier: MIT */
/*
 * csapply.c: switch, measure, keep or switch back (csapply.h).
 */
#include "measure/csapply.h"
#include "measure/measure.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define DEFAULT_BUDGET_S 0.3

const char *cd_apply_outcome_name(enum cd_apply_outcome o)
{
	switch (o) {
	case CD_APPLY_KEPT: return "kept";
	case CD_APPLY_NOT_CHEAPER: return "not-cheaper";
	case CD_APPLY_REFUSED: return "refused";
	case CD_APPLY_ERROR: return "error";
	case CD_APPLY_RESTORE_FAILED: return "restore-failed";
	}
	return "error";
}

void cd_apply_measure_monotonic(struct cd_apply_cost *out, void *arg)
{
	const struct cd_clock_spec *spec = &cd_check_clocks[1]; /* CLOCK_MONOTONIC */
	double budget = arg ? *(const double *)arg : DEFAULT_BUDGET_S;
	struct cd_clock_cost c;
	memset(out, 0, sizeof *out);
	cd_measure_clock(spec, budget, &c);
	int reached = -ENOSYS;
	if (cd_kernel_path(&spec, 1, &reached) == 0)
		cd_apply_kernel_path(&c, reached);
	out->measured = c.measured;
	out->ns = c.ns_per_call;
	out->syscall_ns = c.syscall_ns;
	out->syscall = c.syscall;
	out->exact = c.exact;
}

/* Switch back and say how that went; the outcome stays unless it fails. */
static void switch_back(struct cd_cs *cs, struct cd_apply_result *res)
{
	char err[512];
	if (cd_cs_end(cs, err, sizeof err) != 0) {
		res->outcome = CD_APPLY_RESTORE_FAILED;
		size_t used = strlen(res->msg);
		snprintf(res->msg + used, sizeof res->msg - used,
		         " COULD NOT SWITCH BACK to %s: %s (the record stays: clockdoctor bench --restore)",
		         res->from, err);
	}
}

void cd_apply_switch(struct cd_cs *cs, const char *target, double min_gain, cd_apply_measure_fn measure,
                     void *measure_arg, struct cd_apply_result *res)
{
	char err[512];
	memset(res, 0, sizeof *res);
	res->outcome = CD_APPLY_ERROR;
	snprintf(res->to, sizeof res->to, "%s", target);
	int rc = cd_cs_current(cs, res->from, sizeof res->from);
	if (rc < 0) {
		snprintf(res->msg, sizeof res->msg, "cannot read %.400s: %s", cs->current_path, strerror(-rc));
		return;
	}
	snprintf(res->now, sizeof res->now, "%s", res->from);
	if (strcmp(res->from, target) == 0) {
		snprintf(res->msg, sizeof res->msg, "the clocksource is %s already", target);
		return;
	}
	measure(&res->before, measure_arg);
	if (cd_cs_begin(cs, true, err, sizeof err) != 0) {
		snprintf(res->msg, sizeof res->msg, "nothing switched: %s", err);
		return;
	}
	rc = cd_cs_switch(cs, target, err, sizeof err);
	if (rc < 0) {
		res->outcome = rc == -EIO ? CD_APPLY_REFUSED : CD_APPLY_ERROR;
		cd_cs_current(cs, res->seen, sizeof res->seen);
		snprintf(res->msg, sizeof res->msg, "%s%s; switched back to %s.",
		         rc == -EIO ? "the kernel refused the switch: " : "", err, res->from);
		switch_back(cs, res);
		cd_cs_current(cs, res->now, sizeof res->now);
		return;
	}
	/* The vDSO reads the new clock mode from the next timekeeping update,
	 * which the switch itself makes; a tick's wait costs nothing. */
	struct timespec settle = { .tv_nsec = 20 * 1000 * 1000 };
	nanosleep(&settle, NULL);
	measure(&res->after, measure_arg);
	if (cd_cs_current(cs, res->seen, sizeof res->seen) != 0 || strcmp(res->seen, target) != 0) {
		res->outcome = CD_APPLY_REFUSED;
		snprintf(res->msg, sizeof res->msg, "the kernel did not stay on %s: the current clocksource "
		         "became %s while it was measured (its watchdog may have rejected %s); switched "
		         "back to %s.", target, res->seen[0] ? res->seen : "unreadable", target, res->from);
		switch_back(cs, res);
		cd_cs_current(cs, res->now, sizeof res->now);
		return;
	}
	bool measured = res->before.measured && res->after.measured && res->before.ns > 0;
	if (measured)
		res->gain = 1 - res->after.ns / res->before.ns;
	if (measured && res->gain >= min_gain) {
		if (cd_cs_keep(cs, err, sizeof err) != 0) {
			/* The switch stands, but a later run would take the record
			 * for a crash and switch back: say so plainly. */
			res->outcome = CD_APPLY_KEPT;
			snprintf(res->msg, sizeof res->msg, "kept %s, but %s: remove that file by hand, or "
			         "`clockdoctor bench --restore` will switch back to %s", target, err, res->from);
		} else {
			res->outcome = CD_APPLY_KEPT;
			snprintf(res->msg, sizeof res->msg, "switched to %s: CLOCK_MONOTONIC %.0f ns a call, "
			         "was %.0f ns on %s (%.0f%% cheaper); kept until the next reboot.", target,
			         res->after.ns, res->before.ns, res->from, res->gain * 100);
		}
		snprintf(res->now, sizeof res->now, "%s", target);
		return;
	}
	res->outcome = CD_APPLY_NOT_CHEAPER;
	if (measured)
		snprintf(res->msg, sizeof res->msg, "time did not get cheaper enough on %s: CLOCK_MONOTONIC "
		         "%.0f ns a call against %.0f ns on %s (%.0f%% %s; at least %.0f%% cheaper needed); "
		         "switched back to %s.", target, res->after.ns, res->before.ns, res->from,
		         fabs(res->gain) * 100, res->gain >= 0 ? "cheaper" : "dearer", min_gain * 100, res->from);
	else
		snprintf(res->msg, sizeof res->msg, "the cost of a time call could not be measured on %s; "
		         "switched back to %s.", target, res->from);
	switch_back(cs, res);
	cd_cs_current(cs, res->now, sizeof res->now);
}
