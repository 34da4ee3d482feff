/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the one word-wrapper (src/output/wrap.c): paragraphs with
 * commands kept whole, a lead with the lines after it hanging, a coloured
 * lead, an empty text, and words too long for the line, cut or kept whole.
 */
#include "output/wrap.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static void test_paragraph(void)
{
	char *got = NULL;
	UNIT_CAPTURE(got, cd_wrap(out, "one two three four five six seven eight nine ten eleven\n"
	                             "$ a command that is much longer than forty columns stays whole\n"
	                             "short", 4, 40));
	CHECK_STR(got, "    one two three four five six seven\n"
	               "    eight nine ten eleven\n"
	               "    $ a command that is much longer than forty columns stays whole\n"
	               "    short\n");
	free(got);
	/* A word longer than the line is cut, never looping forever. */
	char word[200];
	memset(word, 'w', sizeof word - 1);
	word[sizeof word - 1] = '\0';
	UNIT_CAPTURE(got, cd_wrap(out, word, 4, 40));
	size_t lines = 0;
	for (char *p = got; *p; p++)
		lines += *p == '\n';
	CHECK_INT(lines, 6); /* 199 characters, 36 a line */
	free(got);
	UNIT_CAPTURE(got, cd_wrap(out, "", 4, 40));
	CHECK_STR(got, "");
	free(got);
}

/* A label first, the lines after it under indent; blanks inside a line
 * (a quoted kernel log line's columns) kept, those at a break dropped. */
static void test_lead(void)
{
	char *got = NULL;
	UNIT_CAPTURE(got, cd_wrap_with(out, "[    0.000000] tsc: Fast TSC calibration using PIT  and more words",
	                               &(struct cd_wrap_opts){ .width = 40, .indent = 6, .lead = "    - " }));
	CHECK_STR(got, "    - [    0.000000] tsc: Fast TSC\n"
	               "      calibration using PIT  and more\n"
	               "      words\n");
	free(got);
	/* The lead may be longer than the indent: the first line is shorter. */
	UNIT_CAPTURE(got, cd_wrap_with(out, "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk",
	                               &(struct cd_wrap_opts){ .width = 40, .indent = 2, .lead = "  a long label: " }));
	CHECK_STR(got, "  a long label: aaaa bbbb cccc dddd eeee\n"
	               "  ffff gggg hhhh iiii jjjj kkkk\n");
	free(got);
	/* Colour codes in the lead take no columns. */
	UNIT_CAPTURE(got, cd_wrap_with(out, "one two three four five six",
	                               &(struct cd_wrap_opts){ .width = 24, .indent = 4, .lead = "\033[1mOK\033[0m: ",
	                                                       .lead_cols = 4 }));
	CHECK_STR(got, "\033[1mOK\033[0m: one two three four\n"
	               "    five six\n");
	free(got);
	/* No text: the label alone, without its trailing blanks. */
	UNIT_CAPTURE(got, cd_wrap_with(out, "", &(struct cd_wrap_opts){ .indent = 12, .lead = "  pass      drift: " }));
	CHECK_STR(got, "  pass      drift:\n");
	free(got);
}

/* whole_words: a path longer than the line stays whole, alone on its line. */
static void test_whole_words(void)
{
	char *got = NULL;
	UNIT_CAPTURE(got, cd_wrap_with(out, "write /a/very/long/path/that/does/not/fit/in/the/line.cfg (adds x)",
	                               &(struct cd_wrap_opts){ .width = 30, .indent = 2, .whole_words = true }));
	CHECK_STR(got, "  write\n"
	               "  /a/very/long/path/that/does/not/fit/in/the/line.cfg\n"
	               "  (adds x)\n");
	free(got);
	/* Width 0 is the reports' width: 79 columns. */
	char text[200];
	memset(text, 'x', sizeof text);
	for (size_t i = 9; i < sizeof text; i += 10)
		text[i] = ' ';
	text[sizeof text - 1] = '\0';
	UNIT_CAPTURE(got, cd_wrap_with(out, text, &(struct cd_wrap_opts){ .whole_words = true }));
	CHECK_INT(strcspn(got, "\n"), CD_TEXT_WIDTH);
	free(got);
}

int main(void)
{
	test_paragraph();
	test_lead();
	test_whole_words();
	return unit_done("wrap");
}
