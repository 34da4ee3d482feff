/* SPDX-License-Identifier: MIT */
/*
 * span.c: text by pointer and length (span.h).
 */
#include "probe/span.h"

#include <string.h>

bool cd_span_is(struct cd_span s, const char *word)
{
	return s.n == strlen(word) && memcmp(s.p, word, s.n) == 0;
}

bool cd_span_starts(struct cd_span s, const char *prefix)
{
	size_t n = strlen(prefix);
	return s.n >= n && memcmp(s.p, prefix, n) == 0;
}

int cd_span_lookup(struct cd_span s, const struct cd_word *words, size_t n, int fallback)
{
	for (size_t i = 0; i < n; i++)
		if (words[i].prefix ? cd_span_starts(s, words[i].word) : cd_span_is(s, words[i].word))
			return words[i].value;
	return fallback;
}

bool cd_next_line(const char *text, size_t len, size_t *pos, struct cd_span *line)
{
	if (!text || *pos >= len)
		return false;
	const char *start = text + *pos, *nl = memchr(start, '\n', len - *pos);
	line->p = start;
	line->n = nl ? (size_t)(nl - start) : len - *pos;
	*pos += line->n + 1;
	return true;
}
