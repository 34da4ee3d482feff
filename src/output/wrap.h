/* SPDX-License-Identifier: MIT */
/*
 * wrap.h: the one word-wrapper.  Every report that wraps prose (check's,
 * fix's, tsc's, accuracy's, bench's start-up line) goes through
 * cd_wrap_with(), so that a line is broken the same way everywhere.
 */
#ifndef CD_WRAP_H
#define CD_WRAP_H

#include <stdbool.h>
#include <stdio.h>

/* The last column of a report for people: its lines stay under 80. */
#define CD_TEXT_WIDTH 79

/* How a text is laid out.  Fields left 0 mean: CD_TEXT_WIDTH, no indent,
 * no lead, cut a word longer than the line. */
struct cd_wrap_opts {
	int width;         /* no line reaches past this column */
	int indent;        /* spaces before each line, after the first when there is a lead */
	/* Written before the first line in place of the indent: a label or a
	 * bullet ("TSC ", "    - "); the lines after it start at indent.  When
	 * the text is empty, the lead alone, without its trailing blanks. */
	const char *lead;
	int lead_cols;     /* the columns lead fills when colour codes make it longer; 0: its length */
	/* A word longer than the line runs past width instead of being cut:
	 * fix's paths and bench's clocksource names stay whole, to be copied. */
	bool whole_words;
};

/* Writes text to out, wrapped at blanks.  Each line of it (split at '\n';
 * an empty one is dropped) is wrapped apart; a line that starts with "$ "
 * is a command and is written whole, so that it can be copied.  However
 * deep the indent, a line holds at least 20 characters. */
void cd_wrap_with(FILE *out, const char *text, const struct cd_wrap_opts *o);

/* The common case, a paragraph: every line indented by indent spaces. */
void cd_wrap(FILE *out, const char *text, int indent, int width);

#endif
