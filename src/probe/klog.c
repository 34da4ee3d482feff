/* SPDX-License-Identifier: MIT */
/*
 * klog.c: what the kernel log says about timekeeping.
 *
 * The kernel explains each of its clocksource decisions in its log: the TSC
 * failing the boot-time sync test, the watchdog demoting it at run time, the
 * switch to hpet or acpi_pm.  This module turns the lines that matter into
 * struct cd_event, whatever layout the log was saved in (dmesg, the raw
 * syslog(2) buffer, /dev/kmsg, journalctl, a syslog file) and whichever
 * kernel generation wrote it.  Reading the live machine's log is
 * klog_live.c's job.
 *
 * This file takes the text line by line and makes the bounded,
 * NUL-terminated copy every line is matched on (printk never stores a
 * record longer than 1 KiB), so no input, however long or binary, can make
 * a recogniser read out of bounds; klog_prefix.c strips the layout's
 * prefix, klog_join.c puts back a line a mail client or a forum broke,
 * klog_events.c recognises the events.
 */
#include "probe/klog_impl.h"
#include "probe/probe.h"
#include "probe/span.h"
#include "util/table.h"

/* What a cd_klog_parse() call reads its lines from. */
struct reader {
	const char *text;
	size_t len, pos;
	bool qp;          /* quoted-printable: soft breaks joined, "=XX" decoded */
	int fold;         /* the width the text was folded at, 0 if none; -1 not yet known */
	size_t last_n;    /* the length of the last physical line read */
};

/* The next line into out (MSG_MAX bytes, NUL-terminated, no NUL inside,
 * '\r' gone): with quoted-printable, the lines its soft breaks made, joined
 * and decoded (a line that starts with a time stamp of its own is never a
 * soft break's continuation).  *phys: how many lines of the text it took;
 * false at the end. */
static bool next_line(struct reader *r, char *out, size_t *outn, int *phys)
{
	struct cd_span ln;
	size_t n = 0;

	*phys = 0;
	while (cd_next_line(r->text, r->len, &r->pos, &ln)) {
		size_t k = ln.n;
		++*phys;
		if (k > 0 && ln.p[k - 1] == '\r')
			k--;
		r->last_n = k;
		bool soft = r->qp && k > 0 && ln.p[k - 1] == '=';
		k -= soft;
		for (size_t i = 0; i < k && n < MSG_MAX - 1; i++)
			out[n++] = ln.p[i] ? ln.p[i] : '?';
		if (!soft || r->pos >= r->len)
			break;
		const char *next = r->text + r->pos;
		size_t left = r->len - r->pos, b = 0;
		while (b < left && (next[b] == ' ' || next[b] == '>'))
			b++;
		if (b < left && next[b] == '[')   /* "[    1.234] ...": a line of its own */
			break;
	}
	if (*phys == 0)
		return false;
	if (r->qp)
		n = cd_klog_qp_decode(out, n);
	out[n] = 0;
	*outn = n;
	return true;
}

/* The width a mail client or `fold` cut the text's long lines at: the
 * longest line's length, when two lines or more have it. */
static int fold_width(struct reader *r)
{
	if (r->fold >= 0)
		return r->fold;
	size_t best = 0, times = 0, pos = 0;
	struct cd_span ln;
	while (cd_next_line(r->text, r->len, &pos, &ln)) {
		size_t k = ln.n - (ln.n > 0 && ln.p[ln.n - 1] == '\r');
		if (k > best)
			best = k, times = 1;
		else if (k == best)
			times++;
	}
	r->fold = times >= 2 && best >= 40 && best <= MSG_MAX ? (int)best : 0;
	return r->fold;
}

/* The line after one the kernel's format leaves unfinished, as its
 * continuation: the text once the quoting is gone (*blank: the break was
 * before a blank), or NULL when it has a prefix of its own (a time stamp,
 * "kernel:", a /dev/kmsg header), and so is a line of its own. */
static const char *continuation(const char *line, bool *blank)
{
	const char *q = skip_spaces(line), *c;
	double ts;
	bool kmsg;

	while (*q == '>')
		q += q[1] == ' ' ? 2 : 1;
	*blank = is_space(*q);
	q = skip_spaces(q);
	c = cd_klog_strip_prefix(q, &ts, &kmsg);
	return c == q && ts < 0 && !kmsg && *q ? q : NULL;
}

/* A quoted-printable soft break ("=" ending a line of at most 76) in a text
 * too short to tell it is quoted-printable: taken off, true, when the
 * message then is one the kernel's format leaves unfinished. */
static bool soft_break(char *line, size_t *n, size_t msg_at, size_t phys_len)
{
	if (*n <= msg_at || line[*n - 1] != '=' || phys_len > 76)
		return false;
	line[*n - 1] = 0;
	if (cd_klog_unfinished(line + msg_at)) {
		--*n;
		return true;
	}
	line[*n - 1] = '=';
	return false;
}

/* line, when it is a message the kernel's format leaves unfinished, joined
 * with the lines that carry it on; at most a few, each taken only when it
 * fits. */
static void join_wrapped(struct reader *r, struct cd_klog *log, char *line, size_t *n, size_t msg_at)
{
	char next[MSG_MAX];

	bool try_soft = !r->qp;

	for (int i = 0; i < 4; i++) {
		bool soft = try_soft && soft_break(line, n, msg_at, r->last_n);
		if (!soft && !cd_klog_unfinished(line + msg_at))
			return;
		size_t save = r->pos, before = r->last_n, nn, k = *n;
		int phys;
		bool blank, tail = false;
		while (!soft && k > msg_at && is_space(line[k - 1]))
			k--, tail = true;
		line[k] = 0;
		const char *c = next_line(r, next, &nn, &phys) ? continuation(next, &blank) : NULL;
		int fold = fold_width(r);
		bool folded = soft || (fold > 0 && before >= (size_t)fold);
		if (!c || !cd_klog_join(line, &k, msg_at, c, soft ? blank : blank || tail, folded)) {
			r->pos = save;
			r->last_n = before;
			if (soft) {   /* not a soft break after all: the line as it is */
				line[(*n)++] = '=';
				line[*n] = 0;
				try_soft = false;
				i--;
				continue;
			}
			line[*n] = 0;
			return;
		}
		try_soft = !r->qp;
		*n = k;
		log->lines += (size_t)phys;
	}
}

void cd_klog_parse(const char *text, size_t len, struct cd_klog *log)
{
	struct kstate st = { .log = log, .ts = -1, .sync_a = -1, .sync_b = -1, .wd = -1 };
	struct reader r = { .text = text, .len = len, .qp = text && cd_klog_is_qp(text, len), .fold = -1 };
	char line[MSG_MAX];   /* the bounded copy every recogniser reads (printk's records are shorter) */
	size_t n;
	int phys;

	while (next_line(&r, line, &n, &phys)) {
		bool kmsg;
		log->lines += (size_t)phys;
		if (st.after_kmsg && line[0] == ' ')   /* /dev/kmsg's " KEY=value" lines */
			continue;
		const char *msg = cd_klog_strip_prefix(line, &st.ts, &kmsg);
		if (!kmsg && *msg)
			join_wrapped(&r, log, line, &n, (size_t)(msg - line));
		while (n > 0 && is_space(line[n - 1]))
			n--;
		line[n] = 0;
		st.msg = msg;
		st.after_kmsg = kmsg;
		if (st.ts >= 0 && st.ts < 1.0)
			log->reaches_boot = true;
		cd_klog_recognise(&st);
	}
}

const char *cd_klog_source_name(enum cd_klog_source s)
{
	static const char *const names[] = { "none", "file", "ring", "journal" };

	return CD_NAME_OF(names, s, "none");
}
