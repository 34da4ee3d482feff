/* SPDX-License-Identifier: MIT */
/*
 * numarg.c: the subcommands' option loop, command-line numbers and
 * folders, usage errors and the report's end (numarg.h).
 */
#include "util/numarg.h"
#include "commands.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool cd_parse_double(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' && isfinite(*v);
}

bool cd_parse_long(const char *s, long *v)
{
	char *end;
	errno = 0;
	*v = strtol(s, &end, 10);
	return errno == 0 && end != s && *end == '\0';
}

bool cd_parse_number(const char *s, double lo, double hi, double *v)
{
	double x;
	if (!cd_parse_double(s, &x) || x < lo || x > hi)
		return false;
	*v = x;
	return true;
}

bool cd_parse_whole(const char *s, double lo, double hi, long long *v)
{
	double x;
	if (!cd_parse_number(s, lo, hi, &x) || x != floor(x))
		return false;
	*v = (long long)x;
	return true;
}

int cd_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "clockdoctor %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n(clockdoctor %s --help shows the options)\n", cmd);
	va_end(ap);
	return CD_EXIT_USAGE;
}

/* getopt_long returned '?' or ':' (opterr 0): one line naming the unknown
 * option or the one missing its value, and the --help hint; returns
 * CD_EXIT_USAGE.  optstring and lo are the ones getopt was given. */
static int bad_option(const char *cmd, const char *optstring, const struct option *lo, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	if (strncmp(arg, "--", 2) == 0) {
		size_t n = strcspn(arg + 2, "=");
		for (; lo && lo->name; lo++)
			if (strlen(lo->name) == n && strncmp(lo->name, arg + 2, n) == 0)
				return cd_usage_error(cmd, lo->has_arg == no_argument ? "option --%s takes no value"
				                      : "option --%s needs a value", lo->name);
		return cd_usage_error(cmd, "unknown option '%.*s'", (int)(n + 2), arg);
	}
	if (optopt && optopt != ':' && strchr(optstring, optopt))
		return cd_usage_error(cmd, "option -%c needs a value", optopt);
	if (optopt > ' ' && optopt < 0x7f)
		return cd_usage_error(cmd, "unknown option '-%c'", optopt);
	return cd_usage_error(cmd, "unknown option");
}

int cd_moved_option(const char *cmd, char old, const char *now)
{
	return cd_usage_error(cmd, "-%c is %s now (the short options mean one thing in every command: "
	                      "-p PID, -i INTERVAL, -d DURATION, -n dry run, -q quiet)", old, now);
}

/* Room for the longest command's options (bench: 11), --help and the end. */
#define MAX_LONGS 24

int cd_parse_options(const struct cd_options *o, int argc, char **argv, void *ctx)
{
	static const struct option help = { "help", no_argument, NULL, 'h' };
	struct option longs[MAX_LONGS + 2];
	char shorts[64];
	size_t n = 0;
	for (; o->longs && o->longs[n].name; n++) {
		if (n == MAX_LONGS)
			abort();   /* a command with more options: raise MAX_LONGS */
		longs[n] = o->longs[n];
	}
	longs[n] = help;
	memset(&longs[n + 1], 0, sizeof longs[n + 1]);
	if ((size_t)snprintf(shorts, sizeof shorts, "%sh", o->shorts) >= sizeof shorts)
		abort();
	optind = 0;   /* 0, not 1: getopt starts afresh, '+' read again (glibc, musl) */
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (ch == 'h') {
			o->usage(stdout);
			return cd_report_written(o->cmd, 0);
		}
		if (ch == '?' || ch == ':')
			return bad_option(o->cmd, shorts, longs, argv);
		int rc = o->take(ctx, ch, optarg);
		if (rc >= 0)
			return rc;
	}
	if (!o->operands && optind < argc)
		return cd_usage_error(o->cmd, "unexpected argument '%s'", argv[optind]);
	return -1;
}

int cd_folder_arg(const char *cmd, const char *opt, const char *path)
{
	struct stat st;
	/* never cut to fit: a shorter name is another folder */
	if (strlen(path) >= PATH_MAX)
		return cd_usage_error(cmd, "%s: the folder's name is %zu bytes long, more than the %d a path may have",
		                      opt, strlen(path), PATH_MAX - 1);
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return cd_usage_error(cmd, "%s %s: not a folder", opt, path);
	return -1;
}

int cd_file_arg(const char *cmd, const char *opt, const char *path)
{
	if (!path[0] || path[strlen(path) - 1] == '/')
		return cd_usage_error(cmd, "%s takes a file name, not '%s'", opt, path);
	return -1;
}

int cd_report_written(const char *cmd, int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "clockdoctor %s: cannot write the report: %s\n", cmd,
		        errno ? strerror(errno) : "write error");
		return CD_EXIT_UNKNOWN;
	}
	return status;
}
