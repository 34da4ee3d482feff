/* SPDX-License-Identifier: MIT */
/* ntp-synced: tell the kernel its clock is synchronized, as chronyd or ntpd
 * does once it has a good source: STA_UNSYNC cleared, small error bounds.
 * The lab's guests have no network and so no NTP daemon; this stands in for
 * one, so that a guest can show `clockdoctor check` ok, and says what it
 * did.  adjtimex(2) only: the time itself is not touched. */
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>

int main(void)
{
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	tx.modes = ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR;
	tx.status = STA_PLL;
	tx.maxerror = 1000;  /* us: the kernel adds 500 us a second, UNSYNC past 16 s */
	tx.esterror = 100;
	if (adjtimex(&tx) < 0) {
		perror("adjtimex");
		return 1;
	}
	memset(&tx, 0, sizeof tx);
	int state = adjtimex(&tx);
	printf("adjtimex: state %d, status 0x%x, maxerror %ld us\n", state, (unsigned)tx.status, tx.maxerror);
	return state == TIME_ERROR || (tx.status & STA_UNSYNC) ? 1 : 0;
}
