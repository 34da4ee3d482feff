/* SPDX-License-Identifier: MIT */
/*
 * klog_impl.h: what the kernel log's parser shares between its files (internal
 * to probe/): the state one cd_klog_parse() call carries from line to line,
 * the small readers of characters, words and numbers every part uses, and
 * the two steps of a line after klog.c has made its bounded copy: the
 * layout's prefix (klog_prefix.c) and the events in the message
 * (klog_events.c).
 */
#ifndef CD_PROBE_KLOG_IMPL_H
#define CD_PROBE_KLOG_IMPL_H

#include "probe/facts.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define MSG_MAX 1024                 /* printk's LOG_LINE_MAX is 1024 - 32 */

/* What one cd_klog_parse() call carries from line to line. */
struct kstate {
	struct cd_klog *log;
	double ts;            /* of the current line, -1 if it had none */
	const char *msg;      /* the current message, prefix stripped */
	int sync_a, sync_b;   /* CPUs of the last "TSC synchronization" header */
	int wd;               /* index of the watchdog event still open, or -1 */
	double wd_ts;
	bool wd_has_wd, wd_has_cs, wd_has_skew; /* its parts already filled */
	bool after_kmsg;      /* the last line was a /dev/kmsg record */
	struct cd_event scratch; /* where events past CD_MAX_EVENTS go, unread */
};

/* ---- characters, words, numbers ---- */

static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
static inline bool is_space(char c) { return c == ' ' || c == '\t'; }

static inline int digit_value(char c, unsigned base)
{
	if (is_digit(c))
		return c - '0';
	if (base == 16 && ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'))
		return (c | 0x20) - 'a' + 10;
	return -1;
}

static inline const char *skip_spaces(const char *p)
{
	while (is_space(*p))
		p++;
	return p;
}

static inline bool starts(const char *s, const char *lit)
{
	return strncmp(s, lit, strlen(lit)) == 0;
}

/* The text just after the first lit in s, or NULL. */
static inline const char *after(const char *s, const char *lit)
{
	const char *f = s ? strstr(s, lit) : NULL;
	return f ? f + strlen(lit) : NULL;
}

/* A number in base 10 or 16, its digits consumed.  False when there is no
 * digit or it does not fit in 64 bits: a number too big is as good as none. */
static inline bool parse_u64(const char **pp, unsigned base, uint64_t *out)
{
	uint64_t v = 0;
	bool any = false, over = false;
	int d;

	for (; (d = digit_value(**pp, base)) >= 0; (*pp)++, any = true) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			over = true;
		v = v * base + (uint64_t)d;
	}
	if (any && !over)
		*out = v;
	return any && !over;
}

/* klog_prefix.c: strip whichever prefix the line's layout put before the
 * message; *ts = -1 when it gives no time, *kmsg when it was a /dev/kmsg
 * record. */
const char *cd_klog_strip_prefix(const char *line, double *ts, bool *kmsg);

/* klog_events.c: the events in st->msg, added to st->log; false when the
 * message is none of the lines that matter. */
bool cd_klog_recognise(struct kstate *st);

/* klog_join.c: a line a mail client, a forum or quoted-printable broke.
 * cd_klog_unfinished: msg starts as one of the kernel's formats and stops
 * before its end.  cd_klog_join: the continuation c joined to the message
 * at buf + msg_at (buf[0..*n), NUL-terminated, MSG_MAX bytes) as the
 * format goes on, false (buf unchanged) when it does not fit.
 * cd_klog_is_qp: the text is quoted-printable; cd_klog_qp_decode: its
 * "=XX" decoded in place, the new length. */
bool cd_klog_unfinished(const char *msg);
bool cd_klog_join(char *buf, size_t *n, size_t msg_at, const char *c, bool at_blank, bool folded);
bool cd_klog_is_qp(const char *text, size_t len);
size_t cd_klog_qp_decode(char *s, size_t n);

#endif
