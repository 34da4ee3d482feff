/* SPDX-License-Identifier: MIT */
/*
 * report.h: `clockdoctor report`'s page, drawn from the JSON each command
 * writes (check, bench, tsc, accuracy, top: docs/json.md and the commands'
 * pages).  Measured here, read from a snapshot or from files someone sent,
 * the page is made the same way: from those texts, parsed by
 * util/jsonread.h, which the page also carries as data.
 */
#ifndef CD_REPORT_H
#define CD_REPORT_H

#include "util/jsonread.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum cd_rpt_part {
	CD_RPT_CHECK,
	CD_RPT_BENCH,
	CD_RPT_TSC,
	CD_RPT_ACCURACY,
	CD_RPT_TOP,
	CD_RPT_N,
};

/* At most this many of top's objects (one an interval) are read. */
#define CD_RPT_TOP_MAX 600
/* The most JSON text embedded in the page, all parts together (check
 * first, then tsc, accuracy, bench, top): a part that does not fit (a
 * hostile file, the warp test of a large machine) is left out and the page
 * says so, so that a page stays under 1 MB. */
#define CD_RPT_EMBED_MAX (450u << 10)
/* The largest JSON text read for one part. */
#define CD_RPT_TEXT_MAX (16u << 20)

struct cd_rpt_input {
	char *text;               /* the JSON text (top: one object a line); malloc'd */
	size_t len;
	int n;                    /* documents parsed: 1, or top's lines */
	struct cd_json **doc;
	char from[160];           /* where it came from, for people */
	char missing[240];        /* why there is none (set when text is NULL) */
};

struct cd_rpt {
	struct cd_rpt_input in[CD_RPT_N];
	enum { CD_RPT_LIVE, CD_RPT_SNAPSHOT, CD_RPT_FILES } origin;
	const char *root;         /* the snapshot's folder */
	char generated[40];       /* when the page was made, UTC */
	double seconds;           /* the time it took to measure or read */
};

/* The command name each part's JSON has in its "command" field. */
const char *cd_rpt_part_name(enum cd_rpt_part p);

/* Take text (malloc'd, len bytes) as part p: parsed as one JSON object, or
 * for top as JSON lines (at most CD_RPT_TOP_MAX).  Returns 0, or -1 with
 * why in err (text is then freed). */
int cd_rpt_take(struct cd_rpt_input *in, enum cd_rpt_part p, char *text, size_t len, char *err, size_t errcap);
void cd_rpt_free(struct cd_rpt *r);

/* The first (top: every) document of a part, NULL when there is none. */
const struct cd_jv *cd_rpt_doc(const struct cd_rpt *r, enum cd_rpt_part p);

/* The whole page. */
void cd_rpt_page(FILE *out, const struct cd_rpt *r);

/* ---- charts.c: each a <figure>, its data in the marks ---- */
void cd_rpt_chart_cost(FILE *out, const struct cd_rpt *r);
void cd_rpt_chart_latency(FILE *out, const struct cd_rpt *r);
void cd_rpt_chart_tsc_freq(FILE *out, const struct cd_rpt *r);
void cd_rpt_chart_warp(FILE *out, const struct cd_rpt *r);
void cd_rpt_chart_accuracy(FILE *out, const struct cd_rpt *r);
void cd_rpt_chart_top(FILE *out, const struct cd_rpt *r);

/* A figure that has nothing to draw: its heading and why, said plainly. */
void cd_rpt_no_figure(FILE *out, const char *id, const char *title, const char *why);

#endif
