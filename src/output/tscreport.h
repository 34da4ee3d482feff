/* SPDX-License-Identifier: MIT */
/*
 * tscreport.h: the report of `clockdoctor tsc`, for people (text under 80
 * columns, the summary first, the verdict last) and for programs (JSON,
 * schema in docs/tsc.md).
 */
#ifndef CD_TSCREPORT_H
#define CD_TSCREPORT_H

#include "measure/tsc.h"
#include "probe/facts.h"

#include <stdio.h>

/* f: the facts cd_tsc_measure() was given; t: measured and judged
 * (cd_tsc_judge). */
void cd_tsc_text(FILE *out, const struct cd_facts *f, const struct cd_tsc_report *t);
void cd_tsc_json(FILE *out, const struct cd_facts *f, const struct cd_tsc_report *t);

#endif
