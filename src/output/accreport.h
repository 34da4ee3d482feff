/* SPDX-License-Identifier: MIT */
/*
 * accreport.h: the report of `clockdoctor accuracy`, for people (under 80
 * columns, the verdict first) and for programs (JSON, schema in
 * docs/accuracy.md).
 */
#ifndef CD_ACCREPORT_H
#define CD_ACCREPORT_H

#include "measure/accuracy.h"

#include "fastclock.h"

#include <stdio.h>

struct cd_acc_report {
	double duration_s;              /* -d */
	const struct cd_acc_result *r;
	const struct fc_info *info;     /* fc_info() at the end of the run */
	bool info_ok;
	int exit_status;                /* the process's, for the JSON envelope */
};

void cd_acc_text(FILE *out, const struct cd_acc_report *rp);
void cd_acc_json(FILE *out, const struct cd_acc_report *rp);

#endif
