/* SPDX-License-Identifier: MIT */
/*
 * fastclock_verdict.c: the per-boot TSC verdict file that `clockdoctor tsc`
 * writes and libfastclock reads (format: include/fastclock.h).
 *
 * Parsed by hand from a fixed buffer: it runs in the library's start-up,
 * which may be in any process, before main, without allocating.
 */
#include "fastclock.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static bool copy_value(char *dst, size_t cap, const char *v, size_t n)
{
	if (n == 0 || n >= cap)
		return false;
	memcpy(dst, v, n);
	dst[n] = '\0';
	return true;
}

/* A decimal number with an optional fraction: the verdict's counter_hz and
 * time.  No strtod: it depends on the locale. */
static bool parse_number(const char *v, size_t n, double *out)
{
	double x = 0, scale = 0;
	bool digits = false;
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		if (c >= '0' && c <= '9') {
			digits = true;
			if (scale == 0) {
				x = x * 10 + (c - '0');
			} else {
				x += (c - '0') * scale;
				scale /= 10;
			}
		} else if (c == '.' && scale == 0) {
			scale = 0.1;
		} else {
			return false;
		}
	}
	if (!digits || x > 1e15)
		return false;
	*out = x;
	return true;
}

int fc_verdict_parse(const char *text, size_t len, struct fc_verdict *v)
{
	if (!text || !v)
		return -EINVAL;
	memset(v, 0, sizeof *v);
	v->verdict = -1;
	bool have_boot = false;
	size_t i = 0;
	while (i < len) {
		size_t end = i;
		while (end < len && text[end] != '\n')
			end++;
		const char *line = text + i;
		size_t n = end - i;
		i = end + 1;
		while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
			n--;
		if (n == 0 || line[0] == '#')
			continue;
		const char *eq = memchr(line, '=', n);
		if (!eq)
			return -EINVAL;
		size_t kn = (size_t)(eq - line);
		const char *val = eq + 1;
		size_t vn = n - kn - 1;
		double num;
		if (kn == 7 && !memcmp(line, "boot_id", 7)) {
			for (size_t j = 0; j < vn; j++) {
				char c = val[j];
				if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-'))
					return -EINVAL;
			}
			if (!copy_value(v->boot_id, sizeof v->boot_id, val, vn))
				return -EINVAL;
			have_boot = true;
		} else if (kn == 7 && !memcmp(line, "verdict", 7)) {
			if (vn == 5 && !memcmp(val, "sound", 5))
				v->verdict = 0;
			else if (vn == 7 && !memcmp(val, "unknown", 7))
				v->verdict = 1;
			else if (vn == 7 && !memcmp(val, "unsound", 7))
				v->verdict = 2;
			else
				return -EINVAL;
		} else if (kn == 10 && !memcmp(line, "counter_hz", 10)) {
			if (!parse_number(val, vn, &num))
				return -EINVAL;
			v->counter_hz = num;
		} else if (kn == 11 && !memcmp(line, "clocksource", 11)) {
			if (vn > 0 && !copy_value(v->clocksource, sizeof v->clocksource, val, vn))
				return -EINVAL;
		} else if (kn == 4 && !memcmp(line, "time", 4)) {
			if (!parse_number(val, vn, &num))
				return -EINVAL;
			v->time = (int64_t)num;
		}
		/* other keys: from a newer clockdoctor, ignored */
	}
	if (!have_boot || v->verdict < 0)
		return -EINVAL;
	return 0;
}
