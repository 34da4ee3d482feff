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
#include "probe/probe.h"
#include "util/atomicfile.h"
#include "util/fsread.h"
#include "util/numarg.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	        "                    textfile collector (PATH must end in .prom to be read)\n"
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
	        "  clockdoctor check --json | jq .findings[].code\n"
	        "  clockdoctor check --prometheus-file /var/lib/node_exporter/textfile_collector/cd.prom\n"
	        "  clockdoctor check --root ./snapshot-of-db1\n"
	        "  clockdoctor check --deep\n");
}

/* The last success recorded by the textfile at path, 0 if none. */
static double previous_success(const char *path)
{
	size_t len;
	int err, trunc;
	char *text = cd_read_file(path[0] == '/' ? "/" : ".", path, 1u << 20, &len, &err, &trunc);
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
		fprintf(stderr, "clockdoctor check: cannot write %s: %s\n", path, strerror(-rc));
		return -1;
	}
	return 0;
}

int cd_cmd_check(int argc, char **argv)
{
	enum { OUT_TEXT, OUT_JSON, OUT_PROM } format = OUT_TEXT;
	const char *root = NULL, *promfile = NULL;
	bool measure = true, deep = false;
	int color = -1;
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "prometheus-file", required_argument, NULL, 'F' },  /* long only: -P is --prometheus */
		{ "root", required_argument, NULL, 'r' },
		{ "no-measure", no_argument, NULL, 'N' },
		{ "color", required_argument, NULL, 'C' },
		{ "deep", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char optstring[] = "jPr:hpn";
	optind = 1;
	opterr = 0;
	int ch;
	bool json = false, prom = false;
	while ((ch = getopt_long(argc, argv, optstring, opts, NULL)) != -1) {
		switch (ch) {
		case 'j': json = true; format = OUT_JSON; break;
		case 'P': prom = true; format = OUT_PROM; break;
		case 'F':
			if (!optarg[0] || optarg[strlen(optarg) - 1] == '/')
				return cd_usage_error("check", "--prometheus-file takes a file name, not '%s'", optarg);
			promfile = optarg;
			break;
		case 'p': return cd_moved_option("check", 'p', "-P (--prometheus)");
		case 'n': return cd_moved_option("check", 'n', "--no-measure");
		case 'r': root = optarg; break;
		case 'N': measure = false; break;
		case 'D': deep = true; break;
		case 'C':
			if (strcmp(optarg, "always") == 0)
				color = 1;
			else if (strcmp(optarg, "never") == 0)
				color = 0;
			else if (strcmp(optarg, "auto") == 0)
				color = -1;
			else
				return cd_usage_error("check", "--color takes auto, always or never, not '%s'", optarg);
			break;
		case 'h': check_usage(stdout); return cd_report_written("check", 0);
		default: return cd_bad_option("check", optstring, opts, argv);
		}
	}
	if (optind < argc)
		return cd_usage_error("check", "unexpected argument '%s'", argv[optind]);
	if (json && prom)
		return cd_usage_error("check", "--json and --prometheus do not go together: one format a run");
	if (root) {
		struct stat st;
		if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
			return cd_usage_error("check", "--root %s: not a folder", root);
	}

	/* Large structs: on the heap, not the stack. */
	struct cd_facts *f = calloc(1, sizeof *f);
	struct cd_measurements *m = calloc(1, sizeof *m);
	struct cd_report *r = calloc(1, sizeof *r);
	struct cd_tsc_report *tsc = calloc(1, sizeof *tsc);
	if (!f || !m || !r || !tsc) {
		fprintf(stderr, "clockdoctor check: out of memory\n");
		free(f); free(m); free(r); free(tsc);
		return CD_STATUS_UNKNOWN;
	}
	struct timespec started;
	clock_gettime(CLOCK_REALTIME, &started);
	bool live = root == NULL;
	cd_probe(live ? "/" : root, live, f);
	if (live && measure) {
		if (format == OUT_TEXT && isatty(STDERR_FILENO))
			fprintf(stderr, "Measuring the cost of 9 ways of reading the time (about 1 s)...\n");
		cd_measure_check(m, MEASURE_BUDGET_S);
	}
	/* --deep: the TSC itself, measured (a snapshot cannot be). */
	bool tsc_done = live && deep;
	if (tsc_done) {
		struct cd_tsc_opts o;
		cd_tsc_opts_deep(&o);
		if (format == OUT_TEXT && isatty(STDERR_FILENO))
			fprintf(stderr, "Measuring whether the TSC can be trusted (about %.2g s)...\n", o.seconds);
		cd_tsc_measure(f, &o, tsc);
		cd_tsc_judge(f, tsc);
	}
	cd_diagnose_deep(f, m->done ? m : NULL, tsc_done ? tsc : NULL, r);
	/* A run that could not tell keeps the last success of the file it
	 * replaces, so that the textfile says how long the verdict is old. */
	struct cd_prom_times times = { .last_run = (double)started.tv_sec + (double)started.tv_nsec / 1e9 };
	if (r->status != CD_STATUS_UNKNOWN)
		times.last_success = times.last_run;
	else if (promfile)
		times.last_success = previous_success(promfile);

	if (color < 0)
		color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	switch (format) {
	case OUT_JSON: cd_output_json(stdout, f, m, r); break;
	case OUT_PROM: cd_output_prometheus(stdout, f, m, r, &times); break;
	default: cd_output_text(stdout, f, m, r, color != 0); break;
	}
	int status = (int)r->status;
	if (promfile && write_promfile(promfile, f, m, r, &times) != 0)
		status = CD_EXIT_UNKNOWN;
	cd_tsc_report_free(tsc);
	free(tsc);
	free(f);
	free(m);
	free(r);
	return cd_report_written("check", status);
}
