/* SPDX-License-Identifier: MIT */
/*
 * utf8.c: the length of a valid UTF-8 sequence (utf8.h), by RFC 3629's
 * table of well-formed byte sequences.
 */
#include "util/utf8.h"

int cd_utf8_len(const unsigned char *s, size_t avail)
{
	if (avail == 0)
		return 0;
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	int n;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (avail < (size_t)n || s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}
