/* SPDX-License-Identifier: MIT */
/* Unit tests of text by pointer and length (src/probe/span.c): words and
 * prefixes never read past the span, and a text's lines as the parsers take
 * them. */
#include "probe/span.h"
#include "unit.h"

static void test_words(void)
{
	static const char text[] = "kvm-clockXX";
	struct cd_span s = { text, 9 };   /* "kvm-clock", not terminated there */
	CHECK(cd_span_is(s, "kvm-clock"));
	CHECK(!cd_span_is(s, "kvm-clockXX"));
	CHECK(!cd_span_is(s, "kvm"));
	CHECK(cd_span_starts(s, "kvm"));
	CHECK(cd_span_starts(s, "kvm-clock"));
	CHECK(!cd_span_starts(s, "kvm-clockX"));
	CHECK(cd_span_starts(s, ""));
	struct cd_span empty = { text, 0 };
	CHECK(cd_span_is(empty, ""));
	CHECK(!cd_span_starts(empty, "k"));
}

static void test_lookup(void)
{
	static const struct cd_word words[] = {
		{ "no-kvmclock", false, 1 },
		{ "no-kvmclock-vsyscall", false, 2 },
		{ "hyperv_", true, 3 },
	};
	static const struct { const char *text; int want; } cases[] = {
		{ "no-kvmclock", 1 },
		{ "no-kvmclock-vsyscall", 2 },   /* a whole word is not a prefix */
		{ "no-kvm", -1 },
		{ "hyperv_clocksource_msr", 3 },
		{ "hyperv", -1 },
		{ "", -1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_span s = { cases[i].text, strlen(cases[i].text) };
		CHECK_INT(cd_span_lookup(s, words, sizeof words / sizeof words[0], -1), cases[i].want);
	}
}

/* The lines of text, joined with '|', as cd_next_line hands them out. */
static const char *lines_of(const char *text, size_t len)
{
	static char out[128];
	size_t pos = 0, o = 0;
	int n = 0;
	struct cd_span line;
	out[0] = '\0';
	while (cd_next_line(text, len, &pos, &line))
		o += (size_t)snprintf(out + o, sizeof out - o, "%s%.*s", n++ ? "|" : "", (int)line.n, line.p);
	return out;
}

static void test_lines(void)
{
	static const struct { const char *text; const char *want; } cases[] = {
		{ "a\nbb\nccc", "a|bb|ccc" },
		{ "a\nbb\n", "a|bb" },
		{ "\n\nx", "||x" },
		{ "one", "one" },
		{ "", "" },
		{ "\n", "" },         /* one empty line, as lines_of shows it */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK_STR(lines_of(cases[i].text, strlen(cases[i].text)), cases[i].want);
	/* The length bounds the text: nothing after it is a line. */
	CHECK_STR(lines_of("ab\ncd", 4), "ab|c");
	size_t pos = 0;
	struct cd_span line;
	CHECK(!cd_next_line(NULL, 10, &pos, &line));
}

int main(void)
{
	test_words();
	test_lookup();
	test_lines();
	return unit_done("span");
}
