/* SPDX-License-Identifier: MIT */
/*
 * shellquote.h: a string from a machine or a snapshot made into one word of
 * a shell command that a reader pastes.  A kernel command line token or a
 * clocksource name can hold $( ), backticks, quotes or ';' (a snapshot is a
 * folder of files anyone can write); printed raw inside a command, pasting
 * the command runs them.  Every printed command builds its words here.
 */
#ifndef CD_UTIL_SHELLQUOTE_H
#define CD_UTIL_SHELLQUOTE_H

#include <stdbool.h>
#include <stddef.h>

/* Write s into dst (cap bytes) as one POSIX shell word: bare when every
 * byte is one no shell gives a meaning to (letters, digits, and
 * _ - . , : / = + @ %, with neither '=' nor '-' first), otherwise in single
 * quotes, each quote in it written '\''.  Returns false, with dst empty,
 * when s holds a byte no quoting makes safe to paste (a control byte, a
 * newline, DEL, any byte outside ASCII: a terminal may act on it, or show
 * it as something else) or when the word does not fit. */
bool cd_shell_word(char *dst, size_t cap, const char *s);

/* cd_shell_word's word in buf, returned; or fallback (a placeholder the
 * reader replaces, "TREE") when s cannot be pasted safely. */
const char *cd_shell_word_or(char *buf, size_t cap, const char *s, const char *fallback);

/* The bytes cd_shell_word writes bare, and nothing else: s is a word that
 * needs no quoting (and may stand inside double quotes as it is). */
bool cd_shell_plain(const char *s);

#endif
