/* SPDX-License-Identifier: MIT */
/*
 * tsc.c: `clockdoctor tsc`: can this machine's TSC be trusted?  Measured,
 * not assumed: the flags, the frequency from every source beside our own
 * measurement, the kernel's cross-CPU warp test run between every pair of
 * CPUs, and the drift of a TSC clock against the kernel's clocks.
 *
 * Options, then probe (measure/tsc.h does the work), then one of the two
 * writers of output/tscreport.h: text under 80 columns for people, JSON
 * for programs (docs/tsc.md).  The exit status is the verdict: 0 sound,
 * 1 unknown, 2 unsound, 3 bad usage.
 */
#include "commands.h"
#include "diagnose/tscjudge.h"
#include "measure/tsc.h"
#include "persist/verdictfile.h"
#include "output/tscreport.h"
#include "output/wrap.h"
#include "util/numarg.h"
#include "util/signals.h"
#include "probe/probe.h"

#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static void tsc_usage(FILE *out)
{
	fprintf(out,
	        "usage: clockdoctor tsc [--json] [-d SECONDS] [--quick]\n"
	        "\n"
	        "Says whether this machine's TSC (arm64: the generic timer) can be trusted:\n"
	        "invariant flags, the frequency from every source against a measurement,\n"
	        "the kernel's cross-CPU warp test between every pair of CPUs, and drift.\n"
	        "\n"
	        "  -j, --json          write JSON (schema: docs/tsc.md)\n"
	        "  -d, --duration SECONDS\n"
	        "                      measure the frequency and drift over SECONDS\n"
	        "                      (default 1; 0.05 to 600)\n"
	        "      --quick         test each CPU against the first, not every pair\n"
	        "\n"
	        "It keeps two CPUs busy at a time for up to about 2 s in all (docs/tsc.md,\n"
	        "OVERHEAD).  Run it as any user.  As root it saves the verdict for this\n"
	        "boot in /run/clockdoctor/tsc-verdict ($CLOCKDOCTOR_STATE_DIR), where\n"
	        "libfastclock and `clockdoctor run` look for it; it changes nothing else.\n"
	        "\n"
	        "Ctrl-C (or SIGTERM) ends it early: it reports what it measured so far,\n"
	        "judged as it stands, and saves no verdict; a second Ctrl-C ends it at once.\n"
	        "\n"
	        "exit status: 0 sound, 1 unknown (could not test it all), 2 unsound,\n"
	        "3 bad usage or the report could not be written\n"
	        "\n"
	        "examples:\n"
	        "  clockdoctor tsc\n"
	        "  clockdoctor tsc --quick -d 0.2\n"
	        "  clockdoctor tsc --json | jq -r '.verdict'\n"
	        "  taskset -c 0 clockdoctor tsc    # one CPU: says no cross-CPU test\n");
}

/* Set by the first Ctrl-C or SIGTERM: the measurement ends and reports. */
static volatile sig_atomic_t stop_requested;

struct tsc_opts {
	bool json, quick;
	double seconds;
};

static int tsc_option(void *ctx, int ch, char *arg)
{
	struct tsc_opts *o = ctx;
	switch (ch) {
	case 'j': o->json = true; break;
	case 'Q': o->quick = true; break;
	case 'q': return cd_moved_option("tsc", 'q', "--quick");
	case 'd':
		if (!cd_parse_number(arg, 0.05, 600, &o->seconds))
			return cd_usage_error("tsc", "-d takes seconds from 0.05 to 600, not '%s'", arg);
		break;
	}
	return -1;
}

int cd_cmd_tsc(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "duration", required_argument, NULL, 'd' },
		{ "quick", no_argument, NULL, 'Q' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct cd_options tsc_options = { "tsc", "jd:q", longs, tsc_usage, tsc_option, false };
	struct tsc_opts opts = { .seconds = 1.0 };
	int rc = cd_parse_options(&tsc_options, argc, argv, &opts);
	if (rc >= 0)
		return rc;
	bool json = opts.json;
	double seconds = opts.seconds;

	struct cd_facts *f = calloc(1, sizeof *f);
	struct cd_tsc_report *t = calloc(1, sizeof *t);
	if (!f || !t) {
		fprintf(stderr, "clockdoctor tsc: out of memory\n");
		free(f);
		free(t);
		return CD_EXIT_UNKNOWN;
	}
	cd_probe("/", true, f);
	struct cd_tsc_opts o;
	cd_tsc_opts_default(&o, seconds, opts.quick);
	int allowed;
	long pairs;
	double est;
	cd_tsc_plan(&o, &allowed, &pairs, &est);
	fprintf(stderr, "Measuring the TSC over %.2g s, %ld CPU pair%s of %d allowed CPU%s: about %.1f s...\n",
	        seconds, pairs, pairs == 1 ? "" : "s", allowed, allowed == 1 ? "" : "s", est + 0.05);
	if (est > 2)
		fprintf(stderr, "Ctrl-C ends it early with what was measured.\n");
	o.stop = &stop_requested;
	cd_catch_stop_twice(&stop_requested, (const int[]){ SIGINT, SIGTERM }, 2);
	cd_tsc_measure(f, &o, t);
	cd_tsc_judge(f, t);
	if (json)
		cd_tsc_json(stdout, f, t);
	else
		cd_tsc_text(stdout, f, t);
	/* The verdict, whatever it is, replaces this boot's earlier one: the
	 * accelerator (libfastclock, `clockdoctor run`) reads it at start. */
	char saved[PATH_MAX + 400];
	fflush(stdout);
	if (t->interrupted) {
		/* a shortened run does not replace this boot's verdict */
		snprintf(saved, sizeof saved, "interrupted: the verdict was not saved");
	} else {
		cd_verdict_save(f, t, saved, sizeof saved);
	}
	cd_wrap_with(stderr, saved, &(struct cd_wrap_opts){ .lead = "clockdoctor tsc: ", .indent = 4,
	                                                   .whole_words = true });
	int status = (int)t->verdict;
	cd_tsc_report_free(t);
	free(f);
	free(t);
	return cd_report_written("tsc", status);
}
