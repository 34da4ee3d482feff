/* SPDX-License-Identifier: MIT */
/*
 * monotime.c: kernel clocks as doubles (monotime.h).
 */
#include "util/monotime.h"

double cd_clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double cd_mono_s(void)
{
	return cd_clock_s(CLOCK_MONOTONIC);
}

double cd_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}
