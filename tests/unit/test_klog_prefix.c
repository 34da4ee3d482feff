/* SPDX-License-Identifier: MIT */
/* Unit tests of the kernel log layouts' prefixes (src/probe/klog_prefix.c):
 * each layout a saved log may have, the message left and the time since
 * boot it gives (-1 for none).  test_klog checks the same layouts through
 * the whole parse. */
#include "probe/klog_impl.h"
#include "unit.h"

#include <math.h>

static void test_layouts(void)
{
	static const struct { const char *line, *msg; double ts; bool kmsg; } cases[] = {
		{ "[    1.234567] clocksource: Switched to clocksource tsc",
		  "clocksource: Switched to clocksource tsc", 1.234567, false },
		{ "<6>[    0.144008] Measured 66930 cycles", "Measured 66930 cycles", 0.144008, false },
		{ "6,123,1234567,-;tsc: Refined TSC", "tsc: Refined TSC", 1.234567, true },
		{ "6,123,1234567,caller=T1;msg", "msg", 1.234567, true },
		{ "[    1.234567] host kernel: msg", "msg", 1.234567, false },
		{ "May  6 11:52:52 host kernel: [  384.258940] msg", "msg", 384.25894, false },
		{ "kernel: [  384.258940] msg", "msg", 384.25894, false },
		{ "2023-09-11T07:03:06+0000 host kernel: msg", "msg", -1, false },
		{ "[Mon Sep 11 07:03:06 2023] msg", "msg", -1, false },
		{ "/var/log/kern.log:Feb  2 17:33:32 host kernel: msg", "msg", -1, false },
		{ "[    2.000000] [  T236] msg", "msg", 2.0, false },
		{ "   0.000000] Linux version 4.14", "Linux version 4.14", 0.0, false },
		/* none of the layouts: the line is the message */
		{ "Linux version 6.1.0", "Linux version 6.1.0", -1, false },
		{ "clocksource: tsc: mask: 0x1", "clocksource: tsc: mask: 0x1", -1, false },
		{ "[ 1.5 no bracket", "[ 1.5 no bracket", -1, false },
		{ "", "", -1, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double ts = 99;
		bool kmsg = !cases[i].kmsg;
		const char *msg = cd_klog_strip_prefix(cases[i].line, &ts, &kmsg);
		CHECK_STR(msg, cases[i].msg);
		if (fabs(ts - cases[i].ts) > 1e-9)
			fprintf(stderr, "%s: ts %f, expected %f\n", cases[i].line, ts, cases[i].ts);
		CHECK(fabs(ts - cases[i].ts) <= 1e-9);
		CHECK_INT(kmsg, cases[i].kmsg);
	}
}

int main(void)
{
	test_layouts();
	return unit_done("klog_prefix");
}
