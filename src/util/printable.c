/* SPDX-License-Identifier: MIT */
/*
 * printable.c: strings from a machine made safe for a terminal (printable.h).
 */
#include "util/printable.h"

static char printable(char c)
{
	return c >= 0x20 && c < 0x7f ? c : '?';
}

size_t cd_printable_copy(char *dst, size_t cap, const char *s, size_t n)
{
	size_t i;
	if (cap == 0)
		return 0;
	for (i = 0; i + 1 < cap && i < n; i++)
		dst[i] = printable(s[i]);
	dst[i] = '\0';
	return i;
}

void cd_printable(char *s)
{
	for (; *s; s++)
		*s = printable(*s);
}
