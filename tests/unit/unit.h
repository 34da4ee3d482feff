/*
 * unit.h: the smallest test harness that does the job.  Each test program
 * includes this, calls CHECK* in functions run by main, and ends with
 * unit_done(), which prints "N passed, M failed" and returns the exit status.
 * A failed check prints its file, line and the values, and the program goes
 * on, so one run shows every failure.
 */
#ifndef CD_UNIT_H
#define CD_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int unit_passed, unit_failed;

#define CHECK(cond) do { \
	if (cond) unit_passed++; \
	else { unit_failed++; fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_INT(a, b) do { \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ == b_) unit_passed++; \
	else { unit_failed++; fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
	                               __FILE__, __LINE__, #a, a_, #b, b_); } \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if (a_ && b_ && strcmp(a_, b_) == 0) unit_passed++; \
	else { unit_failed++; fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", \
	                               __FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } \
} while (0)

static inline int unit_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
