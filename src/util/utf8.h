/* SPDX-License-Identifier: MIT */
/*
 * utf8.h: where a valid UTF-8 sequence ends, for the writers that must
 * replace what is not one (JSON, HTML).
 */
#ifndef CD_UTIL_UTF8_H
#define CD_UTIL_UTF8_H

#include <stddef.h>

/* The length (1-4) of the valid UTF-8 sequence at s, of at most avail
 * bytes, or 0 when there is none: a stray continuation byte, a truncated
 * sequence, an overlong form, a surrogate or a code point above U+10FFFF
 * (RFC 3629). */
int cd_utf8_len(const unsigned char *s, size_t avail);

#endif
