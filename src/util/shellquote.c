/* SPDX-License-Identifier: MIT */
/*
 * shellquote.c: one word of a pasted shell command (shellquote.h).
 *
 * Single quotes are the only quoting in which no byte but the quote itself
 * means anything (POSIX XCU 2.2.2), in every shell a reader may paste into
 * (sh, dash, bash, zsh).  A bare word keeps the common case readable
 * (tsc=reliable, acpi_pm).  '=' first would be zsh's =command expansion,
 * '-' first an option: both are quoted (the quote does not stop a program
 * from reading an option, so the callers' words never start with '-').
 */
#include "util/shellquote.h"

#include <string.h>

static bool plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("_-.,:/=+@%", c));
}

bool cd_shell_plain(const char *s)
{
	if (!s[0] || s[0] == '=' || s[0] == '-')
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (!plain_byte(*p))
			return false;
	return true;
}

bool cd_shell_word(char *dst, size_t cap, const char *s)
{
	if (cap == 0)
		return false;
	dst[0] = '\0';
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			return false;
	if (cd_shell_plain(s)) {
		n = strlen(s);
		if (n >= cap)
			return false;
		memcpy(dst, s, n + 1);
		return true;
	}
	/* 'it'\''s': each quote closes the quoted part, adds an escaped
	 * quote and opens the next. */
	dst[n++] = '\'';
	for (const char *p = s; *p; p++) {
		const char *piece = *p == '\'' ? "'\\''" : NULL;
		size_t len = piece ? 4 : 1;
		if (n + len + 2 > cap) {
			dst[0] = '\0';
			return false;
		}
		if (piece)
			memcpy(dst + n, piece, len);
		else
			dst[n] = *p;
		n += len;
	}
	dst[n++] = '\'';
	dst[n] = '\0';
	return true;
}

const char *cd_shell_word_or(char *buf, size_t cap, const char *s, const char *fallback)
{
	return cd_shell_word(buf, cap, s) ? buf : fallback;
}
