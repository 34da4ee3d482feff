/* SPDX-License-Identifier: MIT */
/*
 * accuracy.c: `clockdoctor accuracy`: libfastclock against the kernel's
 * clocks, reading by reading, on several threads at once.
 *
 * The measuring is in measure/accuracy.c and its statistics in
 * measure/accstats.c, the report in output/accreport.c; this file reads the
 * options.  docs/accuracy.md describes it all.  Ctrl-C ends the run early
 * and reports what was measured, as bench does; the flag it sets is the only
 * mutable global here.
 */
#include "util/numarg.h"
#include "util/signals.h"
#include "commands.h"
#include "measure/accuracy.h"
#include "output/accreport.h"

#include "fastclock.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DURATION_S 10.0
#define MAX_DURATION_S 86400.0
/* Each thread keeps about 600 KB of histograms and buffers. */
#define MAX_THREADS 128
#define EXIT_BROKEN CD_EXIT_WARNING
#define EXIT_NOT_RUN CD_EXIT_UNKNOWN

static volatile sig_atomic_t stop_requested;

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: clockdoctor accuracy [-d SECONDS] [-t THREADS] [--json]\n"
	        "\n"
	        "Holds libfastclock against the kernel's clocks: on THREADS threads, each\n"
	        "reading of fc_now_ns() and fc_realtime_ns() is taken between two reads of\n"
	        "CLOCK_MONOTONIC or CLOCK_REALTIME, and the difference from the bracket's\n"
	        "midpoint is its error.  Reports the figures a hand-made rdtsc clock is\n"
	        "judged by (max and mean diff, readings off by more than 1 us and 10 us),\n"
	        "percentiles, the frequency error in ppm, backward steps within and\n"
	        "across threads, and whether any reading fell outside the error bound the\n"
	        "library states (fc_info).\n"
	        "\n"
	        "  -d, --duration SECONDS   how long to compare (default 10)\n"
	        "  -t, --threads THREADS    threads reading at once (default 2, at most 128)\n"
	        "  -j, --json               write JSON (schema: docs/accuracy.md)\n"
	        "\n"
	        "exit status: 0 within its own bound and never backwards, 1 outside its bound\n"
	        "or backwards, 3 could not tell (bad usage, the comparison could not run, or\n"
	        "the report could not be written)\n"
	        "\n"
	        "examples:\n"
	        "  clockdoctor accuracy                 # 10 s on 2 threads\n"
	        "  clockdoctor accuracy -d 60 -t 2      # the library's acceptance run\n"
	        "  clockdoctor accuracy -t 8 --json | jq '.clocks[0].p999_abs_ns'\n"
	        "  FASTCLOCK=off clockdoctor accuracy -d 2   # the kernel fallback\n");
}

struct accuracy_opts {
	struct cd_acc_params *p;
	bool *json;
};

static int accuracy_option(void *ctx, int ch, char *arg)
{
	struct accuracy_opts *o = ctx;
	long l;
	switch (ch) {
	case 'd':
		if (!cd_parse_double(arg, &o->p->duration_s) || o->p->duration_s <= 0 || o->p->duration_s > MAX_DURATION_S)
			return cd_usage_error("accuracy", "-d takes a duration in seconds, more than 0 and at most 86400: '%s'",
			                      arg);
		break;
	case 't':
		if (!cd_parse_long(arg, &l) || l < 1 || l > MAX_THREADS)
			return cd_usage_error("accuracy", "-t takes a number of threads from 1 to 128: '%s'", arg);
		o->p->threads = (int)l;
		break;
	case 'j': *o->json = true; break;
	}
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, struct cd_acc_params *p, bool *json)
{
	static const struct option lo[] = {
		{ "duration", required_argument, NULL, 'd' }, { "threads", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct cd_options accuracy_options = { "accuracy", "d:t:j", lo, usage, accuracy_option, false };
	struct accuracy_opts o = { p, json };
	return cd_parse_options(&accuracy_options, argc, argv, &o);
}

int cd_cmd_accuracy(int argc, char **argv)
{
	struct cd_acc_params p = { .duration_s = DEFAULT_DURATION_S, .threads = 2, .stop = &stop_requested };
	bool json = false;
	int rc = parse_opts(argc, argv, &p, &json);
	if (rc >= 0)
		return rc;
	struct cd_acc_result *r = calloc(1, sizeof *r);
	if (!r) {
		fprintf(stderr, "clockdoctor accuracy: out of memory\n");
		return EXIT_NOT_RUN;
	}
	fprintf(stderr, "Comparing libfastclock with the kernel's clocks on %d thread%s for %.1f s...\n"
	                "Hit Ctrl-C to end.\n",
	        p.threads, p.threads == 1 ? "" : "s", p.duration_s);
	/* The main thread waits in pthread_join, which Ctrl-C does not
	 * interrupt; the threads see the flag at their next block. */
	cd_catch_stop_twice(&stop_requested, (const int[]){ SIGINT }, 1);
	cd_accuracy_run(&p, r);
	struct fc_info info;
	struct cd_acc_report rp = { .duration_s = p.duration_s, .r = r, .info = &info };
	rp.info_ok = fc_info(&info) == 0;
	rc = r->err ? EXIT_NOT_RUN : cd_accuracy_ok(r) ? 0 : EXIT_BROKEN;
	rp.exit_status = rc;
	if (json)
		cd_acc_json(stdout, &rp);
	else
		cd_acc_text(stdout, &rp);
	free(r);
	return cd_report_written("accuracy", rc);
}
