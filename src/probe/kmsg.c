/* SPDX-License-Identifier: MIT */
/*
 * kmsg.c: following the kernel log, and grouping its lines into events
 * (kmsg.h).
 *
 * Lines are parsed by klog.c, the same parser check uses, so a line watch
 * reports is a line check would explain; only the grouping is new.
 */
#include "probe/kmsg.h"
#include "probe/klog_impl.h"
#include "probe/probe.h"
#include "probe/span.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GROUP_MAX_LINES 16  /* the watchdog's report is 4 to 6 lines */

/* ---- following ---- */

int cd_kmsg_open(struct cd_kmsg *k, const char *path, bool from_start)
{
	memset(k, 0, sizeof *k);
	k->fd = -1;
	snprintf(k->path, sizeof k->path, "%s", path ? path : "/dev/kmsg");
	int fd = open(k->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	k->fd = fd;
	k->device = S_ISCHR(st.st_mode);
	if (!from_start && (k->device || S_ISREG(st.st_mode))) {
		/* /dev/kmsg: SEEK_END places the reader after the last record. */
		off_t end = lseek(fd, 0, SEEK_END);
		k->offset = end > 0 && !k->device ? (long long)end : 0;
	}
	return 0;
}

void cd_kmsg_close(struct cd_kmsg *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	k->have = 0;
}

/* Take one line (up to '\n', or all of buf when full without one). */
static bool take_line(struct cd_kmsg *k, char *line, size_t cap, bool force)
{
	char *nl = memchr(k->buf, '\n', k->have);
	if (!nl && !(force && k->have > 0))
		return false;
	size_t n = nl ? (size_t)(nl - k->buf) : k->have;
	size_t copy = n < cap - 1 ? n : cap - 1;
	memcpy(line, k->buf, copy);
	line[copy] = '\0';
	size_t used = nl ? n + 1 : n;
	memmove(k->buf, k->buf + used, k->have - used);
	k->have -= used;
	return true;
}

/* A followed file that shrank was cleared, and one whose name now holds
 * another file was rotated: either way, start over at its beginning. */
static void check_truncated(struct cd_kmsg *k)
{
	struct stat st, named;
	if (fstat(k->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	if (stat(k->path, &named) == 0 && (named.st_ino != st.st_ino || named.st_dev != st.st_dev)) {
		int fd = open(k->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			close(k->fd);
			k->fd = fd;
			st.st_size = 0;
			k->offset = 1; /* below: from the start */
		}
	}
	if ((long long)st.st_size < k->offset) {
		lseek(k->fd, 0, SEEK_SET);
		k->offset = 0;
		k->have = 0;
		k->resets++;
	}
}

int cd_kmsg_line(struct cd_kmsg *k, char *line, size_t cap)
{
	if (k->fd < 0)
		return -EBADF;
	if (cap == 0)
		return -EINVAL;
	if (take_line(k, line, cap, false))
		return 1;
	if (!k->device)
		check_truncated(k);
	for (int tries = 0; tries < 4; tries++) {
		ssize_t r = read(k->fd, k->buf + k->have, sizeof k->buf - 1 - k->have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EPIPE) {
			/* Records were overwritten before we read them: the next
			 * read goes on from the oldest one left. */
			k->lost++;
			continue;
		}
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		k->have += (size_t)r;
		if (!k->device)
			k->offset += r;
		/* A /dev/kmsg record always ends in '\n'; a full buffer without
		 * one is cut where it is, never a deadlock. */
		return take_line(k, line, cap, k->device || k->have >= sizeof k->buf - 1) ? 1 : 0;
	}
	return 0;
}

bool cd_kmsg_prefix(const char *line, int *facility, int *level, unsigned long long *seq)
{
	char *end;
	unsigned long pri = strtoul(line, &end, 10);
	if (end == line || *end != ',' || line[0] < '0' || line[0] > '9')
		return false;
	const char *s = end + 1;
	unsigned long long q = strtoull(s, &end, 10);
	if (end == s || *end != ',' || !strchr(end, ';'))
		return false;
	*facility = (int)(pri >> 3);
	*level = (int)(pri & 7);
	*seq = q;
	return true;
}

/* ---- grouping ---- */

const char *cd_watch_event_type(enum cd_event_kind kind)
{
	switch (kind) {
	case CD_EV_CS_SWITCHED: return "clocksource-switched";
	case CD_EV_TSC_UNSTABLE: return "tsc-unstable";
	case CD_EV_TSC_WARP: return "tsc-warp";
	case CD_EV_WATCHDOG_SKEW: return "watchdog-skew";
	case CD_EV_CS_UNSTABLE_DELTA: return "clocksource-unstable";
	case CD_EV_WD_READBACK_EXCESSIVE: return "watchdog-readback";
	case CD_EV_TSC_BROKEN_BIOS: return "tsc-broken-bios";
	case CD_EV_SCHED_CLOCK_UNSTABLE: return "sched-clock-unstable";
	case CD_EV_TSC_ADJUST: return "tsc-adjust";
	default: return NULL;
	}
}

/* Kinds whose report goes on over the next lines. */
static bool starts_group(enum cd_event_kind kind)
{
	return kind == CD_EV_WATCHDOG_SKEW || kind == CD_EV_TSC_SYNC_HEADER;
}

int cd_kgroup_init(struct cd_kgroup *g)
{
	memset(g, 0, sizeof *g);
	g->scratch = malloc(sizeof *g->scratch);
	return g->scratch ? 0 : -ENOMEM;
}

void cd_kgroup_free(struct cd_kgroup *g)
{
	free(g->scratch);
	g->scratch = NULL;
}

static int parse(struct cd_kgroup *g, const char *text, size_t len)
{
	memset(g->scratch, 0, sizeof *g->scratch);
	cd_klog_parse(text, len, g->scratch);
	return g->scratch->n_events;
}

/* text's lines without their /dev/kmsg prefixes, into raw. */
static void raw_lines(const char *text, size_t len, char *raw, size_t cap)
{
	size_t n = 0;
	raw[0] = '\0';
	size_t pos = 0;
	for (struct cd_span line; n + 1 < cap && cd_next_line(text, len, &pos, &line);) {
		const char *l = line.p;
		size_t ll = line.n;
		const char *semi = memchr(l, ';', ll);
		int fac, lev;
		unsigned long long seq;
		if (semi && cd_kmsg_prefix(l, &fac, &lev, &seq)) {
			ll -= (size_t)(semi + 1 - l);
			l = semi + 1;
		}
		if (ll > 0 && l[0] == ' ' && n > 0 && memchr(l, '=', ll) && !memchr(l, '\'', ll))
			continue; /* a /dev/kmsg " KEY=value" line, no message */
		int w = snprintf(raw + n, cap - n, "%s%.*s", n ? "\n" : "", (int)ll, l);
		n = w < 0 ? n : n + (size_t)w < cap ? n + (size_t)w : cap - 1;
	}
}

/* The reportable events of the last parse, into out. */
static int emit(struct cd_kgroup *g, const char *text, size_t len, struct cd_kgroup_event *out, int max)
{
	int fac = -1, lev = -1, got = 0;
	unsigned long long seq;
	if (!cd_kmsg_prefix(text, &fac, &lev, &seq))
		fac = lev = -1;
	for (int i = 0; i < g->scratch->n_events && got < max; i++) {
		const struct cd_event *e = &g->scratch->events[i];
		if (!cd_watch_event_type(e->kind))
			continue;
		struct cd_kgroup_event *o = &out[got++];
		o->ev = *e;
		o->facility = fac;
		o->level = lev;
		raw_lines(text, len, o->raw, sizeof o->raw);
	}
	return got;
}

int cd_kgroup_flush(struct cd_kgroup *g, double now, bool force, struct cd_kgroup_event *out, int max)
{
	if (g->lines == 0 || (!force && now < g->deadline))
		return 0;
	parse(g, g->text, g->len);
	int n = emit(g, g->text, g->len, out, max);
	g->len = 0;
	g->lines = 0;
	g->held_events = 0;
	return n;
}

double cd_kgroup_due(const struct cd_kgroup *g, double now)
{
	if (g->lines == 0)
		return -1;
	return g->deadline > now ? g->deadline - now : 0;
}

static void hold(struct cd_kgroup *g, const char *line, size_t n, int events)
{
	if (g->len + n + 2 > sizeof g->text)
		return;
	memcpy(g->text + g->len, line, n);
	g->len += n;
	g->text[g->len++] = '\n';
	g->text[g->len] = '\0';
	g->lines++;
	g->held_events = events;
}

/* kernel/time/clocksource.c clocksource_watchdog() ends its report with
 * "'%s' is current clocksource.", "'%s' (not '%s') is current
 * clocksource." or "No current clocksource.", after pr_fmt "clocksource: "
 * and blanks: only that line, where the kernel puts it, ends the report. */
static bool report_ends(const char *line, size_t n)
{
	static const char tail[] = " is current clocksource.";
	char buf[MSG_MAX];
	double ts;
	bool kmsg;
	snprintf(buf, sizeof buf, "%.*s", (int)n, line);
	for (size_t k = strlen(buf); k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == '\r' || is_space(buf[k - 1]));)
		buf[--k] = '\0';
	const char *m = cd_klog_strip_prefix(buf, &ts, &kmsg);
	if (!starts(m, "clocksource:"))
		return false;
	m = skip_spaces(m + 12);
	size_t len = strlen(m);
	return strcmp(m, "No current clocksource.") == 0 ||
	       (m[0] == '\'' && len > sizeof tail && strcmp(m + len - (sizeof tail - 1), tail) == 0);
}

int cd_kgroup_feed(struct cd_kgroup *g, const char *line, double now, struct cd_kgroup_event *out, int max)
{
	size_t n = strnlen(line, 1024);
	int got = 0;
	if (g->lines > 0) {
		if (now < g->deadline && g->lines < GROUP_MAX_LINES && g->len + n + 2 <= sizeof g->text) {
			/* Does the line continue the held report (no new event)? */
			memcpy(g->text + g->len, line, n);
			int events = parse(g, g->text, g->len + n);
			if (events == g->held_events) {
				hold(g, line, n, events);
				/* clocksource_watchdog() ends its report with the
				 * current clocksource: nothing more will come. */
				if (report_ends(line, n))
					return cd_kgroup_flush(g, now, true, out, max);
				return 0;
			}
			/* "Measured N cycles TSC warp" completes the sync header
			 * before it (its CPUs come from there). */
			if (events == g->held_events + 1 && g->scratch->events[events - 1].kind == CD_EV_TSC_WARP &&
			    g->scratch->events[0].kind == CD_EV_TSC_SYNC_HEADER) {
				hold(g, line, n, events);
				return cd_kgroup_flush(g, now, true, out, max);
			}
		}
		got = cd_kgroup_flush(g, now, true, out, max);
	}
	char one[1100];
	int k = snprintf(one, sizeof one, "%.*s\n", (int)n, line);
	size_t len = k > 0 && (size_t)k < sizeof one ? (size_t)k : sizeof one - 1;
	int events = parse(g, one, len);
	if (events > 0 && starts_group(g->scratch->events[events - 1].kind)) {
		g->deadline = now + CD_KGROUP_WAIT_S;
		hold(g, line, n, events);
		return got;
	}
	return got + emit(g, one, len, out + got, max - got);
}
