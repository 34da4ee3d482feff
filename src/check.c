/* SPDX-License-Identifier: MIT */
/*
 * check.c: `clockdoctor check`: probe, measure, diagnose, write.
 *
 * The whole command takes under a second on a healthy machine: the
 * measurement has a fixed budget, split between the clock ids.
 */
#include "commands.h"
#include "diagnose/diagnose.h"
#include "measure/measure.h"
#include "diagnose/tscjudge.h"
#include "measure/tsc.h"
#include "output/output.h"
#include "output/promdest.h"
#include "probe/probe.h"
#include "util/atomicfile.h"
#include "util/beneath.h"
#include "util/fsread.h"
#include "util/numarg.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The measurement's wall-time budget: nine clocks, each the libc call and the
 * forced system call, in nine batches. */
#define MEASURE_BUDGET_S 0.6

static void check_usage(FILE *out)
{
	fprintf(out,
	        "usage: clockdoctor check [--json | --prometheus] [--prometheus-file PATH]\n"
	        "                         [--root DIR] [--no-measure] [--deep]\n"
	        "\n"
	        "Says whether reading the time is slow here, why, and what to do.\n"
	        "\n"
	        "  -j, --json        write JSON (schema: docs/json.md)\n"
	        "  -P, --prometheus  write node_exporter textfile metrics\n"
	        "      --prometheus-file PATH\n"
	        "                    also write them to PATH, atomically, for node_exporter's\n"
	        "                    textfile collector (PATH must end in .prom to be read);\n"
	        "                    says on stderr whether node_exporter reads that folder\n"
	        "  -r, --root DIR    diagnose a snapshot saved by `clockdoctor snapshot`\n"
	        "                    (nothing is measured)\n"
	        "      --no-measure  do not measure the clocks on this machine\n"
	        "      --deep        also measure whether the TSC can be trusted (a short\n"
	        "                    `clockdoctor tsc`, about 0.25 s more)\n"
	        "      --color WHEN  auto (default), always or never\n"
	        "\n"
	        "exit status: 0 ok, 1 warning, 2 critical, 3 could not tell (bad usage, or the\n"
	        "report or PATH could not be written)\n"
	        "\n"
	        "examples:\n"
	        "  clockdoctor check\n"
	        "  clockdoctor check --json | jq -r '.findings[].code'\n"
	        "  clockdoctor check --prometheus-file /var/lib/node_exporter/textfile_collector/cd.prom\n"
	        "  clockdoctor check --root ./snapshot-of-db1\n"
	        "  clockdoctor check --deep\n");
}

/* The last success recorded by the textfile at path, 0 if none. */
static double previous_success(const char *path)
{
	/* The folder as the user named it; the file itself beneath it, a
	 * regular file only (a FIFO planted there would hang the read). */
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if ((size_t)snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path) >= sizeof dir)
		return 0;
	if (!dir[0])
		snprintf(dir, sizeof dir, "/");
	size_t len;
	int err, trunc;
	char *text = cd_read_file(dir, slash ? slash + 1 : path, 1u << 20, &len, &err, &trunc);
	if (!text)
		return 0;
	double t = cd_prom_last_success(text);
	free(text);
	return t;
}

/* --prometheus-file: the metrics to a temporary file beside path, renamed
 * over it, so that node_exporter reads the old file or the new one, never
 * a part (as watch writes its own).  Returns 0, or -1 having said why. */
static int write_promfile(const char *path, const struct cd_facts *f, const struct cd_measurements *m,
                          const struct cd_report *r, const struct cd_prom_times *t)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int rc = -ENOMEM;
	if (mem) {
		cd_output_prometheus(mem, f, m, r, t);
		rc = fclose(mem) == 0 ? cd_write_atomic(path, text, len, 0644, true) : -ENOMEM;
	}
	free(text);
	if (rc < 0) {
		fprintf(stderr, "clockdoctor check: cannot write %s: %s\n", path, cd_beneath_strerror(rc));
		return -1;
	}
	return 0;
}

struct check_opts {
	enum { OUT_TEXT, OUT_JSON, OUT_PROM } format;
	bool json, prom;           /* each asked for: together, a usage error */
	const char *root;          /* NULL: this machine */
	const char *promfile;
	bool measure, deep;
	int color;                 /* -1: auto */
};

static int check_option(void *ctx, int ch, char *arg)
{
	struct check_opts *o = ctx;
	switch (ch) {
	case 'j': o->json = true; o->format = OUT_JSON; break;
	case 'P': o->prom = true; o->format = OUT_PROM; break;
	case 'F':
		o->promfile = arg;
		return cd_file_arg("check", "--prometheus-file", arg);
	case 'p': return cd_moved_option("check", 'p', "-P (--prometheus)");
	case 'n': return cd_moved_option("check", 'n', "--no-measure");
	case 'r': o->root = arg; break;
	case 'N': o->measure = false; break;
	case 'D': o->deep = true; break;
	case 'C':
		if (strcmp(arg, "always") == 0)
			o->color = 1;
		else if (strcmp(arg, "never") == 0)
			o->color = 0;
		else if (strcmp(arg, "auto") == 0)
			o->color = -1;
		else
			return cd_usage_error("check", "--color takes auto, always or never, not '%s'", arg);
		break;
	}
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, struct check_opts *o)
{
	static const struct option longs[] = {
		{ "json", no_argument, NULL, 'j' },          { "prometheus", no_argument, NULL, 'P' },
		/* long only: -P is --prometheus */
		{ "prometheus-file", required_argument, NULL, 'F' },
		{ "root", required_argument, NULL, 'r' },    { "no-measure", no_argument, NULL, 'N' },
		{ "color", required_argument, NULL, 'C' },   { "deep", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct cd_options check_options = { "check", "jPr:pn", longs, check_usage, check_option, false };
	int rc = cd_parse_options(&check_options, argc, argv, o);
	if (rc >= 0)
		return rc;
	if (o->json && o->prom)
		return cd_usage_error("check", "--json and --prometheus do not go together: one format a run");
	return o->root ? cd_folder_arg("check", "--root", o->root) : -1;
}

/* What check finds: the facts, the measurements and the diagnosis.  Large:
 * on the heap, not the stack. */
struct check_work {
	struct cd_facts f;
	struct cd_measurements m;
	struct cd_report r;
	struct cd_tsc_report tsc;
	bool tsc_done;             /* --deep, measured (a snapshot cannot be) */
};

/* Probe (this machine or --root), measure and diagnose into w. */
static void examine(const struct check_opts *o, struct check_work *w)
{
	bool live = o->root == NULL;
	bool say = o->format == OUT_TEXT && isatty(STDERR_FILENO);
	cd_probe(live ? "/" : o->root, live, &w->f);
	if (live && o->measure) {
		if (say)
			fprintf(stderr, "Measuring the cost of 9 ways of reading the time (about 1 s)...\n");
		cd_measure_check(&w->m, MEASURE_BUDGET_S);
	}
	w->tsc_done = live && o->deep;
	if (w->tsc_done) {
		struct cd_tsc_opts t;
		cd_tsc_opts_deep(&t);
		if (say)
			fprintf(stderr, "Measuring whether the TSC can be trusted (about %.2g s)...\n", t.seconds);
		cd_tsc_measure(&w->f, &t, &w->tsc);
		cd_tsc_judge(&w->f, &w->tsc);
	}
	cd_diagnose_deep(&w->f, w->m.done ? &w->m : NULL, w->tsc_done ? &w->tsc : NULL, &w->r);
}

/* The report in the format asked for, and --prometheus-file; the exit
 * status. */
static int write_report(const struct check_opts *o, const struct check_work *w, const struct timespec *started)
{
	/* A run that could not tell keeps the last success of the file it
	 * replaces, so that the textfile says how long the verdict is old. */
	struct cd_prom_times times = { .last_run = (double)started->tv_sec + (double)started->tv_nsec / 1e9 };
	if (w->r.status != CD_STATUS_UNKNOWN)
		times.last_success = times.last_run;
	else if (o->promfile)
		times.last_success = previous_success(o->promfile);

	int color = o->color < 0 ? cd_color_auto(STDOUT_FILENO) : o->color;
	switch (o->format) {
	case OUT_JSON: cd_output_json(stdout, &w->f, &w->m, &w->r); break;
	case OUT_PROM: cd_output_prometheus(stdout, &w->f, &w->m, &w->r, &times); break;
	default: cd_output_text(stdout, &w->f, &w->m, &w->r, color != 0); break;
	}
	int status = (int)w->r.status;
	if (o->promfile && write_promfile(o->promfile, &w->f, &w->m, &w->r, &times) != 0)
		status = CD_EXIT_UNKNOWN;
	else if (o->promfile)
		cd_prom_dest_check(stderr, "check", o->promfile);
	return status;
}

int cd_cmd_check(int argc, char **argv)
{
	struct check_opts o = { .format = OUT_TEXT, .measure = true, .color = -1 };
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		return rc;
	struct check_work *w = calloc(1, sizeof *w);
	if (!w) {
		fprintf(stderr, "clockdoctor check: out of memory\n");
		return CD_STATUS_UNKNOWN;
	}
	struct timespec started;
	clock_gettime(CLOCK_REALTIME, &started);
	examine(&o, w);
	int status = write_report(&o, w, &started);
	cd_tsc_report_free(&w->tsc);
	free(w);
	return cd_report_written("check", status);
}
