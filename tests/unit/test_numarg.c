/*
 * test_numarg.c: command-line numbers are whole numbers or refused.
 */
#include "unit.h"
#include "util/numarg.h"

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
	return unit_done("test_numarg");
}
