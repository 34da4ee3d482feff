/* SPDX-License-Identifier: MIT */
/* Unit tests of the durations written for people (src/output/duration.c):
 * each unit's first and last value, since findings quote them. */
#include "output/duration.h"
#include "unit.h"

typedef void (*formatter)(char *buf, size_t cap, double v);

static void test_units(void)
{
	static const struct { formatter fmt; double v; const char *want; } cases[] = {
		{ cd_fmt_duration_s, 0, "0 s" },
		{ cd_fmt_duration_s, 119, "119 s" },
		{ cd_fmt_duration_s, 120, "120 s (2 min)" },
		{ cd_fmt_duration_s, 7199, "7199 s (120 min)" },
		{ cd_fmt_duration_s, 7200, "7200 s (2.0 h)" },
		{ cd_fmt_duration_s, 172799, "172799 s (48.0 h)" },
		{ cd_fmt_duration_s, 172800, "172800 s (2.0 days)" },
		{ cd_fmt_duration_s, 334800, "334800 s (3.9 days)" },
		{ cd_fmt_duration_ns, 0, "0 ns" },
		{ cd_fmt_duration_ns, 9999, "9999 ns" },
		{ cd_fmt_duration_ns, 1e4, "10.0 us" },
		{ cd_fmt_duration_ns, 999e3, "999.0 us" },
		{ cd_fmt_duration_ns, 1e6, "1.0 ms" },
		{ cd_fmt_duration_ns, 3.25e8, "325.0 ms" },
		{ cd_fmt_duration_ns, 1e9, "1.00 s" },
		{ cd_fmt_duration_ns, 1.5e9, "1.50 s" },
	};
	char buf[64];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cases[i].fmt(buf, sizeof buf, cases[i].v);
		CHECK_STR(buf, cases[i].want);
	}
}

/* A buffer too small is cut, never overrun. */
static void test_small_buffer(void)
{
	char small[4];
	cd_fmt_duration_ns(small, sizeof small, 123456);
	CHECK_STR(small, "123");
	cd_fmt_duration_s(small, sizeof small, 86400);
	CHECK_STR(small, "864");
}

int main(void)
{
	test_units();
	test_small_buffer();
	return unit_done("duration");
}
