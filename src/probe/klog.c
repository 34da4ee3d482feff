/*
 * klog.c: what the kernel log says about timekeeping.
 *
 * The kernel explains each of its clocksource decisions in its log: the TSC
 * failing the boot-time sync test, the watchdog demoting it at run time, the
 * switch to hpet or acpi_pm.  This module turns the lines that matter into
 * struct cd_event, whatever layout the log was saved in (dmesg, the raw
 * syslog(2) buffer, /dev/kmsg, journalctl, a syslog file) and whichever
 * kernel generation wrote it.  On a live machine it reads the ring buffer,
 * and the journal when the ring buffer has wrapped or is closed to us.
 *
 * Every line is matched on a bounded, NUL-terminated copy (printk never
 * stores a record longer than 1 KiB), so no input, however long or binary,
 * can make a recogniser read out of bounds.  Each recogniser names the kernel
 * source it follows; "about" marks a version inferred from merge dates, not
 * checked against a tag.
 */
#include "probe/probe.h"
#include "util/fsread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG_MAX 1024                 /* printk's LOG_LINE_MAX is 1024 - 32 */
#define RING_MAX (64u << 20)         /* log_buf_len is at most 2 GiB; be modest */
#define JOURNAL_MAX (16u << 20)
#define JOURNAL_TIMEOUT_MS 5000
#define SYSLOG_ACTION_READ_ALL 3     /* not exported by <sys/klog.h> */
#define SYSLOG_ACTION_SIZE_BUFFER 10
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* What one cd_klog_parse() call remembers from line to line. */
struct kstate {
	struct cd_klog *log;
	double ts;            /* of the current line, -1 if it had none */
	const char *msg;      /* the current message, prefix stripped */
	int sync_a, sync_b;   /* CPUs of the last "TSC synchronization" header */
	int wd;               /* index of the watchdog event still open, or -1 */
	double wd_ts;
	bool wd_has_wd, wd_has_cs, wd_has_skew; /* parts of it already filled */
	bool after_kmsg;      /* the last line was a /dev/kmsg record */
};

/* ---- characters and numbers ---- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_space(char c) { return c == ' ' || c == '\t'; }

static int digit_value(char c, unsigned base)
{
	if (is_digit(c))
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (base == 16 && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static const char *skip_spaces(const char *p)
{
	while (is_space(*p))
		p++;
	return p;
}

static bool starts(const char *s, const char *lit)
{
	return strncmp(s, lit, strlen(lit)) == 0;
}

/* The text just after the first lit in s, or NULL. */
static const char *after(const char *s, const char *lit)
{
	const char *f = strstr(s, lit);
	return f ? f + strlen(lit) : NULL;
}

/* A number in base 10 or 16.  False when there is no digit, or when it does
 * not fit in 64 bits: a number too big is as good as none.  The digits are
 * consumed either way. */
static bool parse_u64(const char **pp, unsigned base, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	bool any = false, over = false;
	int d;

	while ((d = digit_value(*p, base)) >= 0) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			over = true;
		else
			v = v * base + (uint64_t)d;
		any = true;
		p++;
	}
	*pp = p;
	if (!any || over)
		return false;
	*out = v;
	return true;
}

static bool parse_i64(const char **pp, int64_t *out)
{
	const char *p = *pp;
	bool neg = *p == '-';
	uint64_t v;

	if (neg)
		p++;
	bool ok = parse_u64(&p, 10, &v);
	*pp = p;
	if (!ok || v > (uint64_t)INT64_MAX + neg)
		return false;
	*out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
	return true;
}

static bool parse_cpu(const char **pp, int *out)
{
	uint64_t v;

	if (!parse_u64(pp, 10, &v) || v > 0x7fffffff)
		return false;
	*out = (int)v;
	return true;
}

/* "2596.121" (MHz, as "%lu.%03lu") into 2596121 kHz, in integers so that no
 * rounding can creep in.  Digits past the third decimal are dropped. */
static bool parse_khz(const char **pp, uint32_t *khz)
{
	const char *p = *pp;
	uint64_t mhz, frac = 0;
	int nd = 0;

	if (!parse_u64(&p, 10, &mhz) || mhz > UINT32_MAX / 1000 + 1)
		return false;
	if (*p == '.') {
		for (p++; is_digit(*p); p++)
			if (nd < 3) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				nd++;
			}
	}
	for (; nd < 3; nd++)
		frac *= 10;
	*pp = p;
	if (mhz * 1000 + frac > UINT32_MAX)
		return false;
	*khz = (uint32_t)(mhz * 1000 + frac);
	return true;
}

/* Copy at most n bytes of s (stopping at its NUL) into dst, trailing blanks
 * and dots dropped, anything not printable ASCII as '?'. */
static void copy_clean(char *dst, size_t cap, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < cap && i < n && s[i]; i++)
		dst[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	while (i > 0 && (dst[i - 1] == ' ' || dst[i - 1] == '.'))
		i--;
	dst[i] = 0;
}

static void copy_token(char *dst, size_t cap, const char *s)
{
	copy_clean(dst, cap, s, strcspn(s, " \t"));
}

static void copy_until(char *dst, size_t cap, const char *s, char stop)
{
	const char *e = strchr(s, stop);
	copy_clean(dst, cap, s, e ? (size_t)(e - s) : strlen(s));
}

/* ---- the prefix each layout puts before the message ---- */

/* "[    1.234567]": seconds since boot. */
static bool parse_bracket_ts(const char **pp, double *ts)
{
	const char *p, *d;
	uint64_t sec, frac = 0;
	double scale = 1;
	int nd = 0;

	if (**pp != '[')
		return false;
	p = d = skip_spaces(*pp + 1);
	if (!parse_u64(&p, 10, &sec) || p - d > 12)
		return false;
	if (*p == '.')
		for (p++; is_digit(*p); p++)
			if (nd++ < 9) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
	p = skip_spaces(p);
	if (*p != ']')
		return false;
	*ts = (double)sec + (double)frac / scale;
	*pp = p + 1;
	return true;
}

/* CONFIG_PRINTK_CALLER puts "[  T236]" or "[   C14]" after the time. */
static const char *skip_caller(const char *p)
{
	const char *q = skip_spaces(p);

	if (*q != '[')
		return p;
	q = skip_spaces(q + 1);
	if ((*q != 'T' && *q != 'C') || !is_digit(q[1]))
		return p;
	for (q++; is_digit(*q); q++)
		;
	return *q == ']' ? q + 1 : p;
}

/* /dev/kmsg: "6,123,1234567,-;msg" (the time in microseconds; newer kernels
 * add fields such as ",caller=T1" before the ';'). */
static bool parse_kmsg(const char **pp, double *ts)
{
	const char *p = *pp;
	uint64_t v, usec;
	int n;

	if (!parse_u64(&p, 10, &v) || *p != ',' || (++p, !parse_u64(&p, 10, &v)) ||
	    *p != ',' || (++p, !parse_u64(&p, 10, &usec)) || *p != ',')
		return false;
	for (n = 0; p[n] && p[n] != ';' && !is_space(p[n]) && n < 64; n++)
		;
	if (p[n] != ';')
		return false;
	*ts = (double)usec / 1e6;
	*pp = p + n + 1;
	return true;
}

/* "host kernel: " after a journal or syslog time stamp (or "kernel: " alone). */
static const char *skip_host_kernel(const char *p)
{
	size_t n;

	p = skip_spaces(p);
	if (starts(p, "kernel:"))
		return skip_spaces(p + 7);
	n = strcspn(p, " ");
	if (n > 0 && n <= 64 && starts(p + n, " kernel:"))
		return skip_spaces(p + n + 8);
	return p;
}

/* Wall-clock stamps: syslog "May  6 11:52:52 ", ISO "2023-09-11T07:03:06...",
 * `dmesg -T` "[Mon Sep 11 07:03:06 2023]".  None says the time since boot. */
static const char *skip_wall_clock(const char *p)
{
	const char *q;
	size_t n;

	if (p[0] >= 'A' && p[0] <= 'Z' && p[1] >= 'a' && p[1] <= 'z' && p[2] >= 'a' &&
	    p[2] <= 'z' && p[3] == ' ' && (p[4] == ' ' || is_digit(p[4])) &&
	    is_digit(p[5]) && p[6] == ' ' && is_digit(p[7]) && is_digit(p[8]) &&
	    p[9] == ':' && is_digit(p[10]) && is_digit(p[11]) && p[12] == ':')
		return skip_host_kernel(p + strcspn(p + 12, " ") + 12);
	for (q = p; q < p + 4 && is_digit(*q); q++)
		;
	if (q == p + 4 && q[0] == '-' && is_digit(q[1]) && is_digit(q[2]) && q[3] == '-' &&
	    is_digit(q[4]) && is_digit(q[5]) && q[6] == 'T')
		return skip_host_kernel(p + strcspn(p, " "));
	n = strnlen(p, 32);   /* "[Mon Sep 11 07:03:06 2023]" */
	if (n > 20 && p[0] == '[' && p[1] >= 'A' && p[1] <= 'Z' && p[4] == ' ' &&
	    p[8] == ' ' && (q = memchr(p, ']', n)) != NULL && memchr(p, ':', (size_t)(q - p)))
		return q + 1;
	return p;
}

/* Strip whichever prefix the line has; *ts = -1 when it says no time. */
static const char *strip_prefix(const char *p, double *ts, bool *kmsg)
{
	*ts = -1;
	*kmsg = false;
	if (p[0] == '<' && is_digit(p[1])) {   /* syslog(2) level, "<6>" */
		const char *q = p + 1;
		while (is_digit(*q) && q < p + 4)
			q++;
		if (*q == '>')
			p = q + 1;
	}
	if (is_digit(*p) && parse_kmsg(&p, ts)) {
		*kmsg = true;
		return p;
	}
	p = skip_wall_clock(p);
	if (*p == '[' && parse_bracket_ts(&p, ts))
		p = skip_host_kernel(skip_caller(p));
	return skip_spaces(p);
}

/* ---- events ---- */

static struct cd_event *add(struct kstate *st, enum cd_event_kind kind)
{
	struct cd_klog *log = st->log;
	struct cd_event *ev;

	if (log->n_events < 0 || log->n_events >= CD_MAX_EVENTS) {
		log->truncated_events = true;
		return NULL;
	}
	ev = &log->events[log->n_events++];
	memset(ev, 0, sizeof *ev);
	ev->kind = kind;
	ev->ts = st->ts;
	ev->cpu_a = ev->cpu_b = -1;
	copy_clean(ev->line, sizeof ev->line, st->msg, MSG_MAX);
	return ev;
}

/* "timekeeping watchdog on CPU3: X" -> 3, and X. */
static const char *watchdog_cpu(const char *m, int *cpu)
{
	const char *c = after(m, "watchdog on CPU");

	if (!c || !parse_cpu(&c, cpu))
		return NULL;
	return starts(c, ": ") ? c + 2 : NULL;
}

/* ---- recognisers: each returns true when the line was its own ---- */

/* init/version.c, every version: "Linux version %s (%s@%s) (%s) %s". */
static bool rec_version(struct kstate *st, const char *m)
{
	struct cd_event *ev;

	if (!starts(m, "Linux version "))
		return false;
	st->log->reaches_boot = true;
	if ((ev = add(st, CD_EV_KERNEL_VERSION)) != NULL)
		copy_token(ev->name, sizeof ev->name, m + 14);
	return true;
}

/* arch/x86/kernel/setup.c "Command line: %s" (x86, every version) and
 * init/main.c "Kernel command line: %s" (every architecture).  x86 prints
 * both, so the second makes an event only when the first is missing. */
static bool rec_cmdline(struct kstate *st, const char *m)
{
	bool kernel = starts(m, "Kernel command line:");
	int i;

	if (!kernel && !starts(m, "Command line:"))
		return false;
	st->log->reaches_boot = true;
	for (i = 0; kernel && i < st->log->n_events && i < CD_MAX_EVENTS; i++)
		if (st->log->events[i].kind == CD_EV_CMDLINE)
			return true;
	add(st, CD_EV_CMDLINE);
	return true;
}

/* kernel/time/clocksource.c clocksource_watchdog() continuation lines:
 * "'%s' wd_now: %llx wd_last: %llx mask: %llx" and "'%s' cs_now: ..." (4.1 to
 * 5.13), with "wd_nsec: %lld " / "cs_nsec: %lld " before wd_now/cs_now since
 * 5.14 ("wd_nesc" in the 2021 -next trees), each after pr_fmt "clocksource: "
 * and spaces.  They complete the open watchdog event; if it already has that
 * part (or there is none: the header was cut off), they start a new one. */
static struct cd_event *wd_open(struct kstate *st, struct cd_event *ev)
{
	st->wd = ev ? (int)(ev - st->log->events) : -1;
	st->wd_ts = st->ts;
	st->wd_has_wd = st->wd_has_cs = st->wd_has_skew = false;
	return ev;
}

static struct cd_event *wd_part(struct kstate *st, bool *has_part)
{
	bool near = st->wd_ts < 0 || st->ts < 0 ||
		    (st->ts - st->wd_ts < 1.0 && st->wd_ts - st->ts < 1.0);

	if (st->wd < 0 || st->wd >= st->log->n_events || *has_part || !near)
		wd_open(st, add(st, CD_EV_WATCHDOG_SKEW));
	*has_part = true;
	return st->wd >= 0 ? &st->log->events[st->wd] : NULL;
}

static bool rec_wd_counters(struct kstate *st, const char *m)
{
	const char *p = skip_spaces(starts(m, "clocksource:") ? m + 12 : m);
	const char *q = *p == '\'' ? strchr(p + 1, '\'') : NULL, *v;
	struct cd_event *ev;
	uint64_t now, last, mask;
	int64_t ns;
	bool wd;

	if (!q || !strstr(q, "_now:"))
		return false;
	q = skip_spaces(q + 1);
	if (!starts(q, "wd_") && !starts(q, "cs_"))
		return false;
	wd = q[0] == 'w';
	if (!(ev = wd_part(st, wd ? &st->wd_has_wd : &st->wd_has_cs)))
		return true;
	if (wd || !ev->name[0])
		copy_until(wd ? ev->name2 : ev->name, CD_NAME_MAX, p + 1, '\'');
	v = wd ? after(q, "wd_nsec:") : after(q, "cs_nsec:");
	if (!v && wd)
		v = after(q, "wd_nesc:");
	if (v && (v = skip_spaces(v), parse_i64(&v, &ns)))
		*(wd ? &ev->value : &ev->value2) = ns;
	if ((v = after(q, "_now:")) && (v = skip_spaces(v), parse_u64(&v, 16, &now)) &&
	    (v = after(v, "_last:")) && (v = skip_spaces(v), parse_u64(&v, 16, &last)) &&
	    (v = after(v, "mask:")) && (v = skip_spaces(v), parse_u64(&v, 16, &mask)))
		*(wd ? &ev->wd_cycles : &ev->cs_cycles) = (now - last) & mask;
	return true;
}

/* Same file, since about 6.1: "Clocksource '%s' skewed %lld ns (%lld ms) over
 * watchdog '%s' interval of %lld ns (%lld ms)": fills value/value2 when the
 * wd_nsec/cs_nsec lines did not; alone (a grepped log) it is an event. */
static bool rec_wd_skewed(struct kstate *st, const char *m)
{
	const char *p = after(m, "Clocksource '"), *q, *s, *w;
	struct cd_event *ev;
	int64_t skew, wd, cs;

	if (!p || !(q = strchr(p, '\'')) || !starts(q, "' skewed "))
		return false;
	if (!(ev = wd_part(st, &st->wd_has_skew)))
		return true;
	if (!ev->name[0])
		copy_until(ev->name, sizeof ev->name, p, '\'');
	if ((w = after(q, "over watchdog '")) && !ev->name2[0])
		copy_until(ev->name2, sizeof ev->name2, w, '\'');
	s = q + 9;
	if (parse_i64(&s, &skew) && (w = after(s, "interval of ")) && parse_i64(&w, &wd) &&
	    !__builtin_add_overflow(wd, skew, &cs)) {
		if (!ev->value && !ev->value2) {
			ev->value = wd;
			ev->value2 = cs;
		}
	}
	return true;
}

/* Same function, the header: 4.1 to about 4.18 "timekeeping watchdog: Marking
 * clocksource '%s' as unstable because the skew is too large:", later with
 * "on CPU%d" (4.19 has it, 6.x still). */
static bool rec_wd_header(struct kstate *st, const char *m)
{
	const char *q = after(m, "Marking clocksource '");
	struct cd_event *ev;

	if (!q || !strstr(q, "' as unstable"))
		return false;
	if ((ev = wd_open(st, add(st, CD_EV_WATCHDOG_SKEW))) != NULL) {
		copy_until(ev->name, sizeof ev->name, q, '\'');
		watchdog_cpu(m, &ev->cpu_a);
	}
	return true;
}

/* kernel/time/clocksource.c cs_watchdog_read(), since 5.14, demoting:
 *  5.14-about 5.19 "timekeeping watchdog on CPU%d: %s read-back delay of
 *    %lldns, attempt %d, marking unstable" (%s the watchdog),
 *  about 6.0-6.1 "... wd-%s-wd read-back delay of %lldns, attempt %d, marking
 *    unstable" (%s the clocksource),
 *  about 6.2+ "... wd-%s-wd excessive read-back delay of %lldns vs. limit of
 *    %ldns, wd-wd read-back delay only %lldns, attempt %d, marking %s unstable";
 * and demoting nothing: "... %s wd-wd read-back delay of %lldns", "wd-%s-wd
 * read-back delay of %lldns, clock-skew test skipped!" (about 5.16+), "... %s
 * retried %d times before success", and clocksource_watchdog()'s "Long readout
 * interval, skipping watchdog check: cs_nsec: %lld wd_nsec: %lld" (about 6.3+). */
static bool rec_readback(struct kstate *st, const char *m)
{
	const char *d = after(m, "read-back delay"), *w, *e, *tok;
	bool retried = strstr(m, "times before success") && strstr(m, "watchdog on CPU");
	bool longr = strstr(m, "Long readout interval, skipping watchdog check");
	struct cd_event *ev;

	if (!d && !retried && !longr)
		return false;
	ev = add(st, d && strstr(d, "marking") && strstr(d, "unstable") ?
		 CD_EV_WD_READBACK_EXCESSIVE : CD_EV_WD_NOISE);
	if (!ev)
		return true;
	if ((tok = watchdog_cpu(m, &ev->cpu_a)) != NULL && !starts(tok, "wd-"))
		copy_token(ev->name2, sizeof ev->name2, tok);
	if ((w = after(m, "wd-")) && (e = strstr(w, "-wd ")) != NULL)
		copy_clean(ev->name, sizeof ev->name, w, (size_t)(e - w));
	if (d) {
		d = skip_spaces(starts(skip_spaces(d), "of") ? skip_spaces(d) + 2 : d);
		parse_i64(&d, &ev->value);
		if ((w = after(m, "limit of ")) != NULL)
			parse_i64(&w, &ev->value2);
	} else if (longr && (w = after(m, "wd_nsec:")) && (e = after(m, "cs_nsec:"))) {
		w = skip_spaces(w);
		e = skip_spaces(e);
		parse_i64(&w, &ev->value);
		parse_i64(&e, &ev->value2);
	}
	return true;
}

/* kernel/time/clocksource.c clocksource_unstable(), 2.6.21 to 4.0:
 * "Clocksource %s unstable (delta = %Ld ns)"; RHEL 6 appends ".  Enable
 * clocksource failover by adding clocksource_failover kernel parameter." */
static bool rec_cs_delta(struct kstate *st, const char *m)
{
	const char *p = after(m, "Clocksource "), *d;
	struct cd_event *ev;
	size_t n;

	if (!p || (n = strcspn(p, " ")) == 0 || !starts(p + n, " unstable (delta = "))
		return false;
	if ((ev = add(st, CD_EV_CS_UNSTABLE_DELTA)) != NULL) {
		copy_clean(ev->name, sizeof ev->name, p, n);
		d = p + n + 19;
		parse_i64(&d, &ev->value);
	}
	return true;
}

/* kernel/time/clocksource.c clocksource_select(): "Switching to clocksource
 * %s" (2.6.28 to about 3.10), "Switched to clocksource %s" since (pr_fmt
 * "clocksource: " from about 4.2); kernel/time/timekeeping.c 2.6.18 to about
 * 2.6.27: "Time: %s clocksource has been installed." */
static bool rec_switch(struct kstate *st, const char *m)
{
	const char *p = after(m, "Switched to clocksource ");
	struct cd_event *ev;

	if (!p)
		p = after(m, "Switching to clocksource ");
	if (!p && starts(m, "Time: ") && strstr(m, " clocksource has been installed"))
		p = m + 6;
	if (!p)
		return false;
	if ((ev = add(st, CD_EV_CS_SWITCHED)) != NULL)
		copy_token(ev->name, sizeof ev->name, p);
	return true;
}

/* arch/x86/kernel/tsc.c mark_tsc_unstable(), 2.6.18 to 6.x: "Marking TSC
 * unstable due to %s" (pr_fmt "tsc: " from about 4.2), also printed by
 * tsc_cs_mark_unstable() for the watchdog; 2.6.2x-3.x DMI quirk: "%s detected:
 * marking TSC unstable." */
static bool rec_unstable(struct kstate *st, const char *m)
{
	const char *p = after(m, "Marking TSC unstable due to "), *q;
	struct cd_event *ev;

	if (p) {
		if ((ev = add(st, CD_EV_TSC_UNSTABLE)) != NULL)
			copy_clean(ev->name, sizeof ev->name, p, MSG_MAX);
		return true;
	}
	if (!(q = strstr(m, " detected: marking TSC unstable")))
		return false;
	if ((ev = add(st, CD_EV_TSC_UNSTABLE)) != NULL)
		copy_clean(ev->name, sizeof ev->name, m, (size_t)(q - m) + 9);
	return true;
}

/* arch/x86/kernel/tsc_sync.c check_tsc_sync_source(), 2.6.18 to 6.x: "TSC
 * synchronization [CPU#%d -> CPU#%d]:" then "Measured %Ld cycles TSC warp
 * between CPUs, turning off TSC clock." (pr_debug "...]: passed" is no
 * failure); 2.6.29 to about 5.x: "Skipped synchronization checks as TSC is
 * reliable." */
static bool rec_sync(struct kstate *st, const char *m)
{
	const char *p = after(m, "TSC synchronization [CPU#");
	struct cd_event *ev;
	int a, b;

	if (p) {
		if (!parse_cpu(&p, &a) || !starts(p, " -> CPU#") || (p += 8, !parse_cpu(&p, &b)) ||
		    !starts(p, "]:") || strstr(p, "passed"))
			return true;
		st->sync_a = a;
		st->sync_b = b;
		if ((ev = add(st, CD_EV_TSC_SYNC_HEADER)) != NULL) {
			ev->cpu_a = a;
			ev->cpu_b = b;
		}
		return true;
	}
	if ((p = after(m, "Measured ")) != NULL && strstr(p, " cycles TSC warp between CPUs")) {
		if ((ev = add(st, CD_EV_TSC_WARP)) != NULL) {
			parse_i64(&p, &ev->value);
			ev->cpu_a = st->sync_a;
			ev->cpu_b = st->sync_b;
		}
		st->sync_a = st->sync_b = -1;
		return true;
	}
	if (!strstr(m, "Skipped synchronization checks as TSC is reliable"))
		return false;
	add(st, CD_EV_TSC_SYNC_SKIPPED);
	return true;
}

/* arch/x86/kernel/tsc_sync.c, about 4.10+ (FW_BUG is "[Firmware Bug]: "):
 *  "TSC ADJUST differs: Reference CPU%u: %lld CPU%u: %lld"  cpu_b/value2 the
 *     reference, cpu_a/value the CPU that differs; "TSC ADJUST synchronize:" likewise
 *  "TSC ADJUST differs: CPU%u %lld --> %lld. Restoring"  value the new value
 *  "TSC ADJUST: CPU%u: %lld force to 0"
 *  "TSC ADJUST compensate: CPU%u observed %lld warp. Adjust: %lld"  value the
 *     adjustment, value2 the warp */
static bool rec_tsc_adjust(struct kstate *st, const char *m)
{
	const char *p = after(m, "TSC ADJUST"), *q;
	struct cd_event *ev;

	if (!p || !(ev = add(st, CD_EV_TSC_ADJUST)))
		return p != NULL;
	if ((q = after(p, "Reference CPU")) && parse_cpu(&q, &ev->cpu_b) && *q == ':') {
		q = skip_spaces(q + 1);
		parse_i64(&q, &ev->value2);
		if ((q = after(q, "CPU")) && parse_cpu(&q, &ev->cpu_a) && *q == ':') {
			q = skip_spaces(q + 1);
			parse_i64(&q, &ev->value);
		}
		copy_token(ev->name, sizeof ev->name, starts(p, " synchronize") ? "synchronize" : "differs");
	} else if ((q = after(p, "CPU")) && parse_cpu(&q, &ev->cpu_a)) {
		const char *arrow = after(q, "--> "), *obs = after(q, "observed "),
			   *adj = after(q, "Adjust: ");
		if (arrow && parse_i64(&arrow, &ev->value) && (q = skip_spaces(q)) != NULL) {
			parse_i64(&q, &ev->value2);
			copy_token(ev->name, sizeof ev->name, "restoring");
		} else if (obs && adj) {
			parse_i64(&obs, &ev->value2);
			parse_i64(&adj, &ev->value);
			copy_token(ev->name, sizeof ev->name, "compensate");
		} else if (*q == ':') {
			q = skip_spaces(q + 1);
			parse_i64(&q, &ev->value);
			copy_token(ev->name, sizeof ev->name, "force-to-0");
		}
	}
	return true;
}

/* arch/x86/kernel/tsc.c native_calibrate_tsc() and friends, 2.6.26 to 6.x
 * ("TSC: " prefix before about 4.2, "tsc: " after), and tsc_refine_
 * calibration_work()'s CPUID/MSR warning (about 5.x+, tsc=recalibrate). */
static bool rec_calibration(struct kstate *st, const char *m)
{
	static const struct { const char *text, *name; } forms[] = {
		{ "Fast TSC calibration failed", "fast-failed" },
		{ "Unable to calibrate against PIT", "pit-failed" },
		{ "PIT calibration deviates from ", "pit-deviates" },
		{ "HPET/PMTIMER calibration failed", "ref-failed" },
		{ "No reference (HPET/PMTIMER) available", "no-reference" },
		{ "TSC freq calibrated by CPUID/MSR differs", "cpuid-differs" },
	};
	struct cd_event *ev;
	const char *p;
	size_t i;

	for (i = 0; i < ARRAY_LEN(forms); i++) {
		if (!(p = after(m, forms[i].text)))
			continue;
		if ((ev = add(st, CD_EV_TSC_CALIBRATION)) != NULL) {
			copy_token(ev->name, sizeof ev->name, forms[i].name);
			if (i == 2 && (p = strchr(p, ':')) != NULL) {  /* "%s: %lu %lu" */
				p = skip_spaces(p + 1);
				if (parse_i64(&p, &ev->value))
					p = skip_spaces(p), parse_i64(&p, &ev->value2);
			}
		}
		return true;
	}
	return false;
}

/* arch/x86/kernel/tsc.c: "Detected %lu.%03lu MHz processor" (a trailing '.'
 * before about 3.14), "Detected %lu.%03lu MHz TSC" (about 4.x+, when it
 * differs), "Refined TSC clocksource calibration: %lu.%03lu MHz" (2.6.37+);
 * arch/x86/kernel/cpu/vmware.c: "TSC freq read from hypervisor : %lu.%03lu MHz". */
static bool rec_freq(struct kstate *st, const char *m)
{
	static const struct { const char *text, *name; } forms[] = {
		{ "Refined TSC clocksource calibration: ", "refined" },
		{ "TSC freq read from hypervisor : ", "hypervisor" },
		{ "Detected ", "detected" },
	};
	struct cd_event *ev;
	const char *p, *q;
	uint32_t khz = 0;
	size_t i;

	for (i = 0; i < ARRAY_LEN(forms); i++) {
		if (!(p = after(m, forms[i].text)) || !is_digit(*p))
			continue;
		q = p;
		while (is_digit(*q) || *q == '.')
			q++;
		if (!starts(q, " MHz") || (i == 2 && !starts(q, " MHz processor") &&
					   !starts(q, " MHz TSC")))
			continue;
		if ((ev = add(st, CD_EV_TSC_FREQ)) != NULL) {
			copy_token(ev->name, sizeof ev->name, forms[i].name);
			if (parse_khz(&p, &khz))
				ev->khz = khz;
		}
		return true;
	}
	return false;
}

/* arch/x86/kernel/cpu/hypervisor.c, 2.6.30 to 6.x: "Hypervisor detected: %s". */
static bool rec_hypervisor(struct kstate *st, const char *m)
{
	const char *p = after(m, "Hypervisor detected: ");
	struct cd_event *ev;

	if (!p)
		return false;
	if ((ev = add(st, CD_EV_HYPERVISOR)) != NULL)
		copy_clean(ev->name, sizeof ev->name, p, MSG_MAX);
	return true;
}

/* arch/x86/xen/time.c xen_setup_vsyscall_time_info(): "xen: VCLOCK_PVCLOCK
 * not supported (err %d)" / "(tsc unstable)" (about 4.11 to 5.6), then
 * VDSO_CLOCKMODE_PVCLOCK (about 5.7+).  name = the reason, value = err. */
static bool rec_xen(struct kstate *st, const char *m)
{
	const char *p = after(m, "PVCLOCK not supported");
	struct cd_event *ev;

	if (!p || (!strstr(m, "VDSO_CLOCKMODE_PVCLOCK") && !strstr(m, "VCLOCK_PVCLOCK")))
		return false;
	if ((ev = add(st, CD_EV_XEN_NO_VDSO)) != NULL && (p = strchr(p, '(')) != NULL) {
		copy_until(ev->name, sizeof ev->name, p + 1, ')');
		if (starts(p, "(err "))
			p += 5, parse_i64(&p, &ev->value);
	}
	return true;
}

/* drivers/clocksource/arm_arch_timer.c: "arch_timer: Enabling workaround for
 * %s" (4.10), "Enabling global workaround for %s" (4.11), "Enabling %s
 * workaround for %s" local/global (4.12 to 6.x).  name = the erratum. */
static bool rec_arch_timer(struct kstate *st, const char *m)
{
	const char *p = after(m, "workaround for ");
	struct cd_event *ev;

	if (!p || !starts(m, "arch_timer: Enabling "))
		return false;
	if ((ev = add(st, CD_EV_ARCH_TIMER_WORKAROUND)) != NULL)
		copy_clean(ev->name, sizeof ev->name, p, MSG_MAX);
	return true;
}

/* kernel/sched/clock.c, about 4.11 to 6.x: "TSC found unstable after boot,
 * most likely due to broken BIOS. Use 'tsc=unstable'." and "sched_clock:
 * Marking unstable (%lld, %lld)<-(%lld, %lld)". */
static bool rec_sched_clock(struct kstate *st, const char *m)
{
	if (strstr(m, "TSC found unstable after boot"))
		add(st, CD_EV_TSC_BROKEN_BIOS);
	else if (strstr(m, "sched_clock: Marking unstable"))
		add(st, CD_EV_SCHED_CLOCK_UNSTABLE);
	else
		return false;
	return true;
}

typedef bool (*recogniser)(struct kstate *st, const char *m);

/* Tried in order; the watchdog's continuation lines come first so that they
 * stay with their header. */
static const recogniser recognisers[] = {
	rec_version, rec_cmdline, rec_wd_counters, rec_wd_skewed, rec_wd_header,
	rec_readback, rec_cs_delta, rec_switch, rec_unstable, rec_sync,
	rec_tsc_adjust, rec_calibration, rec_freq, rec_hypervisor, rec_xen,
	rec_arch_timer, rec_sched_clock,
};

/* One line of n bytes (no '\n'), matched on a bounded copy in buf. */
static void parse_line(struct kstate *st, const char *raw, size_t n, char *buf)
{
	size_t k = n < MSG_MAX - 1 ? n : MSG_MAX - 1, i;
	bool kmsg;

	for (i = 0; i < k; i++)   /* a NUL would end the message early */
		buf[i] = raw[i] ? raw[i] : '?';
	while (k > 0 && (buf[k - 1] == '\r' || is_space(buf[k - 1])))
		k--;
	buf[k] = 0;
	/* /dev/kmsg follows a record with " KEY=value" dictionary lines. */
	if (st->after_kmsg && buf[0] == ' ')
		return;
	st->msg = strip_prefix(buf, &st->ts, &kmsg);
	st->after_kmsg = kmsg;
	if (st->ts >= 0 && st->ts < 1.0)
		st->log->reaches_boot = true;
	for (i = 0; i < ARRAY_LEN(recognisers); i++)
		if (recognisers[i](st, st->msg))
			return;
}

void cd_klog_parse(const char *text, size_t len, struct cd_klog *log)
{
	struct kstate st = { .log = log, .ts = -1, .sync_a = -1, .sync_b = -1, .wd = -1 };
	char buf[MSG_MAX];
	size_t pos = 0, end;
	const char *nl;

	if (!text)
		len = 0;
	while (pos < len) {
		nl = memchr(text + pos, '\n', len - pos);
		end = nl ? (size_t)(nl - text) : len;
		parse_line(&st, text + pos, end - pos, buf);
		log->lines++;
		pos = end + 1;
	}
}

const char *cd_klog_source_name(enum cd_klog_source s)
{
	switch (s) {
	case CD_KLOG_FILE: return "file";
	case CD_KLOG_RING: return "ring";
	case CD_KLOG_JOURNAL: return "journal";
	case CD_KLOG_NONE: break;
	}
	return "none";
}

/* ---- the live machine ---- */

static int ring_read(char **out, size_t *len)
{
	int size = klogctl(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0), n;
	char *buf;

	if (size < 0)
		return -errno;
	if (size == 0 || (unsigned)size > RING_MAX)
		size = size == 0 ? 1 << 20 : (int)RING_MAX;
	if (!(buf = malloc((size_t)size + 1)))
		return -ENOMEM;
	if ((n = klogctl(SYSLOG_ACTION_READ_ALL, buf, size)) < 0) {
		int e = -errno;
		free(buf);
		return e;
	}
	buf[n] = 0;
	*out = buf;
	*len = (size_t)n;
	return 0;
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Read a child's output until EOF, JOURNAL_MAX bytes or the deadline. */
static char *read_bounded(int fd, size_t *len, bool *timed_out, bool *full)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1), *nb;
	long deadline = now_ms() + JOURNAL_TIMEOUT_MS, left;
	ssize_t r;

	*timed_out = *full = false;
	while (buf) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int pr = (left = deadline - now_ms()) > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {   /* never read() unless poll said so: it would block */
			*timed_out = pr == 0;
			break;
		}
		if (n == cap) {
			if (cap >= JOURNAL_MAX) {
				*full = true;
				break;
			}
			cap = cap * 2 > JOURNAL_MAX ? JOURNAL_MAX : cap * 2;
			if (!(nb = realloc(buf, cap + 1)))
				break;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
			break;
		n += r > 0 ? (size_t)r : 0;
	}
	if (buf) {
		while (*full && n > 0 && buf[n - 1] != '\n')   /* no half line */
			n--;
		buf[n] = 0;
	}
	*len = n;
	return buf;
}

/* `journalctl -k -b -o short-monotonic`, without a shell, stdin and stderr on
 * /dev/null, killed after JOURNAL_TIMEOUT_MS.  *err: -ENOENT when there is no
 * journalctl, -ETIMEDOUT, -EFBIG (output cut at JOURNAL_MAX, still returned). */
static char *journal_read(size_t *len, int *err)
{
	char *argv[] = { "journalctl", "-k", "-b", "-o", "short-monotonic",
			 "--no-pager", "-q", NULL };
	posix_spawn_file_actions_t fa;
	int fds[2], rc, status;
	bool timed_out, full;
	pid_t pid;
	char *out;

	*len = 0;
	*err = 0;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		*err = -errno;
		return NULL;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&pid, "journalctl", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		*err = -rc;
		return NULL;
	}
	out = read_bounded(fds[0], len, &timed_out, &full);
	close(fds[0]);
	if (timed_out || full)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (timed_out) {   /* a log cut at an arbitrary time would mislead */
		free(out);
		*len = 0;
		*err = -ETIMEDOUT;
		return NULL;
	}
	*err = !out ? -ENOMEM : full ? -EFBIG : 0;
	return out;
}

static bool text_reaches_boot(const char *text, size_t len)
{
	struct cd_klog *tmp = calloc(1, sizeof *tmp);
	bool r;

	if (!tmp)
		return false;
	cd_klog_parse(text, len, tmp);
	r = tmp->reaches_boot;
	free(tmp);
	return r;
}

/* short-monotonic lines start with "[": anything else is no log. */
static bool has_log_lines(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (text[i] == '[' && (i == 0 || text[i - 1] == '\n'))
			return true;
	return false;
}

static void ring_error(char *why, size_t cap, int err)
{
	char restrict_val[16] = "";

	if (err != -EPERM) {
		snprintf(why, cap, "the kernel ring buffer could not be read: syslog(2): %s",
			 strerror(-err));
		return;
	}
	cd_read_small("/", "/proc/sys/kernel/dmesg_restrict", restrict_val, sizeof restrict_val);
	if (strcmp(restrict_val, "1") == 0)
		snprintf(why, cap, "the kernel log is not readable without root because "
			 "kernel.dmesg_restrict is 1: run as root, or grant CAP_SYSLOG "
			 "(or set the sysctl kernel.dmesg_restrict=0)");
	else if (strcmp(restrict_val, "0") == 0)
		snprintf(why, cap, "syslog(2) refused (EPERM) although kernel.dmesg_restrict "
			 "is 0: a container or security policy withholds CAP_SYSLOG; run as "
			 "root on the host, or grant CAP_SYSLOG");
	else
		snprintf(why, cap, "the kernel log is not readable without root "
			 "(syslog(2): EPERM; kernel.dmesg_restrict unknown): run as root, "
			 "or grant CAP_SYSLOG");
}

static void append(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(dst);

	if (n + 1 < cap)
		snprintf(dst + n, cap - n, "%s", s);
}

static const char *journal_error(int err)
{
	switch (err) {
	case -ENOENT: return "journalctl is not installed";
	case -ETIMEDOUT: return "journalctl did not finish within 5 s";
	case 0: return "journalctl gave no kernel lines for this boot";
	default: return "journalctl could not be run";
	}
}

char *cd_klog_live_text(size_t *len, enum cd_klog_source *source, char *why_not, size_t why_cap)
{
	char *ring = NULL, *jour, dummy[1];
	size_t rlen = 0, jlen = 0;
	int rerr, jerr;

	if (!why_not || why_cap == 0) {
		why_not = dummy;
		why_cap = sizeof dummy;
	}
	why_not[0] = 0;
	*len = 0;
	*source = CD_KLOG_NONE;
	rerr = ring_read(&ring, &rlen);
	if (rerr == 0 && text_reaches_boot(ring, rlen)) {
		*source = CD_KLOG_RING;
		*len = rlen;
		return ring;
	}
	/* The ring buffer has wrapped (or is closed): journald keeps the boot. */
	jour = journal_read(&jlen, &jerr);
	if (jour && has_log_lines(jour, jlen) &&
	    (rerr != 0 || rlen == 0 || text_reaches_boot(jour, jlen))) {
		if (rerr != 0) {
			ring_error(why_not, why_cap, rerr);
			append(why_not, why_cap, "; read the journal instead");
		} else
			snprintf(why_not, why_cap, "the ring buffer no longer reaches back to boot; "
				 "read the journal%s", jerr == -EFBIG ? " (cut at 16 MiB)" : "");
		free(ring);
		*source = CD_KLOG_JOURNAL;
		*len = jlen;
		return jour;
	}
	if (jour && has_log_lines(jour, jlen))
		jerr = 0;
	free(jour);
	if (rerr == 0) {
		snprintf(why_not, why_cap, "the ring buffer no longer reaches back to boot "
			 "and %s: boot-time messages are lost", journal_error(jerr));
		*source = CD_KLOG_RING;
		*len = rlen;
		return ring;
	}
	ring_error(why_not, why_cap, rerr);
	append(why_not, why_cap, "; ");
	append(why_not, why_cap, journal_error(jerr));
	return NULL;
}

void cd_klog_live(struct cd_klog *log)
{
	enum cd_klog_source src;
	size_t len;
	char *text;

	memset(log, 0, sizeof *log);
	text = cd_klog_live_text(&len, &src, log->why_not, sizeof log->why_not);
	log->source = src;
	if (!text)
		return;
	log->readable = true;
	cd_klog_parse(text, len, log);
	free(text);
}
