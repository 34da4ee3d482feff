/* SPDX-License-Identifier: MIT */
/*
 * main.c: the subcommand table of clockdoctor.
 */
#include "commands.h"
#include "util/buildinfo.h"
#include "output/output.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "check", cd_cmd_check, "is time slow on this machine, why, and what to do" },
	{ "snapshot", cd_cmd_snapshot, "save this machine's facts for `check --root`" },
	{ "bench", cd_cmd_bench, "what each way of reading the time costs here" },
	{ "tsc", cd_cmd_tsc, "can the TSC be trusted: flags, frequency, cross-CPU warp" },
	{ "top", cd_cmd_top, "which processes pay for time system calls, right now" },
	{ "fix", cd_cmd_fix, "carry out check's advice: switch now, persist, undo" },
	{ "watch", cd_cmd_watch, "report clocksource changes as they happen" },
	{ "run", cd_cmd_run, "run a program with the TSC accelerator, where it helps" },
	{ "accuracy", cd_cmd_accuracy, "libfastclock against the kernel's clocks: errors, ppm" },
	{ "report", cd_cmd_report, "one HTML page with the verdict, findings and charts" },
};

/* What this binary was built with, for a bug report: the first line alone
 * is the version, "clockdoctor X.Y.Z", for scripts; the build's revision
 * and date come from the Makefile, and the features are those compiled in
 * (what each needs at run time is in clockdoctor(1)). */
static void version(FILE *out)
{
	static const char *const features[] = {
#if defined(__x86_64__)
		"counter=tsc",             /* libfastclock and `tsc` read the TSC */
#elif defined(__aarch64__)
		"counter=cntvct_el0",      /* the arm64 generic timer */
#else
		"counter=none",            /* the kernel's clocks only */
#endif
		"bpf",                     /* top, watch: exact counts in the kernel */
		"perf-events",             /* top, watch: the syscall tracepoints */
		"vdso-elf",                /* the vDSO's entry found without libc */
#if defined(__SANITIZE_ADDRESS__)
		"asan",
#endif
#if defined(__SANITIZE_THREAD__)
		"tsan",
#endif
	};
	fprintf(out, "clockdoctor %s\nrevision: %s\nbuilt: %s\ncompiler: %s\nfeatures:", CD_VERSION, cd_build_revision,
	        cd_build_date, cd_build_compiler);
	for (size_t i = 0; i < sizeof features / sizeof features[0]; i++)
		fprintf(out, " %s", features[i]);
	fputc('\n', out);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: clockdoctor COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n`clockdoctor help COMMAND` shows a command's options; man clockdoctor has all.\n"
	             "\nexamples:\n"
	             "  clockdoctor check                    # diagnose this machine\n"
	             "  clockdoctor check --json             # the same, for programs\n"
	             "  clockdoctor snapshot /tmp/snap       # save this machine's facts\n"
	             "  clockdoctor check --root /tmp/snap   # diagnose a saved snapshot\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CD_EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	/* `clockdoctor help COMMAND` is `clockdoctor COMMAND --help`, as in git. */
	if (strcmp(argv[1], "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
			if (strcmp(argv[2], commands[i].name) == 0) {
				char *help_argv[] = { argv[2], "--help", NULL };
				return commands[i].run(2, help_argv);
			}
		fprintf(stderr, "clockdoctor help: unknown command '%s' (clockdoctor --help lists them)\n", argv[2]);
		return CD_EXIT_USAGE;
	}
	/* Hidden: every command's options, one a line (numarg.h), for the
	 * completion scripts and the tests: the getopt tables are their one
	 * source. */
	if (strcmp(argv[1], "--list-options") == 0) {
		printf("clockdoctor\t-h\t--help\tnone\nclockdoctor\t-V\t--version\tnone\n");
		int rc = 0;
		for (size_t i = 0; i < sizeof commands / sizeof commands[0] && rc == 0; i++) {
			char *list_argv[] = { (char *)commands[i].name, "--list-options", NULL };
			rc = commands[i].run(2, list_argv);
		}
		return rc;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		version(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "clockdoctor: unknown command '%s' (clockdoctor --help lists them)\n", argv[1]);
	return CD_EXIT_USAGE;
}
