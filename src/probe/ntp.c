/* SPDX-License-Identifier: MIT */
/*
 * ntp.c: is the kernel's clock disciplined by NTP or chrony?
 *
 * adjtimex(2) with modes = 0 only reads.  The kernel reports TIME_ERROR and
 * sets STA_UNSYNC when no daemon has told it the clock is synchronised; that
 * is the same test ntp_gettime and node_exporter's timex collector use.
 *
 * A snapshot cannot call adjtimex on the machine it came from, so
 * `snapshot` saves what the call returned as adjtimex.txt, in the format of
 * `adjtimex --print` (the adjtimex package): a hand-made snapshot can
 * include that command's output, and `check --root` reads either.
 */
#include "probe/probe.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>

/* The facts from what adjtimex returned: one derivation for the live call
 * and the saved file. */
static void ntp_from(struct cd_ntp *ntp, int state, long status, long freq, long maxerror, long esterror)
{
	ntp->have = true;
	ntp->state = state;
	ntp->status = status;
	ntp->synchronized = state != TIME_ERROR && !(status & STA_UNSYNC);
	/* freq is in ppm with a 16-bit fraction. */
	ntp->freq_ppm = (double)freq / 65536.0;
	ntp->maxerror_us = maxerror;
	ntp->esterror_us = esterror;
}

void cd_ntp_live(struct cd_ntp *ntp)
{
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	memset(ntp, 0, sizeof *ntp);
	int state = adjtimex(&tx);
	if (state < 0)
		return;
	ntp_from(ntp, state, tx.status, tx.freq, tx.maxerror, tx.esterror);
}

int cd_format_adjtimex_txt(const struct cd_ntp *ntp, char *buf, size_t cap)
{
	if (!ntp->have)
		return -ENODATA;
	/* The fields adjtimex --print writes that check reads; the return value
	 * line only when it is not 0, as that command does. */
	int n = snprintf(buf, cap,
	                 "    frequency: %ld\n"
	                 "     maxerror: %ld\n"
	                 "     esterror: %ld\n"
	                 "       status: %ld\n",
	                 (long)(ntp->freq_ppm * 65536.0), ntp->maxerror_us, ntp->esterror_us, ntp->status);
	if (n >= 0 && (size_t)n < cap && ntp->state != 0)
		n += snprintf(buf + n, cap - (size_t)n, " return value = %d\n", ntp->state);
	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}

/* "NAME: NUMBER" or "NAME = NUMBER" on a line of its own, leading blanks
 * allowed; *found set when the line is there and its number is sound. */
static long field(const char *text, const char *name, bool *found)
{
	size_t nl = strlen(name);
	*found = false;
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *p = l;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, name, nl) != 0)
			continue;
		p += nl;
		while (*p == ' ')
			p++;
		if (*p != ':' && *p != '=')
			continue;
		char *end;
		errno = 0;
		long v = strtol(p + 1, &end, 10);
		while (*end == ' ' || *end == '\t' || *end == '\r')
			end++;
		if (errno || end == p + 1 || (*end && *end != '\n'))
			return 0;
		*found = true;
		return v;
	}
	return 0;
}

int cd_parse_adjtimex_txt(const char *text, struct cd_ntp *ntp)
{
	memset(ntp, 0, sizeof *ntp);
	bool have_status, have_state, f1, f2, f3;
	long status = field(text, "status", &have_status);
	long state = field(text, "return value", &have_state);
	long freq = field(text, "frequency", &f1);
	long maxerror = field(text, "maxerror", &f2);
	long esterror = field(text, "esterror", &f3);
	/* The status is the fact; a missing return value is 0 (TIME_OK), as
	 * adjtimex --print leaves it out then. */
	if (!have_status || status < 0 || status > INT_MAX || state < 0 || state > TIME_ERROR)
		return -EINVAL;
	ntp_from(ntp, (int)state, status, f1 ? freq : 0, f2 ? maxerror : 0, f3 ? esterror : 0);
	return 0;
}
