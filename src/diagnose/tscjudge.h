/* SPDX-License-Identifier: MIT */
/*
 * tscjudge.h: the judgement of the counter from the facts and the numbers
 * cd_tsc_measure() took (measure/tsc.h holds both): the frequency sources,
 * the four tests (flags, frequency, sync, drift) and the verdict, for
 * `clockdoctor tsc` and `check --deep`.
 */
#ifndef CD_DIAGNOSE_TSCJUDGE_H
#define CD_DIAGNOSE_TSCJUDGE_H

#include "measure/tsc.h"

/* The sources, tests and verdict from f and t's numbers.  Pure. */
void cd_tsc_judge(const struct cd_facts *f, struct cd_tsc_report *t);

/* Cycles to nanoseconds at the best frequency known (0 when none). */
double cd_tsc_cycles_ns(const struct cd_tsc_report *t, double cycles);

const char *cd_tsc_verdict_name(enum cd_tsc_verdict v);  /* "sound", "unknown", "unsound" */
const char *cd_tsc_status_name(enum cd_tsc_status s);    /* "pass", "untested", "fail" */
const char *cd_tsc_test_name(enum cd_tsc_test_id id);    /* "flags", "frequency", "sync", "drift" */

/* ---- between tscjudge.c and tscsources.c ---- */

/* Fill t->src[], each source's distance from the measured frequency, and
 * the reference (t->ref_hz, t->ref_name). */
void cd_tsc_sources(const struct cd_facts *f, struct cd_tsc_report *t);

/* The counter is the x86 TSC: the kernel log's and CPUID's frequencies
 * are about it. */
static inline bool cd_tsc_on_x86(const struct cd_tsc_report *t)
{
	return t->counter.kind == FC_COUNTER_X86_TSC;
}

#endif
