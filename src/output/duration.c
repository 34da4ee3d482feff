/* SPDX-License-Identifier: MIT */
/*
 * duration.c: durations for people (duration.h).
 */
#include "output/duration.h"

#include <stdio.h>

void cd_fmt_duration_s(char *buf, size_t cap, double s)
{
	if (s < 120)
		snprintf(buf, cap, "%.0f s", s);
	else if (s < 7200)
		snprintf(buf, cap, "%.0f s (%.0f min)", s, s / 60);
	else if (s < 172800)
		snprintf(buf, cap, "%.0f s (%.1f h)", s, s / 3600);
	else
		snprintf(buf, cap, "%.0f s (%.1f days)", s, s / 86400);
}

void cd_fmt_duration_ns(char *buf, size_t cap, double ns)
{
	if (ns < 1e4)
		snprintf(buf, cap, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, cap, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, cap, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, cap, "%.2f s", ns / 1e9);
}
