/* SPDX-License-Identifier: MIT */
/*
 * output.h: every format `check` writes.  All formatting lives in output/;
 * the layers above hand over structs and never print.
 */
#ifndef CD_OUTPUT_H
#define CD_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "diagnose/diagnose.h"
#include "measure/measure.h"
#include "probe/facts.h"

/* The release, from the Makefile's VERSION (-DCD_VERSION); a build
 * without it (a file compiled alone) says so. */
#ifndef CD_VERSION
#define CD_VERSION "unknown"
#endif

/* Whether fd is a terminal that takes escape sequences (colours, a
 * progress line redrawn in place): a tty whose TERM is set and not "dumb",
 * git's rule. */
bool cd_term_escapes(int fd);

/* The one decision of `--color auto`: escapes work on fd, and NO_COLOR is
 * unset or empty (no-color.org). */
bool cd_color_auto(int fd);

/* For people: the summary line first, then the facts, the
 * measurements and each finding with its evidence and fix; lines fit in 80
 * columns (commands excepted).  color: ANSI colours for a terminal. */
void cd_output_text(FILE *out, const struct cd_facts *f, const struct cd_measurements *m,
                    const struct cd_report *r, bool color);

/* For programs: the schema is documented in docs/json.md. */
void cd_output_json(FILE *out, const struct cd_facts *f, const struct cd_measurements *m,
                    const struct cd_report *r);

/* For node_exporter's textfile collector: names prefixed clockdoctor_. */
/* A Prometheus label value, escaped as the exposition format requires
 * (backslash, double quote, newline); shared with watch's textfile. */
void cd_prom_label(FILE *out, const char *s);

/* When the check ran, and when a check last reached a verdict (status 0 to
 * 2): Unix times, last_success 0 for never. */
struct cd_prom_times {
	double last_run;
	double last_success;
};

void cd_output_prometheus(FILE *out, const struct cd_facts *f, const struct cd_measurements *m,
                          const struct cd_report *r, const struct cd_prom_times *t);

/* The last success recorded in a textfile check wrote before (text, NUL
 * terminated): its clockdoctor_check_last_success_timestamp_seconds, or 0
 * when there is none or it is not a plausible time. */
double cd_prom_last_success(const char *text);

#endif
