/* SPDX-License-Identifier: MIT */
/*
 * wrap.c: the one word-wrapper (wrap.h).
 *
 * A line breaks at the last blank that lets it fit; the blanks at the break
 * are dropped, those inside a line kept (a kernel log line quoted as
 * evidence keeps its columns).  A word longer than the line is cut where it
 * must be, or, with whole_words, left whole to run past the edge.
 */
#include "output/wrap.h"

#include <string.h>

/* However deep the indent, a line holds at least this many characters: a
 * column of three-letter lines would be harder to read than a long line. */
#define MIN_ROOM 20

/* How many of the len characters at s the next line takes, room columns
 * being left on it. */
static size_t line_break(const char *s, size_t len, int room, bool whole_words)
{
	if (len <= (size_t)room)
		return len;
	size_t take = (size_t)room;
	while (take > 0 && s[take] != ' ')
		take--;
	if (take > 0)
		return take;
	if (!whole_words)
		return (size_t)room;  /* one long word: cut it where it must be */
	size_t word = 1;  /* the first word whole (a blank before it goes with it) */
	while (word < len && s[word] != ' ')
		word++;
	return word;
}

/* Starts a line: the lead the first time (then forgotten), the indent after. */
static void start_line(FILE *out, const char **lead, int indent)
{
	if (*lead) {
		fputs(*lead, out);
		*lead = NULL;
	} else {
		fprintf(out, "%*s", indent, "");
	}
}

void cd_wrap_with(FILE *out, const char *text, const struct cd_wrap_opts *o)
{
	const char *lead = o->lead;  /* NULL once written */
	int width = o->width ? o->width : CD_TEXT_WIDTH;
	int col = !lead ? o->indent : o->lead_cols ? o->lead_cols : (int)strlen(lead);
	for (const char *p = text; *p;) {
		const char *s = p;
		size_t len = strcspn(p, "\n");
		p += len + (p[len] == '\n');
		if (len >= 2 && s[0] == '$' && s[1] == ' ') {
			start_line(out, &lead, o->indent);
			fprintf(out, "%.*s\n", (int)len, s);
			col = o->indent;
			continue;
		}
		while (len > 0) {
			int room = width - col > MIN_ROOM ? width - col : MIN_ROOM;
			size_t take = line_break(s, len, room, o->whole_words);
			start_line(out, &lead, o->indent);
			fprintf(out, "%.*s\n", (int)take, s);
			col = o->indent;
			s += take;
			len -= take;
			while (len > 0 && *s == ' ') {
				s++;
				len--;
			}
		}
	}
	if (lead) {  /* no text: the label alone, with no trailing blanks */
		size_t n = strlen(lead);
		while (n > 0 && lead[n - 1] == ' ')
			n--;
		fprintf(out, "%.*s\n", (int)n, lead);
	}
}

void cd_wrap(FILE *out, const char *text, int indent, int width)
{
	cd_wrap_with(out, text, &(struct cd_wrap_opts){ .width = width, .indent = indent });
}
