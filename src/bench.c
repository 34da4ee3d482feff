/* SPDX-License-Identifier: MIT */
/*
 * bench.c: `clockdoctor bench`: what every way of reading the time costs
 * here, and, as root, on every clocksource side by side.
 *
 * The measuring is in measure/ (benchrun.c and what it calls), the switching
 * and its guarantees in measure/csswitch.c, the report (text and JSON) in
 * output/benchreport.c; this file reads the options and runs one measurement
 * per clocksource, switching between them.  docs/bench.md describes it all.
 *
 * Ctrl-C ends the measurement early and reports what was measured, as bcc's
 * tools do; a second Ctrl-C ends the process at once (after putting the
 * clocksource back).  The flag it sets is the only mutable global here.
 */
#include "util/numarg.h"
#include "util/signals.h"
#include "commands.h"
#include "measure/benchrun.h"
#include "measure/csswitch.h"
#include "persist/csrestore.h"
#include "probe/probe.h"
#include "measure/ways.h"
#include "output/benchreport.h"
#include "output/output.h"
#include "output/wrap.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_DURATION_S 2.0
#define MAX_DURATION_S 86400.0
#define MAX_THREADS 1024
#define SAMPLE_CAP (1u << 20)
#define DEFAULT_CS_WAYS "CLOCK_MONOTONIC,CLOCK_REALTIME,gettimeofday"
#define EXIT_BACKWARD CD_EXIT_WARNING
#define EXIT_CLOCKSOURCE CD_EXIT_FAILED

/* Set by the first Ctrl-C (see the top of the file). */
static volatile sig_atomic_t stop_requested;

struct opts {
	const char *clocks;         /* -c, NULL: the default */
	double duration_s;
	long calls;
	int threads;
	bool json, summary, targets;
	const char *clocksources;   /* --clocksources */
};

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: clockdoctor bench [-c LIST] [-d SECONDS | --calls CALLS] [-t THREADS]\n"
	        "                         [--json] [--summary] [--clocksources all|LIST]\n"
	        "       clockdoctor bench --restore | --list\n"
	        "\n"
	        "Measures what each way of reading the time costs here: a call's cost (median\n"
	        "of batches), single calls' latency percentiles and log2 histogram, the\n"
	        "resolution, backward steps, whether the call enters the kernel, and, with\n"
	        "-t, how the cost scales over threads.\n"
	        "\n"
	        "  -c, --clocks LIST        ways to measure, comma-separated (default: all;\n"
	        "                           with --clocksources: " "CLOCK_MONOTONIC,\n"
	        "                           CLOCK_REALTIME,gettimeofday); see --list\n"
	        "  -d, --duration SECONDS   time to spend in all (default 2)\n"
	        "      --calls CALLS        calls per way, instead of a duration\n"
	        "  -t, --threads THREADS    also THREADS threads at once, against 1\n"
	        "  -j, --json               write JSON (schema: docs/bench.md)\n"
	        "  -s, --summary            only the summary table, no histograms\n"
	        "      --clocksources all|LIST\n"
	        "                           as root: switch to each clocksource, measure,\n"
	        "                           and switch back to the original\n"
	        "      --restore            put back the clocksource a killed run left\n"
	        "      --targets            with libfastclock's calls: each ratio beside the\n"
	        "                           library's own design target (for `make bench`)\n"
	        "  -l, --list               list the ways of reading the time\n"
	        "\n"
	        "exit status: 0 done, 1 a clock went backwards, 2 a clocksource could not be\n"
	        "switched or restored, 3 bad usage or the report could not be written\n"
	        "\n"
	        "examples:\n"
	        "  clockdoctor bench                        # every way, about 2 s\n"
	        "  clockdoctor bench -c monotonic,monotonic/syscall -d 5\n"
	        "  clockdoctor bench -c gettimeofday -t 4   # 4 threads at once\n"
	        "  clockdoctor bench -c rdtsc,monotonic_coarse --calls 1000000\n"
	        "  clockdoctor bench -s -c library      # libfastclock against its rivals\n"
	        "  clockdoctor bench --json | jq '.runs[0].ways[] | {name, ns_per_call}'\n"
	        "  sudo clockdoctor bench --clocksources all   # tsc, hpet, acpi_pm...\n"
	        "  sudo clockdoctor bench --restore   # after a run was killed with -9\n");
}

static void list_ways(void)
{
	int n;
	const struct cd_clock_spec *w = cd_ways(&n);
	printf("%-34s %s\n", "WAY", "CALLS");
	for (int i = 0; i < n; i++)
		printf("%-34s %s%s\n", w[i].name, cd_way_call(&w[i]),
		       cd_way_forced(&w[i]) ? " through syscall(2)" : w[i].kind == CD_CALL_COUNTER ? " (the CPU's counter)" : "");
	printf("\nGroups: all, libc, syscall, counter, library (libfastclock's calls, with\n"
	       "their cost side by side with what they compete with).  Names are matched\n"
	       "in any case, with or without CLOCK_, '-' or ';' for '_' (monotonic,\n"
	       "realtime-coarse, lfence_rdtsc); aliases: gtod, process_cputime,\n"
	       "thread_cputime, tsc, fc_gettime, fastclock (the group library).\n");
}

/* ---- options ---- */

enum { OPT_CLOCKSOURCES = 256, OPT_RESTORE, OPT_TARGETS };

struct bench_parse {
	struct opts *o;
	bool restore;              /* --restore */
	bool have_d;
};

static int bench_option(void *ctx, int ch, char *arg)
{
	struct bench_parse *bp = ctx;
	struct opts *o = bp->o;
	long l;
	switch (ch) {
	case 'c': o->clocks = arg; break;
	case 'd':
		if (!cd_parse_double(arg, &o->duration_s) || o->duration_s <= 0 || o->duration_s > MAX_DURATION_S)
			return cd_usage_error("bench", "-d takes a duration in seconds, more than 0 and at most 86400: '%s'", arg);
		bp->have_d = true;
		break;
	case 'n': return cd_moved_option("bench", 'n', "--calls");
	case 'N':
		/* Capped so that a run (and a switched clocksource) cannot
		 * outlast the operator's patience: 1e10 calls of a 2 us clock
		 * are already 5.5 hours. */
		if (!cd_parse_long(arg, &o->calls) || o->calls < 1 || o->calls > 10000000000L)
			return cd_usage_error("bench", "--calls takes a number of calls from 1 to 10000000000: '%s'", arg);
		break;
	case 't':
		if (!cd_parse_long(arg, &l) || l < 1 || l > MAX_THREADS)
			return cd_usage_error("bench", "-t takes a number of threads from 1 to 1024: '%s'", arg);
		o->threads = (int)l;
		break;
	case 'j': o->json = true; break;
	case 's': o->summary = true; break;
	case 'l': list_ways(); return 0;
	case OPT_CLOCKSOURCES: o->clocksources = arg; break;
	case OPT_RESTORE: bp->restore = true; break;
	case OPT_TARGETS: o->targets = true; break;
	}
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, struct opts *o, bool *restore)
{
	static const struct option lo[] = {
		{ "clocks", required_argument, NULL, 'c' },  { "duration", required_argument, NULL, 'd' },
		{ "calls", required_argument, NULL, 'N' },   { "threads", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },          { "summary", no_argument, NULL, 's' },
		{ "list", no_argument, NULL, 'l' },
		{ "clocksources", required_argument, NULL, OPT_CLOCKSOURCES },
		{ "restore", no_argument, NULL, OPT_RESTORE }, { "targets", no_argument, NULL, OPT_TARGETS },
		{ NULL, 0, NULL, 0 },
	};
	static const struct cd_options bench_options = { "bench", "c:d:t:jsln", lo, usage, bench_option, false };
	struct bench_parse bp = { .o = o };
	int rc = cd_parse_options(&bench_options, argc, argv, &bp);
	*restore = bp.restore;
	if (rc >= 0)
		return rc;
	if (bp.have_d && o->calls > 0)
		return cd_usage_error("bench", "-d and --calls do not go together: a duration or a number of calls");
	if (*restore && (o->clocksources || o->clocks || bp.have_d || o->calls || o->threads > 1))
		return cd_usage_error("bench", "--restore takes no other option");
	return -1;
}

/* The --clocksources list, each checked against the available ones. */
static int parse_clocksources(const char *arg, const struct cd_cs *cs, char out[][CD_CS_NAME_MAX])
{
	char avail[CD_CS_MAX][CD_CS_NAME_MAX];
	int na = cd_cs_available(cs, avail, CD_CS_MAX);
	if (na < 0) {
		fprintf(stderr, "clockdoctor bench: cannot read %s: %s\n", cs->available_path, strerror(-na));
		return -1;
	}
	if (strcmp(arg, "all") == 0) {
		memcpy(out, avail, sizeof avail);
		return na;
	}
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", arg);
	int n = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool found = false;
		for (int i = 0; i < na; i++)
			found |= strcmp(avail[i], tok) == 0;
		if (!found) {
			fprintf(stderr, "clockdoctor bench: clocksource '%s' is not available here (available:", tok);
			for (int i = 0; i < na; i++)
				fprintf(stderr, " %s", avail[i]);
			fprintf(stderr, ")\n");
			return -1;
		}
		bool dup = false;
		for (int i = 0; i < n; i++)
			dup |= strcmp(out[i], tok) == 0;
		if (!dup && n < CD_CS_MAX)
			strcpy(out[n++], tok);
	}
	if (n == 0)
		fprintf(stderr, "clockdoctor bench: --clocksources needs 'all' or a list of names\n");
	return n > 0 ? n : -1;
}

/* ---- signals and progress ---- */

static void on_sigint(int sig)
{
	if (!stop_requested) {
		stop_requested = 1;
		return;
	}
	/* The second Ctrl-C: end now, but never leave the clocksource switched. */
	cd_cs_restore_signal_safe();
	signal(sig, SIG_DFL);
	raise(sig);
}

struct progress {
	bool on;
	const char *cs;
};

static void show_progress(void *ctx, int i, int n, const char *name)
{
	const struct progress *p = ctx;
	if (p->on)
		fprintf(stderr, "\r\033[K  [%d/%d] %s%s%s", i + 1, n, p->cs ? p->cs : "", p->cs ? ": " : "", name);
}


/* ---- the command ---- */

static int do_restore(void)
{
	struct cd_cs cs;
	char msg[1024];
	if (cd_cs_init(&cs, NULL, NULL) != 0) {
		fprintf(stderr, "clockdoctor bench: path too long\n");
		return EXIT_CLOCKSOURCE;
	}
	enum cd_cs_recovery r = cd_cs_recover(&cs, msg, sizeof msg);
	bool ok = r == CD_CS_NO_RECORD || r == CD_CS_RESTORED || r == CD_CS_WAS_ORIGINAL;
	fprintf(ok ? stdout : stderr, "clockdoctor bench: %s\n", msg);
	return ok ? 0 : EXIT_CLOCKSOURCE;
}

/* bcc's habit: say what is being done and how to end it. */
static void startup_line(const struct opts *o, int nways, int ncs, char cs[][CD_CS_NAME_MAX])
{
	char line[1024];
	size_t n = 0;
	n += (size_t)snprintf(line + n, sizeof line - n, "Measuring %d way%s of reading the time", nways,
	                      nways == 1 ? "" : "s");
	for (int i = 0; i < ncs && n < sizeof line; i++)
		n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", i ? " " : " on clocksources ", cs[i]);
	if (o->threads > 1 && n < sizeof line)
		n += (size_t)snprintf(line + n, sizeof line - n, ", also %d threads at once,", o->threads);
	if (n < sizeof line) {
		if (o->calls > 0)
			snprintf(line + n, sizeof line - n, "%s %ld calls each... Hit Ctrl-C to end.",
			         o->threads > 1 ? "" : ",", o->calls);
		else
			snprintf(line + n, sizeof line - n, " for about %.1f s... Hit Ctrl-C to end.", o->duration_s);
	}
	cd_wrap_with(stderr, line, &(struct cd_wrap_opts){ .whole_words = true });
}

/* Measure each clocksource in turn (or the current one), switching as
 * needed; the caller switches back. */
static void measure_all(struct cd_bench_report *rp, const struct opts *o, struct cd_cs *cs, uint32_t *buf)
{
	bool tty = cd_term_escapes(STDERR_FILENO);  /* the progress line is redrawn in place */
	/* Calibration and the timer's overhead take about 0.1 s of the budget. */
	double budget = o->duration_s > 0.2 ? o->duration_s - 0.1 : o->duration_s / 2;
	int total = rp->nruns;
	for (int k = 0; k < total; k++) {
		if (stop_requested) {
			rp->runs[k].interrupted = true;
			continue;
		}
		if (rp->switched) {
			char err[512];
			if (cd_cs_switch(cs, rp->cs_name[k], err, sizeof err) != 0) {
				/* One clocksource the kernel refuses (not fit for high
				 * resolution, marked unstable) does not end the comparison. */
				size_t used = strlen(rp->cs_error);
				snprintf(rp->cs_error + used, sizeof rp->cs_error - used, "%scould not measure clocksource %s: %s",
				         used ? "; " : "", rp->cs_name[k], err);
				fprintf(stderr, "clockdoctor bench: could not switch to %s: %s\n", rp->cs_name[k], err);
				rp->runs[k].interrupted = true;
				continue;
			}
		}
		struct progress pr = { tty && (o->calls > 0 || o->duration_s > 1), rp->switched ? rp->cs_name[k] : NULL };
		struct cd_bench_params p = {
			.budget_s = budget / total, .calls = o->calls, .threads = o->threads,
			.stop = &stop_requested, .progress = show_progress, .ctx = &pr,
		};
		cd_bench_measure(&rp->runs[k], &p, buf, SAMPLE_CAP);
		if (pr.on)
			fprintf(stderr, "\r\033[K");
	}
}

/* Set up the runs; for --clocksources also check root, the names, and any
 * record an earlier run left.  Returns -1 to go on, else the exit status. */
static int prepare(struct cd_bench_report *rp, const struct opts *o, struct cd_cs *cs,
                   const struct cd_clock_spec **ways, int nways)
{
	char err[512];
	if (cd_cs_init(cs, NULL, NULL) != 0)
		return cd_usage_error("bench", "a path is too long (CLOCKDOCTOR_SYSFS, CLOCKDOCTOR_STATE_DIR)");
	if (o->clocksources) {
		if (cd_cs_writable(cs, err, sizeof err) != 0)
			return cd_usage_error("bench", "--clocksources: %s", err);
		int n = parse_clocksources(o->clocksources, cs, rp->cs_name);
		if (n < 0)
			return CD_EXIT_USAGE;
		if (cd_cs_current(cs, rp->original, sizeof rp->original) != 0)
			return cd_usage_error("bench", "cannot read %s", cs->current_path);
		enum cd_cs_recovery rec = cd_cs_recover(cs, err, sizeof err);
		if (rec != CD_CS_NO_RECORD)
			fprintf(stderr, "clockdoctor bench: %s\n", err);
		/* A corrupt record leaves the original unknown: a person must look
		 * before anything is switched again (the record is moved aside, so
		 * the next run goes ahead). */
		if (rec == CD_CS_OWNER_RUNNING || rec == CD_CS_FAILED || rec == CD_CS_CORRUPT)
			return EXIT_CLOCKSOURCE;
		cd_cs_current(cs, rp->original, sizeof rp->original);
		rp->nruns = n;
		rp->switched = true;
	} else {
		if (cd_cs_current(cs, rp->cs_name[0], sizeof rp->cs_name[0]) != 0)
			strcpy(rp->cs_name[0], "unknown");
		if (access(cs->record_path, F_OK) == 0)
			fprintf(stderr, "clockdoctor bench: warning: %s says an earlier run left the clocksource "
			        "switched: clockdoctor bench --restore\n", cs->record_path);
		rp->nruns = 1;
	}
	/* The runs get the timer once it is calibrated (cd_cmd_bench). */
	for (int k = 0; k < rp->nruns; k++)
		if (cd_bench_run_init(&rp->runs[k], ways, nways, &rp->timer) != 0)
			return EXIT_CLOCKSOURCE;
	return -1;
}

int cd_cmd_bench(int argc, char **argv)
{
	struct opts o = { .duration_s = DEFAULT_DURATION_S, .threads = 1 };
	bool restore = false;
	int rc = parse_opts(argc, argv, &o, &restore);
	if (rc >= 0)
		return rc;
	if (restore)
		return do_restore();
	const struct cd_clock_spec *ways[64];
	char err[512];
	int nways = cd_ways_parse(o.clocks ? o.clocks : o.clocksources ? DEFAULT_CS_WAYS : "all", ways, 64, err,
	                          sizeof err);
	if (nways < 0)
		return cd_usage_error("bench", "-c: %s", err);
	if (o.calls > 0)
		o.duration_s = 0;

	struct cd_bench_report *rp = calloc(1, sizeof *rp);
	uint32_t *buf = malloc(SAMPLE_CAP * sizeof *buf);
	struct cd_cs cs;
	if (!rp || !buf) {
		fprintf(stderr, "clockdoctor bench: out of memory\n");
		free(rp);
		free(buf);
		return CD_EXIT_UNKNOWN;
	}
	rp->duration_s = o.duration_s;
	rp->calls = o.calls;
	rp->threads = o.threads;
	rp->summary = o.summary;
	rp->targets = o.targets;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	rp->cpus = cpus > 0 ? (int)cpus : 1;
	cd_cpu_describe_live(rp->cpu, sizeof rp->cpu);
	rc = prepare(rp, &o, &cs, ways, nways);
	if (rc < 0) {
		startup_line(&o, nways, rp->switched ? rp->nruns : 0, rp->cs_name);
		/* Ctrl-C ends the measurement, and a sleep in calibration at once. */
		cd_catch_signal(SIGINT, on_sigint);
		/* The timer is calibrated on the clocksource the machine runs on. */
		cd_timer_init(&rp->timer);
		for (int k = 0; k < rp->nruns; k++)
			rp->runs[k].timer = rp->timer;
		rc = 0;
		if (rp->switched && cd_cs_begin(&cs, false, err, sizeof err) != 0) {
			fprintf(stderr, "clockdoctor bench: %s\n", err);
			rc = EXIT_CLOCKSOURCE;
		} else {
			measure_all(rp, &o, &cs, buf);
			if (rp->switched) {
				rp->restored = cd_cs_end(&cs, err, sizeof err) == 0;
				if (!rp->restored) {
					snprintf(rp->cs_error, sizeof rp->cs_error, "COULD NOT RESTORE clocksource %s: %s",
					         rp->original, err);
					fprintf(stderr, "clockdoctor bench: %s\n", rp->cs_error);
				}
				if (!rp->restored || rp->cs_error[0])
					rc = EXIT_CLOCKSOURCE;
			}
			for (int k = 0; k < rp->nruns && rc == 0; k++)
				if (cd_bench_backward(&rp->runs[k]))
					rc = EXIT_BACKWARD;
			rp->exit_status = rc;
			if (o.json)
				cd_bench_json(stdout, rp);
			else
				cd_bench_text(stdout, rp);
		}
	}
	for (int k = 0; k < CD_CS_MAX; k++)
		cd_bench_run_free(&rp->runs[k]);
	free(rp);
	free(buf);
	return cd_report_written("bench", rc);
}
