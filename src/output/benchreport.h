/* SPDX-License-Identifier: MIT */
/*
 * benchreport.h: the report of `clockdoctor bench`, for people (text under
 * 80 columns, histograms in bcc's layout) and for programs (JSON, schema in
 * docs/bench.md).
 */
#ifndef CD_BENCHREPORT_H
#define CD_BENCHREPORT_H

#include "measure/benchrun.h"
#include "measure/csswitch.h"

#include <stdbool.h>
#include <stdio.h>

/* One run per clocksource (one only without --clocksources). */
struct cd_bench_report {
	double duration_s;          /* -d, or 0 with --calls */
	long calls;                 /* --calls, or 0 */
	int threads;                /* -t */
	bool summary;               /* -s: no per-way details */
	/* --targets: the library's ratios beside the project's own targets
	 * (`make bench`); for users, the figures alone. */
	bool targets;
	int cpus;
	char cpu[200];              /* vendor, family, model, model name (cd_cpu_describe_live) */
	struct cd_timer timer;
	int nruns;
	struct cd_bench_run runs[CD_CS_MAX];
	char cs_name[CD_CS_MAX][CD_CS_NAME_MAX];
	bool switched;              /* --clocksources */
	char original[CD_CS_NAME_MAX];
	bool restored;
	char cs_error[1024];        /* a switch that failed, or the restore */
	int exit_status;            /* the process's, for the JSON envelope */
};

void cd_bench_text(FILE *out, const struct cd_bench_report *rp);
void cd_bench_json(FILE *out, const struct cd_bench_report *rp);

#endif
