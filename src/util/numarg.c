/*
 * numarg.c: command-line numbers, usage errors and the report's end
 * (numarg.h).
 */
#include "util/numarg.h"
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cd_bad_option(const char *cmd, const char *optstring, const struct option *lo, char **argv)
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

int cd_report_written(const char *cmd, int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "clockdoctor %s: cannot write the report: %s\n", cmd,
		        errno ? strerror(errno) : "write error");
		return CD_EXIT_UNKNOWN;
	}
	return status;
}
