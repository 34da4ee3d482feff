/* SPDX-License-Identifier: MIT */
/*
 * printable.h: strings from a machine or a snapshot made safe for a
 * terminal.  A kernel release, a command line, a DMI string or a log line
 * can hold anything (a snapshot is a folder of files anyone can write);
 * printed raw, an ESC sequence retitles or clears the reader's terminal.
 * Every such string is copied through here where it is read, so that the
 * facts, and every report made from them, hold printable ASCII only.
 */
#ifndef CD_UTIL_PRINTABLE_H
#define CD_UTIL_PRINTABLE_H

#include <stddef.h>

/* Copy the n bytes at s into dst, always NUL-terminated within cap, each
 * byte that is not printable ASCII (NUL, C0 and C1 controls, DEL, any byte
 * of UTF-8, valid or not) as '?'.  Returns the length copied. */
size_t cd_printable_copy(char *dst, size_t cap, const char *s, size_t n);

/* The same, in place. */
void cd_printable(char *s);

#endif
