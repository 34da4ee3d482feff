/* SPDX-License-Identifier: MIT */
/*
 * span.h: a piece of text by pointer and length, as the parsers read their
 * input (not NUL-terminated, never read past its length): comparing it with
 * a word or a prefix, looking it up in a table of words, and taking a text
 * line by line.
 */
#ifndef CD_PROBE_SPAN_H
#define CD_PROBE_SPAN_H

#include <stdbool.h>
#include <stddef.h>

struct cd_span {
	const char *p;
	size_t n;
};

/* The span is exactly word. */
bool cd_span_is(struct cd_span s, const char *word);
/* The span starts with prefix. */
bool cd_span_starts(struct cd_span s, const char *prefix);

/* A word in a table: the whole span, or with prefix any span that starts
 * with it, and what it stands for. */
struct cd_word {
	const char *word;
	bool prefix;
	int value;
};

/* The value of the first of words[0..n) that s matches, or fallback. */
int cd_span_lookup(struct cd_span s, const struct cd_word *words, size_t n, int fallback);

/* The line of text[0..len) that starts at *pos, without its '\n', into
 * *line, and *pos past it; false when no line is left (text NULL, or *pos
 * at len).  A last line without '\n' is a line; a final '\n' ends the text. */
bool cd_next_line(const char *text, size_t len, size_t *pos, struct cd_span *line);

#endif
