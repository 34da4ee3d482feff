/*
 * numarg.c: command-line numbers and usage errors (numarg.h).
 */
#include "util/numarg.h"
#include "commands.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
