/* SPDX-License-Identifier: MIT */
/* Unit tests of monotime.c: the kernel's clocks as doubles agree with
 * clock_gettime and with each other, and never go back. */
#include "util/monotime.h"
#include "unit.h"

#include <math.h>

int main(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double s = cd_mono_s(), ns = cd_mono_ns(), s2 = cd_mono_s();
	CHECK(s >= (double)ts.tv_sec && s - (double)ts.tv_sec < 60);
	CHECK(s2 >= s);
	CHECK(ns >= s * 1e9 && ns <= s2 * 1e9 + 1e3);
	double real = cd_clock_s(CLOCK_REALTIME);
	CHECK(fabs(real - (double)time(NULL)) < 2);
	double prev = cd_mono_s();
	int backwards = 0;
	for (int i = 0; i < 100000; i++) {
		double now = cd_mono_s();
		backwards += now < prev;
		prev = now;
	}
	CHECK_INT(backwards, 0);
	return unit_done("monotime");
}
