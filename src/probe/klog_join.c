/* SPDX-License-Identifier: MIT */
/*
 * klog_join.c: a kernel line that a mail client, a forum or quoted-printable
 * broke in two, put back together before it is read.
 *
 * Quoted-printable (RFC 2045 6.7) ends a line it breaks with "=" and writes
 * "=" as "=3D"; mail clients and forums wrap long lines at a width (60, 72,
 * 76, 80...), at a blank or in the middle of a word.  The watchdog's report
 * is where it matters: its lines are the longest the kernel prints about
 * time, and a number cut off (the read-back delay, the skew) is a number
 * lost.
 *
 * A line is joined to the next only where the kernel's own format says it is
 * unfinished: its message starts, with the subsystem's prefix, as one of the
 * formats below and stops before the format's end; and the next line has no
 * prefix of its own (no time stamp, no "kernel:") and carries the text on as
 * the format goes on.  So a join never makes a kernel message out of some
 * other program's text: the start was the kernel's before the join (the
 * rule klog_events.c keeps), and what is added is only what the format
 * allows.  Whether the break ate a blank is decided by the format too: the
 * join that fits it is kept.
 */
#include "probe/klog_impl.h"
#include "probe/tsc_reasons.h"

/* The formats, as the text after the subsystem's prefix ("clocksource: ",
 * "tsc: ", or none) and the blanks after it.  A blank matches one or more;
 * %d a signed decimal, %x hexadecimal, %s a clocksource's name, %r a reason
 * of probe/tsc_reasons.c (after the 2.6.21-2.6.23 colon).  Each names the
 * kernel source it follows; the recognisers in klog_events.c read them. */
static const char *const formats[] = {
	/* kernel/time/clocksource.c clocksource_watchdog(), 4.1 to 6.x */
	"timekeeping watchdog on CPU%d: Marking clocksource '%s' as unstable because the skew is too large:",
	"timekeeping watchdog: Marking clocksource '%s' as unstable because the skew is too large:",
	"timekeeping watchdog: Marking clocksource '%s' as unstable, because the skew is too large:",
	"'%s' wd_nsec: %d wd_now: %x wd_last: %x mask: %x",
	"'%s' cs_nsec: %d cs_now: %x cs_last: %x mask: %x",
	"'%s' wd_now: %x wd_last: %x mask: %x",
	"'%s' cs_now: %x cs_last: %x mask: %x",
	"Clocksource '%s' skewed %d ns (%d ms) over watchdog '%s' interval of %d ns (%d ms)",
	"Long readout interval, skipping watchdog check: cs_nsec: %d wd_nsec: %d",
	/* cs_watchdog_read(), 5.14 to 6.x */
	"timekeeping watchdog on CPU%d: wd-%s-wd excessive read-back delay of %dns vs. limit of %dns, "
	"wd-wd read-back delay only %dns, attempt %d, marking %s unstable",
	"timekeeping watchdog on CPU%d: wd-%s-wd read-back delay of %dns, attempt %d, marking unstable",
	"timekeeping watchdog on CPU%d: %s read-back delay of %dns, attempt %d, marking unstable",
	"timekeeping watchdog on CPU%d: %s wd-wd read-back delay of %dns",
	"timekeeping watchdog on CPU%d: %s retried %d times before success",
	"wd-%s-wd read-back delay of %dns, clock-skew test skipped!",
	/* clocksource_unstable(), 2.6.21 to 4.0, and RHEL 6's longer one */
	"Clocksource %s unstable (delta = %d ns)",
	"Clocksource %s unstable (delta = %d ns). Enable clocksource failover by adding "
	"clocksource_failover kernel parameter.",
	/* arch/x86/kernel/tsc_sync.c check_tsc_sync_source() (2.6.x: "checking
	 * ...", and ": passed." when it passed) */
	"TSC synchronization [CPU#%d -> CPU#%d]:",
	"checking TSC synchronization [CPU#%d -> CPU#%d]:",
	"checking TSC synchronization [CPU#%d -> CPU#%d]: passed.",
	"Measured %d cycles TSC warp between CPUs, turning off TSC clock.",
	/* arch/x86/kernel/tsc.c mark_tsc_unstable() */
	"Marking TSC unstable due to%r",
};

enum fit { FIT_NONE, FIT_PART, FIT_WHOLE };

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '.' ||
	       c == '-';
}

/* A %r: the rest of the text is one of the kernel's reasons, or the start
 * of one (a reason that begins a longer one may go on: "TSC halts in idle"
 * and "... states deeper than C2"); 2.6.21-2.6.23's "due to: %s." ends
 * with its '.'. */
static enum fit fit_reason(const char *t)
{
	bool colon = *t == ':';
	t = skip_spaces(t + colon);
	size_t n = strlen(t);
	bool dot = n > 0 && t[n - 1] == '.';
	while (n > 0 && (t[n - 1] == '.' || is_space(t[n - 1])))
		n--;
	char reason[MSG_MAX];
	memcpy(reason, t, n);
	reason[n] = 0;
	if (cd_tsc_reason_is_beginning(reason, n) || (colon && !dot && cd_tsc_reason_find(reason)))
		return FIT_PART;
	return n > 0 && cd_tsc_reason_find(reason) ? FIT_WHOLE : FIT_NONE;
}

/* How far text t follows format f: all of it (FIT_WHOLE, a final '.' or
 * '!' allowed), a beginning of it (FIT_PART), or not (FIT_NONE). */
static enum fit fit_format(const char *t, const char *f)
{
	while (*f) {
		if (!*t)
			return FIT_PART;
		if (f[0] == '%') {
			const char *s = t;
			char k = f[1];
			f += 2;
			if (k == 'r')
				return fit_reason(t);
			if (k == 'd') {
				t += *t == '-';
				while (is_digit(*t))
					t++;
			} else if (k == 'x') {
				while (digit_value(*t, 16) >= 0)
					t++;
			} else {
				/* a name ends where the format's next word begins
				 * ("wd-tsc-early-wd ..."), else at its last name character */
				size_t lit = strcspn(f, "% ");
				char next[64];
				const char *at = NULL;
				if (lit > 0 && lit < sizeof next) {
					memcpy(next, f, lit);
					next[lit] = 0;
					at = strstr(t, next);
				}
				while (is_name_char(*t) && t != at)
					t++;
			}
			if (!*t)   /* a number or a name at the text's end may go on */
				return FIT_PART;
			if (t == s || (k == 'd' && t == s + 1 && *s == '-'))
				return FIT_NONE;
			continue;
		}
		if (*f == ' ') {
			if (!is_space(*t))
				return FIT_NONE;
			t = skip_spaces(t);
			f++;
			continue;
		}
		if (*t++ != *f++)
			return FIT_NONE;
	}
	while (*t == '.' || *t == '!' || is_space(*t))
		t++;
	return *t ? FIT_NONE : FIT_WHOLE;
}

/* How message m (after the log's prefix) fits the formats: FIT_PART when
 * any may go on after it. */
static enum fit fit_message(const char *m)
{
	static const char *const subsystems[] = { "clocksource:", "tsc:" };
	enum fit best = FIT_NONE;

	for (size_t i = 0; i < sizeof subsystems / sizeof subsystems[0]; i++) {
		size_t k = strlen(subsystems[i]), n = strnlen(m, k);
		if (n < k && strncmp(m, subsystems[i], n) == 0)
			return FIT_PART;   /* cut inside the prefix ("cl" / "ocksource: ...") */
		if (starts(m, subsystems[i])) {
			m = skip_spaces(m + k);
			break;
		}
	}
	/* Unfinished when any format may go on ("... (delta = %d ns)." and
	 * RHEL 6's longer line after it). */
	for (size_t i = 0; i < sizeof formats / sizeof formats[0] && best != FIT_PART; i++) {
		if (*m && formats[i][0] != *m)   /* most lines: not even the first letter */
			continue;
		enum fit f = fit_format(m, formats[i]);
		if (f != FIT_NONE)
			best = f;
	}
	return best;
}

bool cd_klog_unfinished(const char *msg)
{
	return *msg && fit_message(msg) == FIT_PART;
}

/* The continuation c (a line with no prefix of its own, its quoting gone)
 * after the message in buf[0..*n), which the format left unfinished: joined
 * as the format goes on, blank or none (folded: prefer none, the break was
 * inside a word); false when neither fits.  at_blank: the break was at a
 * blank (the line ended in one, or the next began with one). */
bool cd_klog_join(char *buf, size_t *n, size_t msg_at, const char *c, bool at_blank, bool folded)
{
	size_t cn = strnlen(c, MSG_MAX), base = *n;
	enum fit with[2] = { FIT_NONE, FIT_NONE };   /* [0] no blank, [1] a blank */

	if (base + 1 + cn >= MSG_MAX)
		return false;
	for (int blank = at_blank; blank < 2; blank++) {
		size_t k = base;
		if (blank)
			buf[k++] = ' ';
		memcpy(buf + k, c, cn);
		buf[k + cn] = 0;
		with[blank] = fit_message(buf + msg_at);
	}
	int pick;
	if (with[0] == FIT_NONE && with[1] == FIT_NONE)
		pick = -1;
	else if (with[0] != with[1])
		pick = with[0] > with[1] ? 0 : 1;
	else
		pick = folded ? 0 : 1;
	if (pick < 0) {
		buf[base] = 0;
		return false;
	}
	size_t k = base;
	if (pick)
		buf[k++] = ' ';
	memcpy(buf + k, c, cn);
	*n = k + cn;
	buf[*n] = 0;
	return true;
}

/* ---- quoted-printable ---- */

bool cd_klog_is_qp(const char *text, size_t len)
{
	/* "=3D", "=20", "=09": '=', a space and a tab as quoted-printable writes them */
	for (const char *e = text, *end = text + len; (e = memchr(e, '=', (size_t)(end - e))) != NULL; e++)
		if (end - e >= 3 && ((e[1] == '3' && e[2] == 'D') || (e[1] == '2' && e[2] == '0') ||
		                     (e[1] == '0' && e[2] == '9')))
			return true;
	/* soft breaks alone: "=" ending lines no longer than RFC 2045's 76,
	 * twice at least (one could be a line the kernel ended with " =") */
	int soft = 0;
	for (size_t pos = 0, start = 0; pos < len; pos++)
		if (text[pos] == '\n') {
			size_t n = pos - start - (pos > start && text[pos - 1] == '\r');
			soft += n > 1 && n <= 76 && text[start + n - 1] == '=';
			start = pos + 1;
		}
	return soft >= 2;
}

/* "=XX" decoded in place where XX is a printable character or a tab (any
 * other byte stays as written: a line stays one line). */
size_t cd_klog_qp_decode(char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '=' && i + 2 < n && (hi = digit_value(s[i + 1], 16)) >= 0 &&
		    (lo = digit_value(s[i + 2], 16)) >= 0) {
			int c = hi * 16 + lo;
			if (c == '\t' || (c >= 0x20 && c < 0x7f)) {
				s[o++] = (char)c;
				i += 2;
				continue;
			}
		}
		s[o++] = s[i];
	}
	return o;
}
