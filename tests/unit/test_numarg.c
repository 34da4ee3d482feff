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

int main(void)
{
	double d;
	long l;
	CHECK(cd_parse_double("2.5", &d) && d == 2.5);
	CHECK(cd_parse_double("-1e3", &d) && d == -1000);
	CHECK(!cd_parse_double("", &d));
	CHECK(!cd_parse_double("2s", &d));
	CHECK(!cd_parse_double("inf", &d));
	CHECK(!cd_parse_double("nan", &d));
	CHECK(!cd_parse_double("1e999", &d));
	CHECK(cd_parse_long("1000", &l) && l == 1000);
	CHECK(cd_parse_long("-7", &l) && l == -7);
	CHECK(!cd_parse_long("", &l));
	CHECK(!cd_parse_long("10k", &l));
	CHECK(!cd_parse_long("1.5", &l));
	CHECK(!cd_parse_long("99999999999999999999999", &l));

	char text[256];
	CHECK_INT(usage_error_text(text, sizeof text), 3);   /* CD_EXIT_USAGE */
	CHECK_STR(text, "clockdoctor bench: -t takes a number of threads, not 'x' (7)\n"
	                "(clockdoctor bench --help shows the options)\n");
	return unit_done("test_numarg");
}
