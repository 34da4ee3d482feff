/*
 * numarg.c: command-line numbers (numarg.h).
 */
#include "util/numarg.h"

#include <errno.h>
#include <math.h>
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
