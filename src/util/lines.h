/* SPDX-License-Identifier: MIT */
/*
 * lines.h: a bounded list of formatted lines, kept as an array
 * char lines[MAX][WIDTH] and a count: the facts' unknowns, a finding's
 * evidence, a TSC verdict's reasons, fix --persist's steps and warnings.
 * Fixed arrays keep those structs plain data (copied, compared, printed
 * without a free); the price is that a line past MAX is dropped and a line
 * longer than WIDTH - 1 is cut, both silently, which suits lines for
 * people.
 */
#ifndef CD_LINES_H
#define CD_LINES_H

#include <stdarg.h>
#include <stddef.h>

/* Format a line into the next free row of lines (max rows of width bytes,
 * *n of them used) and count it.  Returns the row, or NULL when all max
 * are used (nothing written). */
char *cd_lines_vadd(char *lines, size_t width, int max, int *n, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

char *cd_lines_add(char *lines, size_t width, int max, int *n, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* The same for an array arr[MAX][WIDTH] and its count n (an int lvalue). */
#define CD_LINES_VADD(arr, n, fmt, ap) \
	cd_lines_vadd(&(arr)[0][0], sizeof (arr)[0], (int)(sizeof (arr) / sizeof (arr)[0]), &(n), fmt, ap)
#define CD_LINES_ADD(arr, n, ...) \
	cd_lines_add(&(arr)[0][0], sizeof (arr)[0], (int)(sizeof (arr) / sizeof (arr)[0]), &(n), __VA_ARGS__)

#endif
