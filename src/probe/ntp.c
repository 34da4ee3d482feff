/*
 * ntp.c: is the kernel's clock disciplined by NTP or chrony?
 *
 * adjtimex(2) with modes = 0 only reads.  The kernel reports TIME_ERROR and
 * sets STA_UNSYNC when no daemon has told it the clock is synchronised; that
 * is the same test ntp_gettime and node_exporter's timex collector use.
 */
#include "probe/probe.h"

#include <string.h>
#include <sys/timex.h>

void cd_ntp_live(struct cd_ntp *ntp)
{
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	memset(ntp, 0, sizeof *ntp);
	int state = adjtimex(&tx);
	if (state < 0)
		return;
	ntp->have = true;
	ntp->state = state;
	ntp->status = tx.status;
	ntp->synchronized = state != TIME_ERROR && !(tx.status & STA_UNSYNC);
	/* freq is in ppm with a 16-bit fraction. */
	ntp->freq_ppm = (double)tx.freq / 65536.0;
	ntp->maxerror_us = tx.maxerror;
	ntp->esterror_us = tx.esterror;
}
