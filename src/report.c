/* SPDX-License-Identifier: MIT */
/*
 * report.c: `clockdoctor report`: one self-contained HTML page with the
 * verdict, the findings and the pictures (report/report.h draws it).
 *
 * The page is drawn from the JSON each command writes, whatever its
 * source: measured here (check, tsc and accuracy in this process, bench and
 * top as child processes of this same program, each bounded in time), read
 * from a snapshot (check's facts only: a snapshot holds no measurement), or
 * read from files someone sent (--from).  Measuring changes nothing on the
 * machine: the TSC verdict is not saved (as `tsc` does), and --clocksources
 * is bench's own switching, which puts the clocksource back.
 */
#include "commands.h"
#include "diagnose/diagnose.h"
#include "diagnose/tscjudge.h"
#include "measure/accuracy.h"
#include "measure/measure.h"
#include "measure/tsc.h"
#include "output/accreport.h"
#include "output/output.h"
#include "output/tscreport.h"
#include "probe/probe.h"
#include "report/report.h"
#include "util/atomicfile.h"
#include "util/beneath.h"
#include "util/fsread.h"
#include "util/numarg.h"
#include "util/spawn.h"

#include "fastclock.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_BUDGET_S 0.6
#define DEFAULT_SECONDS 1.0
#define MAX_FROM 16
/* Above this many CPUs the warp test pairs each CPU with the first only:
 * every pair of 128 CPUs is 8128 pairs, a page of several megabytes. */
#define ALL_PAIRS_MAX_CPUS 32

struct report_opts {
	const char *out;            /* -o; NULL: stdout */
	const char *root;           /* --root */
	double seconds;             /* -d */
	double top_s;               /* --top; 0: not traced */
	const char *clocksources;   /* --clocksources */
	const char *from[MAX_FROM];
	int nfrom;
};

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: clockdoctor report [-o FILE] [-d SECONDS] [--top SECONDS]\n"
	        "                          [--clocksources all|LIST]\n"
	        "       clockdoctor report [-o FILE] --root DIR\n"
	        "       clockdoctor report [-o FILE] --from FILE [--from FILE...]\n"
	        "\n"
	        "Writes one HTML page to look at and to attach to a ticket: the verdict, the\n"
	        "findings with their evidence and fixes, then charts (the cost of each way of\n"
	        "reading the time, latency histograms, the TSC's frequency sources and its\n"
	        "CPU-by-CPU warp test, libfastclock's error against its bound, and with --top\n"
	        "who makes time system calls).  Everything is inside the file: no network,\n"
	        "no script, readable in dark mode, in print and in a narrow window.\n"
	        "\n"
	        "  -o, --output FILE     write the page to FILE (replaced whole; default:\n"
	        "                        standard output, unless it is a terminal)\n"
	        "  -d, --duration SECONDS\n"
	        "                        each measurement's length: bench, tsc and accuracy\n"
	        "                        (default 1; 0.05 to 60); check takes about 1 s more\n"
	        "  -r, --root DIR        a snapshot saved by `clockdoctor snapshot`: its facts\n"
	        "                        and findings (nothing is measured)\n"
	        "      --from FILE       a JSON file a command wrote (check, bench, tsc,\n"
	        "                        accuracy --json; top --json's lines); repeat it for\n"
	        "                        each; nothing is measured\n"
	        "      --top SECONDS     as root: also trace who makes time system calls, as\n"
	        "                        `clockdoctor top` (1 to 600)\n"
	        "      --clocksources all|LIST\n"
	        "                        as root: bench on each clocksource, switched and put\n"
	        "                        back as `clockdoctor bench --clocksources` does\n"
	        "\n"
	        "Progress goes to standard error.  exit status: check's verdict when there is\n"
	        "one (0 ok, 1 warning, 2 critical), 3 could not tell or the page could not be\n"
	        "written\n"
	        "\n"
	        "examples:\n"
	        "  clockdoctor report -o report.html\n"
	        "  sudo clockdoctor report -o report.html --top 10 --clocksources all\n"
	        "  clockdoctor report --root ./snapshot-of-db1 -o db1.html\n"
	        "  clockdoctor report --from check.json --from bench.json --from tsc.json\n");
}

enum { OPT_FROM = 256, OPT_TOP, OPT_CLOCKSOURCES };

static int report_option(void *ctx, int ch, char *arg)
{
	struct report_opts *o = ctx;
	switch (ch) {
	case 'o':
		o->out = arg;
		return cd_file_arg("report", "-o", arg);
	case 'r': o->root = arg; break;
	case 'd':
		if (!cd_parse_number(arg, 0.05, 60, &o->seconds))
			return cd_usage_error("report", "-d takes seconds from 0.05 to 60, not '%s'", arg);
		break;
	case OPT_TOP:
		if (!cd_parse_number(arg, 1, 600, &o->top_s))
			return cd_usage_error("report", "--top takes seconds from 1 to 600, not '%s'", arg);
		break;
	case OPT_CLOCKSOURCES: o->clocksources = arg; break;
	case OPT_FROM:
		if (o->nfrom == MAX_FROM)
			return cd_usage_error("report", "at most %d --from files", MAX_FROM);
		o->from[o->nfrom++] = arg;
		break;
	}
	return -1;
}

static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },  { "root", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' }, { "from", required_argument, NULL, OPT_FROM },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "clocksources", required_argument, NULL, OPT_CLOCKSOURCES },
		{ NULL, 0, NULL, 0 },
	};
	static const struct cd_options report_options = { "report", "o:r:d:", lo, usage, report_option, false };
	int rc = cd_parse_options(&report_options, argc, argv, o);
	if (rc >= 0)
		return rc;
	if (o->root && o->nfrom)
		return cd_usage_error("report", "--root and --from do not go together: one source a page");
	if ((o->root || o->nfrom) && (o->top_s > 0 || o->clocksources))
		return cd_usage_error("report", "--top and --clocksources measure this machine: not with --root or --from");
	/* Checked before anything is measured: a page of HTML on a terminal
	 * helps nobody. */
	if (!o->out && isatty(STDOUT_FILENO))
		return cd_usage_error("report", "the page is HTML: give -o FILE, or redirect standard output");
	return o->root ? cd_folder_arg("report", "--root", o->root) : -1;
}

/* ---- progress ---- */

static bool say_progress;

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
	if (!say_progress)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("report: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* What a writer put into memory, taken as part p. */
typedef void (*writer_fn)(FILE *out, const void *ctx);

static void take_written(struct cd_rpt *r, enum cd_rpt_part p, writer_fn fn, const void *ctx, const char *from)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	struct cd_rpt_input *in = &r->in[p];
	if (!mem) {
		snprintf(in->missing, sizeof in->missing, "not measured: out of memory");
		return;
	}
	fn(mem, ctx);
	char err[200];
	if (fclose(mem) != 0) {
		free(text);
		snprintf(in->missing, sizeof in->missing, "not measured: out of memory");
	} else if (cd_rpt_take(in, p, text, len, err, sizeof err) != 0) {
		snprintf(in->missing, sizeof in->missing, "could not be read back: %s", err);
	} else {
		snprintf(in->from, sizeof in->from, "%s", from);
	}
}

/* ---- measuring here ---- */

struct check_ctx {
	struct cd_facts f;
	struct cd_measurements m;
	struct cd_report rep;
	struct cd_tsc_report tsc;
};

static void write_check(FILE *out, const void *ctx)
{
	const struct check_ctx *c = ctx;
	cd_output_json(out, &c->f, &c->m, &c->rep);
}

static void write_tsc(FILE *out, const void *ctx)
{
	const struct check_ctx *c = ctx;
	cd_tsc_json(out, &c->f, &c->tsc);
}

static void write_accuracy(FILE *out, const void *ctx)
{
	cd_acc_json(out, ctx);
}

/* This program again, as a child, its JSON taken as part p. */
static void run_self(struct cd_rpt *r, enum cd_rpt_part p, char **argv, int timeout_ms)
{
	struct cd_rpt_input *in = &r->in[p];
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) {
		snprintf(in->missing, sizeof in->missing, "not measured: /proc/self/exe cannot be read");
		return;
	}
	self[n] = '\0';
	argv[0] = self;
	char *text;
	size_t len;
	bool cut;
	int rc = cd_spawn_capture(argv, timeout_ms, CD_RPT_TEXT_MAX, &text, &len, &cut);
	if (rc < 0 && !text) {
		snprintf(in->missing, sizeof in->missing, "not measured: %s", strerror(-rc));
		return;
	}
	char err[200];
	if (len == 0) {
		free(text);
		snprintf(in->missing, sizeof in->missing, "not measured: clockdoctor %s wrote nothing (exit status %d)",
		         argv[1], rc);
		return;
	}
	if (cd_rpt_take(in, p, text, len, err, sizeof err) != 0) {
		snprintf(in->missing, sizeof in->missing, "not measured: clockdoctor %s's JSON: %s", argv[1], err);
		return;
	}
	snprintf(in->from, sizeof in->from, "measured here by clockdoctor %s (exit status %d)", argv[1], rc);
}

static void measure_here(struct cd_rpt *r, const struct report_opts *o, struct check_ctx *c)
{
	char secs[32];
	snprintf(secs, sizeof secs, "%g", o->seconds);
	cd_probe("/", true, &c->f);

	progress("[1/%d] check: the cost of 9 ways of reading the time (about 1 s)", o->top_s > 0 ? 5 : 4);
	cd_measure_check(&c->m, CHECK_BUDGET_S);

	struct cd_tsc_opts t;
	cd_tsc_opts_default(&t, o->seconds, c->f.cpu.count > ALL_PAIRS_MAX_CPUS);
	int allowed;
	long pairs;
	double est;
	cd_tsc_plan(&t, &allowed, &pairs, &est);
	progress("[2/%d] tsc: frequency and the warp test, %ld CPU pair%s (about %.1f s)", o->top_s > 0 ? 5 : 4, pairs,
	         pairs == 1 ? "" : "s", est + 0.05);
	cd_tsc_measure(&c->f, &t, &c->tsc);
	cd_tsc_judge(&c->f, &c->tsc);
	cd_diagnose_deep(&c->f, &c->m, &c->tsc, &c->rep);
	take_written(r, CD_RPT_CHECK, write_check, c, "measured here by clockdoctor check (with the TSC measured)");
	take_written(r, CD_RPT_TSC, write_tsc, c, "measured here by clockdoctor tsc (the verdict not saved)");

	progress("[3/%d] bench: every way of reading the time%s (about %s s)", o->top_s > 0 ? 5 : 4,
	         o->clocksources ? " on each clocksource" : "", secs);
	char *bench_argv[] = { NULL, "bench", "--json", "-d", secs, o->clocksources ? "--clocksources" : NULL,
		               (char *)o->clocksources, NULL };
	run_self(r, CD_RPT_BENCH, bench_argv, (int)(o->seconds * 1000 * (o->clocksources ? 20 : 1)) + 60000);

	progress("[4/%d] accuracy: libfastclock against the kernel's clocks (about %s s)", o->top_s > 0 ? 5 : 4, secs);
	struct cd_acc_result *acc = calloc(1, sizeof *acc);
	if (acc) {
		struct cd_acc_params ap = { .duration_s = o->seconds, .threads = 2 };
		cd_accuracy_run(&ap, acc);
		struct fc_info info;
		struct cd_acc_report rp = { .duration_s = o->seconds, .r = acc, .info = &info };
		rp.info_ok = fc_info(&info) == 0;
		rp.exit_status = acc->err ? CD_EXIT_UNKNOWN : cd_accuracy_ok(acc) ? 0 : CD_EXIT_WARNING;
		take_written(r, CD_RPT_ACCURACY, write_accuracy, &rp, "measured here by clockdoctor accuracy (2 threads)");
		free(acc);
	} else {
		snprintf(r->in[CD_RPT_ACCURACY].missing, sizeof r->in[CD_RPT_ACCURACY].missing, "not measured: out of memory");
	}

	if (o->top_s > 0) {
		char ts[32], iv[32];
		snprintf(ts, sizeof ts, "%g", o->top_s);
		snprintf(iv, sizeof iv, "%g", o->top_s >= 20 ? o->top_s / 20 : 1);
		progress("[5/5] top: who makes time system calls (%s s)", ts);
		char *top_argv[] = { NULL, "top", "--json", "-i", iv, "-d", ts, NULL };
		run_self(r, CD_RPT_TOP, top_argv, (int)(o->top_s * 1000) + 30000);
	} else {
		snprintf(r->in[CD_RPT_TOP].missing, sizeof r->in[CD_RPT_TOP].missing,
		         "not traced (--top SECONDS, as root)");
	}
	for (int p = 0; p < CD_RPT_N; p++)
		if (p != CD_RPT_TOP && !r->in[p].n)
			fprintf(stderr, "clockdoctor report: %s: %s\n", cd_rpt_part_name(p), r->in[p].missing);
}

/* ---- a snapshot ---- */

static void from_snapshot(struct cd_rpt *r, const char *root, struct check_ctx *c)
{
	cd_probe(root, false, &c->f);
	cd_diagnose(&c->f, NULL, &c->rep);
	take_written(r, CD_RPT_CHECK, write_check, c, "clockdoctor check --root on the snapshot (nothing measured)");
	for (int p = CD_RPT_BENCH; p < CD_RPT_N; p++)
		snprintf(r->in[p].missing, sizeof r->in[p].missing, "measured: nothing (a snapshot holds no measurement)");
}

/* ---- files sent ---- */

static int from_files(struct cd_rpt *r, const struct report_opts *o)
{
	for (int i = 0; i < o->nfrom; i++) {
		const char *path = o->from[i];
		size_t len;
		int err, trunc;
		char *text = cd_read_named(path, CD_RPT_TEXT_MAX, &len, &err, &trunc);
		if (!text) {
			fprintf(stderr, "clockdoctor report: cannot read %s: %s\n", path, cd_beneath_strerror(err));
			return -1;
		}
		if (trunc) {
			fprintf(stderr, "clockdoctor report: %s: larger than %u MB\n", path, CD_RPT_TEXT_MAX >> 20);
			free(text);
			return -1;
		}
		/* Which command wrote it: its "command" field. */
		char msg[200];
		struct cd_json *peek = cd_json_parse(text, len, NULL, msg, sizeof msg);
		const char *cmd = cd_jv_getstr(cd_json_root(peek), "command", NULL);
		int part = -1;
		for (int p = 0; cmd && p < CD_RPT_N; p++)
			if (strcmp(cmd, cd_rpt_part_name(p)) == 0)
				part = p;
		cd_json_free(peek);
		if (!peek) {
			fprintf(stderr, "clockdoctor report: %s: not JSON: %s\n", path, msg);
			free(text);
			return -1;
		}
		if (part < 0) {
			fprintf(stderr, "clockdoctor report: %s: not the JSON of check, bench, tsc, accuracy or top\n", path);
			free(text);
			return -1;
		}
		struct cd_rpt_input *in = &r->in[part];
		if (in->n) {
			fprintf(stderr, "clockdoctor report: %s: a second %s file\n", path, cd_rpt_part_name(part));
			free(text);
			return -1;
		}
		if (cd_rpt_take(in, part, text, len, msg, sizeof msg) != 0) {
			fprintf(stderr, "clockdoctor report: %s: %s\n", path, msg);
			return -1;
		}
		snprintf(in->from, sizeof in->from, "the file %s", path);
	}
	for (int p = 0; p < CD_RPT_N; p++)
		if (!r->in[p].n)
			snprintf(r->in[p].missing, sizeof r->in[p].missing, "not among the files given");
	return 0;
}

/* ---- the command ---- */

#define PAGE_MODE 0600

static int write_page(const struct report_opts *o, const struct cd_rpt *r, size_t *size)
{
	char *page = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&page, &len);
	if (!mem) {
		fprintf(stderr, "clockdoctor report: out of memory\n");
		return -1;
	}
	cd_rpt_page(mem, r);
	if (fclose(mem) != 0) {
		free(page);
		fprintf(stderr, "clockdoctor report: out of memory\n");
		return -1;
	}
	*size = len;
	int rc = 0;
	if (o->out) {
		/* 0600: the page carries lines of the kernel log, which a
		 * snapshot keeps from other users too (dmesg.txt) */
		rc = cd_write_atomic(o->out, page, len, PAGE_MODE, true);
		if (rc < 0)
			fprintf(stderr, "clockdoctor report: cannot write %s: %s\n", o->out,
			        rc == -EINVAL ? "not a file (a device, a pipe or a terminal): leave -o out to write "
			                        "to standard output"
			                      : strerror(-rc));
	} else if (fwrite(page, 1, len, stdout) != len) {
		rc = -EIO;
	}
	free(page);
	return rc < 0 ? -1 : 0;
}

int cd_cmd_report(int argc, char **argv)
{
	struct report_opts o = { .seconds = DEFAULT_SECONDS };
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		return rc;
	say_progress = isatty(STDERR_FILENO);
	struct cd_rpt *r = calloc(1, sizeof *r);
	struct check_ctx *c = calloc(1, sizeof *c);
	if (!r || !c) {
		fprintf(stderr, "clockdoctor report: out of memory\n");
		free(r);
		free(c);
		return CD_EXIT_UNKNOWN;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	time_t now = time(NULL);
	struct tm tm;
	strftime(r->generated, sizeof r->generated, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &tm));
	int status = CD_EXIT_UNKNOWN;
	bool ok = true;
	if (o.nfrom) {
		r->origin = CD_RPT_FILES;
		ok = from_files(r, &o) == 0;
	} else if (o.root) {
		r->origin = CD_RPT_SNAPSHOT;
		r->root = o.root;
		from_snapshot(r, o.root, c);
	} else {
		r->origin = CD_RPT_LIVE;
		measure_here(r, &o, c);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (ok) {
		size_t size = 0;
		if (write_page(&o, r, &size) == 0) {
			const char *st = cd_jv_getstr(cd_rpt_doc(r, CD_RPT_CHECK), "status", "unknown");
			status = strcmp(st, "ok") == 0         ? CD_EXIT_OK
			         : strcmp(st, "warning") == 0  ? CD_EXIT_WARNING
			         : strcmp(st, "critical") == 0 ? CD_EXIT_FAILED
			                                       : CD_EXIT_UNKNOWN;
			if (o.out)
				progress("wrote %s (%zu bytes)", o.out, size);
		}
	}
	cd_rpt_free(r);
	cd_tsc_report_free(&c->tsc);
	free(r);
	free(c);
	return cd_report_written("report", status);
}
