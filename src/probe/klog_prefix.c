/* SPDX-License-Identifier: MIT */
/*
 * klog_prefix.c: the prefix each layout of a saved kernel log puts before
 * the message, and the time since boot some of them give: dmesg
 * ("[    1.234567] msg"), syslog(2)'s ring buffer ("<6>[    1.234567] msg"),
 * /dev/kmsg records ("6,123,1234567,-;msg"), journalctl and syslog files
 * with their wall-clock stamps and "host kernel: ", `grep -H`'s "FILE:",
 * CONFIG_PRINTK_CALLER's "[  T236]", and what a paste adds before them (quoting,
 * line numbers, a test driver's machine name).  Every test stops at the NUL of the
 * bounded copy it is given (klog.c).
 */
#include "probe/klog_impl.h"

/* "[    1.234567]": seconds since boot.  A paste may lose the '['
 * ("   0.000000] Linux version ..."): the seconds, a fraction and the ']'
 * still mark the stamp. */
static bool parse_bracket_ts(const char **pp, double *ts)
{
	uint64_t sec, frac = 0;
	double scale = 1;
	bool open = **pp == '[';

	const char *p = skip_spaces(*pp + open), *d = p;
	if (!parse_u64(&p, 10, &sec) || p - d > 12 || (!open && *p != '.'))
		return false;
	for (p += *p == '.'; is_digit(*p); p++)
		if (scale < 1e9)
			frac = frac * 10 + (uint64_t)(*p - '0'), scale *= 10;
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

/* /dev/kmsg: "6,123,1234567,-;msg", the time in microseconds (newer kernels
 * add fields such as ",caller=T1" before the ';'). */
static bool parse_kmsg(const char **pp, double *ts)
{
	const char *p = *pp;
	uint64_t v, usec;
	int n;

	if (!parse_u64(&p, 10, &v) || *p++ != ',' || !parse_u64(&p, 10, &v) || *p++ != ',' ||
	    !parse_u64(&p, 10, &usec) || *p != ',')
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
	p = skip_spaces(p);
	if (starts(p, "kernel:"))
		return skip_spaces(p + 7);
	size_t n = strcspn(p, " ");
	return n > 0 && n <= 64 && starts(p + n, " kernel:") ? skip_spaces(p + n + 8) : p;
}

/* Wall-clock stamps: syslog "May  6 11:52:52 " (OpenWrt's logread puts the
 * weekday before and the year after), ISO "2023-09-11T07:03:06..."
 * (journalctl -o short-iso, dmesg --time-format iso), dmesg -T "[Mon Sep 11
 * 07:03:06 2023]".  None says the time since boot.  Every test below stops
 * at the NUL before looking further. */
static bool capitalised_word3(const char *p)
{
	return p[0] >= 'A' && p[0] <= 'Z' && p[1] >= 'a' && p[1] <= 'z' && p[2] >= 'a' && p[2] <= 'z' &&
	       p[3] == ' ';
}

/* syslog's "May  6 11:52:52": true when p starts with it. */
static bool syslog_stamp(const char *p)
{
	return capitalised_word3(p) && (p[4] == ' ' || is_digit(p[4])) && is_digit(p[5]) && p[6] == ' ' &&
	       is_digit(p[7]) && is_digit(p[8]) && p[9] == ':';
}

static const char *skip_wall_clock(const char *p)
{
	const char *q;

	if (syslog_stamp(p))
		return skip_host_kernel(p + 7 + strcspn(p + 7, " "));
	/* OpenWrt's logread: the weekday first, the year after the time, then
	 * "kern.info kernel: " ("Tue Mar  8 13:19:34 2022 kern.info kernel: ") */
	if (capitalised_word3(p) && syslog_stamp(p + 4)) {
		q = skip_spaces(p + 11 + strcspn(p + 11, " "));
		if (is_digit(q[0]) && is_digit(q[1]) && is_digit(q[2]) && is_digit(q[3]) && q[4] == ' ')
			return skip_host_kernel(q + 4);
	}
	for (q = p; q < p + 4 && is_digit(*q); q++)
		;
	if (q == p + 4 && q[0] == '-' && is_digit(q[1]) && is_digit(q[2]) && q[3] == '-' &&
	    is_digit(q[4]) && is_digit(q[5]) && q[6] == 'T')
		return skip_host_kernel(p + strcspn(p, " "));
	size_t n = strnlen(p, 32);
	if (n > 20 && p[0] == '[' && p[1] >= 'A' && p[1] <= 'Z' && p[4] == ' ' && p[8] == ' ' &&
	    (q = memchr(p, ']', n)) != NULL && memchr(p, ':', (size_t)(q - p)))
		return q + 1;
	return p;
}

/* `grep -H` (or grep over several files) puts the file's name and a colon
 * before each line: "/var/log/kern.log:Feb  2 17:33:32 host kernel: ...".
 * A name with a '/' or a '.' in it, its colon followed by no blank, is
 * such a prefix; a message's own "subsystem: " always has the blank. */
static const char *skip_grep_file(const char *p)
{
	size_t n = strcspn(p, ": \t");

	if (n == 0 || n > 255 || p[n] != ':' || p[n + 1] == 0 || is_space(p[n + 1]) ||
	    (!memchr(p, '/', n) && !memchr(p, '.', n)))
		return p;
	return p + n + 1;
}

/* A log pasted into a mail or a forum post: indented, or quoted ("> ",
 * "> > "); the kernel's own lines never start with either. */
static const char *skip_quoting(const char *p)
{
	for (;;) {
		p = skip_spaces(p);
		if (*p != '>')
			return p;
		p++;
	}
}

/* Labels a paste puts before each line: a forum's or a pastebin's line
 * numbers ("12: [    0.000000] ...", "  12 | [ ...") and a test driver's
 * machine name (NixOS's "drbd1 # [    0.037075] ...").  Taken off only
 * where a dmesg stamp or a syslog level follows, which no kernel message
 * starts with: a line of the kernel's own is never shortened. */
static const char *skip_paste_label(const char *p)
{
	size_t n = 0;
	const char *q;

	while (n < 8 && is_digit(p[n]))
		n++;
	if (n > 0 && n <= 7) {
		q = skip_spaces(p + n);
		if (*q == ':' || *q == '|') {
			q = skip_spaces(q + 1);
			if (*q == '[' || *q == '<')
				return q;
		}
	}
	for (n = 0; n <= 64 && (is_digit(p[n]) || ((p[n] | 0x20) >= 'a' && (p[n] | 0x20) <= 'z') ||
	                        p[n] == '_' || p[n] == '-' || p[n] == '.'); n++)
		;
	if (n > 0 && n <= 64 && p[n] == ' ' && p[n + 1] == '#' && p[n + 2] == ' ' &&
	    (p[n + 3] == '[' || p[n + 3] == '<'))
		return p + n + 3;
	return p;
}

const char *cd_klog_strip_prefix(const char *p, double *ts, bool *kmsg)
{
	*ts = -1;
	*kmsg = false;
	p = skip_grep_file(skip_paste_label(skip_quoting(p)));
	if (p[0] == '<' && is_digit(p[1])) {   /* syslog(2) level, "<6>" */
		const char *q = p + 1;
		while (is_digit(*q) && q < p + 4)
			q++;
		p = *q == '>' ? q + 1 : p;
	}
	if (is_digit(*p) && parse_kmsg(&p, ts)) {
		*kmsg = true;
		return p;
	}
	p = skip_wall_clock(p);
	/* syslog without its date ("kernel: [  384.258940] msg"), as some
	 * appliances and forum posts keep it */
	if (starts(p, "kernel: ["))
		p = skip_spaces(p + 7);
	if (parse_bracket_ts(&p, ts))
		p = skip_host_kernel(skip_caller(p));
	else
		p = skip_caller(p);   /* a paste that kept "[  T236]" but not the time */
	return skip_spaces(p);
}
