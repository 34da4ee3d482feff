/* SPDX-License-Identifier: MIT */
/*
 * ways.c: the table of the ways of reading the time, and their names.
 *
 * Names are matched loosely because people type them from memory: "CLOCK_"
 * may be left out, case does not matter, and '-', ';' and '+' stand for
 * '_' (so "lfence;rdtsc", which needs quoting in a shell, can be typed
 * lfence_rdtsc).
 */
#include "measure/ways.h"
#include "measure/timer.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define WAY(name, kind, id, hr) { name, kind, id, hr }
#define LIBC(id, hr) WAY(#id, CD_CALL_CLOCK_GETTIME, id, hr),
#define FORCED(id, hr) WAY(#id "/syscall", CD_CALL_SYSCALL_CLOCK_GETTIME, id, hr),

/* The clock ids bench reads, once through libc and once forced through
 * syscall(2): X(id, high resolution). */
#define CLOCK_IDS(X) \
	X(CLOCK_REALTIME, true) \
	X(CLOCK_MONOTONIC, true) \
	X(CLOCK_MONOTONIC_RAW, true) \
	X(CLOCK_BOOTTIME, true) \
	X(CLOCK_TAI, true) \
	X(CLOCK_REALTIME_COARSE, false) \
	X(CLOCK_MONOTONIC_COARSE, false) \
	X(CLOCK_PROCESS_CPUTIME_ID, true) \
	X(CLOCK_THREAD_CPUTIME_ID, true)

static const struct cd_clock_spec ways[] = {
	CLOCK_IDS(LIBC)
	WAY("gettimeofday", CD_CALL_GETTIMEOFDAY, 0, true),
	WAY("time", CD_CALL_TIME, 0, false),
	CLOCK_IDS(FORCED)
	WAY("gettimeofday/syscall", CD_CALL_SYSCALL_GETTIMEOFDAY, 0, true),
	WAY("time/syscall", CD_CALL_SYSCALL_TIME, 0, false),
	CD_COUNTER_SPECS
	/* libfastclock's calls: the library is linked into the command. */
	WAY("fc_now_ns", CD_CALL_FASTCLOCK, CD_FC_NOW, true),
	WAY("fc_now_ns_unordered", CD_CALL_FASTCLOCK, CD_FC_NOW_UNORDERED, true),
	WAY("fc_realtime_ns", CD_CALL_FASTCLOCK, CD_FC_REALTIME, true),
	WAY("fc_gettime(MONOTONIC)", CD_CALL_FASTCLOCK, CD_FC_GETTIME_MONO, true),
	WAY("fc_cycles", CD_CALL_FASTCLOCK, CD_FC_CYCLES, true),
	WAY("fc_coarse_ns", CD_CALL_FASTCLOCK, CD_FC_COARSE, false),
};

#define N_WAYS ((int)(sizeof ways / sizeof ways[0]))

static const struct { const char *alias, *name; } aliases[] = {
	{ "gtod", "gettimeofday" },
	{ "gtod/syscall", "gettimeofday/syscall" },
	{ "process_cputime", "CLOCK_PROCESS_CPUTIME_ID" },
	{ "thread_cputime", "CLOCK_THREAD_CPUTIME_ID" },
	{ "process_cputime/syscall", "CLOCK_PROCESS_CPUTIME_ID/syscall" },
	{ "thread_cputime/syscall", "CLOCK_THREAD_CPUTIME_ID/syscall" },
	{ "tsc", "rdtsc" },
	{ "cntvct", "cntvct_el0" },
	{ "fc_gettime", "fc_gettime(MONOTONIC)" },
	{ "fc_gettime(clock_monotonic)", "fc_gettime(MONOTONIC)" },
};

const struct cd_clock_spec *cd_ways(int *n)
{
	*n = N_WAYS;
	return ways;
}

bool cd_way_forced(const struct cd_clock_spec *w)
{
	return w->kind == CD_CALL_SYSCALL_CLOCK_GETTIME || w->kind == CD_CALL_SYSCALL_GETTIMEOFDAY ||
	       w->kind == CD_CALL_SYSCALL_TIME;
}

const char *cd_way_call(const struct cd_clock_spec *w)
{
	switch (w->kind) {
	case CD_CALL_CLOCK_GETTIME:
	case CD_CALL_SYSCALL_CLOCK_GETTIME: return "clock_gettime";
	case CD_CALL_GETTIMEOFDAY:
	case CD_CALL_SYSCALL_GETTIMEOFDAY: return "gettimeofday";
	case CD_CALL_TIME:
	case CD_CALL_SYSCALL_TIME: return "time";
	case CD_CALL_COUNTER: return "counter";
	case CD_CALL_FASTCLOCK: return "libfastclock";
	}
	return "unknown";
}

/* The loose form of a name: lower case, no "clock_" prefix, '_' for '-',
 * ';' and '+'.  Returns false when it does not fit. */
static bool loose(const char *s, size_t len, char *out, size_t outlen)
{
	if (len >= 6 && strncasecmp(s, "clock_", 6) == 0) {
		s += 6;
		len -= 6;
	}
	if (len == 0 || len >= outlen)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = (char)tolower((unsigned char)s[i]);
		out[i] = (c == '-' || c == ';' || c == '+') ? '_' : c;
	}
	out[len] = '\0';
	return true;
}

static bool same(const char *a, const char *b_loose)
{
	char la[64];
	return loose(a, strlen(a), la, sizeof la) && strcmp(la, b_loose) == 0;
}

static const struct cd_clock_spec *find_loose(const char *want)
{
	for (int i = 0; i < N_WAYS; i++)
		if (same(ways[i].name, want))
			return &ways[i];
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (same(aliases[i].alias, want))
			return cd_way_find(aliases[i].name);
	return NULL;
}

const struct cd_clock_spec *cd_way_find(const char *name)
{
	char want[64];
	if (!loose(name, strlen(name), want, sizeof want))
		return NULL;
	return find_loose(want);
}

/* The ways a group name stands for, marked in pick[]; false if not a group. */
static bool group(const char *want, bool *pick)
{
	for (int i = 0; i < N_WAYS; i++) {
		const struct cd_clock_spec *w = &ways[i];
		bool in = false;
		if (strcmp(want, "all") == 0)
			in = true;
		else if (strcmp(want, "libc") == 0)
			in = !cd_way_forced(w) && w->kind != CD_CALL_COUNTER && w->kind != CD_CALL_FASTCLOCK;
		else if (strcmp(want, "syscall") == 0)
			in = cd_way_forced(w);
		else if (strcmp(want, "counter") == 0)
			in = w->kind == CD_CALL_COUNTER;
		else if (strcmp(want, "library") == 0 || strcmp(want, "fastclock") == 0)
			in = w->kind == CD_CALL_FASTCLOCK;
		else
			return false;
		if (in)
			pick[i] = true;
	}
	/* "counter" on an architecture without one is a group, and empty. */
	return true;
}

int cd_ways_parse(const char *list, const struct cd_clock_spec **out, int max, char *err, size_t errlen)
{
	bool pick[N_WAYS] = { false };
	const char *p = list;
	for (;;) {
		size_t len = strcspn(p, ",");
		while (len > 0 && isspace((unsigned char)*p)) {
			p++;
			len--;
		}
		while (len > 0 && isspace((unsigned char)p[len - 1]))
			len--;
		char want[64];
		if (len == 0) {
			snprintf(err, errlen, "empty clock name in '%s'", list);
			return -1;
		}
		if (!loose(p, len, want, sizeof want)) {
			snprintf(err, errlen, "unknown clock '%.*s'", (int)(len < 64 ? len : 64), p);
			return -1;
		}
		if (!group(want, pick)) {
			const struct cd_clock_spec *w = find_loose(want);
			if (!w) {
				snprintf(err, errlen, "unknown clock '%.*s' (clockdoctor bench --list shows them)",
				         (int)len, p);
				return -1;
			}
			pick[w - ways] = true;
		}
		p += strcspn(p, ",");
		if (*p == '\0')
			break;
		p++;
	}
	int n = 0;
	for (int i = 0; i < N_WAYS && n < max; i++)
		if (pick[i])
			out[n++] = &ways[i];
	if (n == 0) {
		snprintf(err, errlen, "no way of reading the time in '%s' exists here", list);
		return -1;
	}
	return n;
}
