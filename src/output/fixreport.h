/* SPDX-License-Identifier: MIT */
/*
 * fixreport.h: what `clockdoctor fix` planned and did, as text for people
 * and JSON for programs (docs/fix.md).
 */
#ifndef CD_FIXREPORT_H
#define CD_FIXREPORT_H

#include "diagnose/plan.h"
#include "measure/csapply.h"
#include "persist/persist.h"

#include <stdio.h>

struct cd_fix_outcome {
	const char *mode;                    /* "plan", "apply", "persist", "apply+persist", "undo" */
	bool dry_run;                        /* nothing was changed on purpose */
	const struct cd_plan *plan;          /* NULL for undo */
	const struct cd_steps *persist_plan; /* what --persist would do; NULL when nothing */
	bool persist_in_place;               /* an earlier --persist made that change already */
	const char *persist_unsupported;     /* why --persist cannot write here, or NULL */
	const char *persist_manual;          /* then the finding's own text for doing it by hand */
	const struct cd_apply_result *apply; /* NULL when no switch was tried */
	const char *apply_note;              /* why no switch was tried, or NULL */
	const char *tsc_verdict;             /* "sound", "unknown", "unsound" when measured, NULL */
	const char *tsc_summary;
	const struct cd_steps *persist;      /* what --persist did */
	const char *persist_result;          /* "done", "in-place", "nothing", "failed", "record-exists", "not-regenerated" */
	const struct cd_steps *undo;
	const char *undo_result;             /* "done", "nothing", "failed" */
	int exit_status;
};

void cd_fix_output_text(FILE *out, const struct cd_fix_outcome *o);
void cd_fix_output_json(FILE *out, const struct cd_fix_outcome *o);

#endif
