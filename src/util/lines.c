/* SPDX-License-Identifier: MIT */
/*
 * lines.c: a bounded list of formatted lines (lines.h).
 */
#include "util/lines.h"

#include <stdio.h>

char *cd_lines_vadd(char *lines, size_t width, int max, int *n, const char *fmt, va_list ap)
{
	if (*n >= max)
		return NULL;
	char *row = lines + (size_t)(*n)++ * width;
	vsnprintf(row, width, fmt, ap);
	return row;
}

char *cd_lines_add(char *lines, size_t width, int max, int *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *row = cd_lines_vadd(lines, width, max, n, fmt, ap);
	va_end(ap);
	return row;
}
