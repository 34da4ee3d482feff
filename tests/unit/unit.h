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
#include <stdlib.h>
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

/* Writes text to path (the tests' fake sysfs and state files); exits 2 when
 * it cannot, since every check after it would be meaningless. */
static inline void unit_put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

/* The first 255 bytes of path, or "(absent)"; a static buffer, overwritten
 * by the next call. */
static inline const char *unit_get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	if (!f)
		return "(absent)";
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* What a writer printed: runs call with `f` a memory stream, and leaves the
 * text in buf (malloc'd: the caller frees it). */
#define UNIT_CAPTURE(buf, call) do { \
	size_t unit_len_ = 0; \
	FILE *f = open_memstream(&(buf), &unit_len_); \
	call; \
	fclose(f); \
} while (0)

static inline int unit_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
