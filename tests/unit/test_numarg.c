/*
 * test_numarg.c: command-line numbers are whole numbers or refused, and a
 * usage error says whose it is and where the options are.
 */
#include "unit.h"
#include "util/numarg.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What cd_usage_error writes on stderr, and what it returns. */
static int usage_error_text(char *buf, size_t len)
{
	fflush(stderr);
	int saved = dup(2);
	FILE *f = tmpfile();
	if (saved < 0 || !f)
		return -1;
	dup2(fileno(f), 2);
	int rc = cd_usage_error("bench", "-t takes a number of threads, not '%s' (%d)", "x", 7);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return rc;
}

/* Each text parsed as a double and as a long: refused (ok false), or the
 * value. */
static void test_numbers(void)
{
	static const struct {
		const char *text;
		bool ok;
		double value;
	} doubles[] = {
		{ "2.5", true, 2.5 }, { "-1e3", true, -1000 }, { "", false, 0 }, { "2s", false, 0 },
		{ "inf", false, 0 }, { "nan", false, 0 }, { "1e999", false, 0 },
	};
	for (size_t i = 0; i < UNIT_COUNT(doubles); i++) {
		unit_case("double \"%s\"", doubles[i].text);
		double d;
		bool ok = cd_parse_double(doubles[i].text, &d);
		CHECK(doubles[i].ok ? ok && d == doubles[i].value : !ok);
	}
	static const struct {
		const char *text;
		bool ok;
		long value;
	} longs[] = {
		{ "1000", true, 1000 }, { "-7", true, -7 }, { "", false, 0 }, { "10k", false, 0 }, { "1.5", false, 0 },
		{ "99999999999999999999999", false, 0 },
	};
	for (size_t i = 0; i < UNIT_COUNT(longs); i++) {
		unit_case("long \"%s\"", longs[i].text);
		long l;
		bool ok = cd_parse_long(longs[i].text, &l);
		CHECK(longs[i].ok ? ok && l == longs[i].value : !ok);
	}
	unit_case(NULL);
}

int main(void)
{
	test_numbers();
	char text[256];
	CHECK_INT(usage_error_text(text, sizeof text), 3);   /* CD_EXIT_USAGE */
	CHECK_STR(text, "clockdoctor bench: -t takes a number of threads, not 'x' (7)\n"
	                "(clockdoctor bench --help shows the options)\n");
	return unit_done("test_numarg");
}
