/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h: what the libFuzzer targets share: the input copied as the parsers
 * take it (exactly size bytes, or NUL-terminated), and the check that a
 * string a parser filled is terminated and printable.  Each target is built
 * alone with the modules (the Makefile's fuzz rule), so these are static
 * functions of a header rather than a file of their own.
 */
#ifndef CD_FUZZ_H
#define CD_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A heap copy of exactly size bytes, not terminated: AddressSanitizer flags
 * a read beyond.  The caller frees it. */
static inline char *fuzz_exact(const uint8_t *data, size_t size)
{
	char *exact = malloc(size ? size : 1);
	if (!exact)
		abort();
	if (size)
		memcpy(exact, data, size);
	return exact;
}

/* The input NUL-terminated, as the parsers that take text get it.  The
 * caller frees it. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		abort();
	if (size)
		memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

/* A string of cap bytes a parser filled: terminated, and printable ASCII. */
static inline void fuzz_check_str(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	if (n == cap)
		abort(); /* not terminated */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			abort();
}

#endif
