/* SPDX-License-Identifier: MIT */
/* Unit tests of following the kernel log: a regular file and a FIFO under
 * /tmp followed like `tail -F` (appended, cleared, a line cut in two), the
 * real /dev/kmsg read (never written), and the grouping of the watchdog's
 * multi-line report into one event, in the kernel's own format. */
#include "probe/kmsg.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void test_prefix(void)
{
	int fac, lev;
	unsigned long long seq;
	CHECK(cd_kmsg_prefix("4,567,3007005852,-;clocksource: x", &fac, &lev, &seq));
	CHECK_INT(fac, 0);
	CHECK_INT(lev, 4);
	CHECK(seq == 567);
	CHECK(cd_kmsg_prefix("12,9,1,-,caller=T1;hello", &fac, &lev, &seq));
	CHECK_INT(fac, 1); /* a process wrote it (LOG_USER) */
	CHECK_INT(lev, 4);
	CHECK(!cd_kmsg_prefix("[    1.0] clocksource: x", &fac, &lev, &seq));
	CHECK(!cd_kmsg_prefix("4,567", &fac, &lev, &seq));
	CHECK(!cd_kmsg_prefix("", &fac, &lev, &seq));
	CHECK(!cd_kmsg_prefix(" SUBSYSTEM=cpu", &fac, &lev, &seq));
}

static void test_follow_file(void)
{
	char path[128], line[256];
	snprintf(path, sizeof path, "%s/log", dir);
	unit_put(path, "old line 1\nold line 2\n");
	struct cd_kmsg k;
	CHECK_INT(cd_kmsg_open(&k, path, false), 0);
	CHECK(!k.device);
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 0); /* history skipped */
	unit_append(path, "new 1\nnew");
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 1);
	CHECK_STR(line, "new 1");
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 0); /* "new" waits for its end */
	unit_append(path, " 2\n");
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 1);
	CHECK_STR(line, "new 2");
	/* Cleared (shorter than what was read): from the start again. */
	unit_put(path, "after clear\n");
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 1);
	CHECK_STR(line, "after clear");
	CHECK_INT(k.resets, 1);
	/* Rotated: another file under the name, read from its start. */
	char moved[160];
	snprintf(moved, sizeof moved, "%s.1", path);
	CHECK_INT(rename(path, moved), 0);
	unit_put(path, "rotated and longer than before\n");
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 1);
	CHECK_STR(line, "rotated and longer than before");
	CHECK_INT(k.resets, 2);
	/* A line longer than the caller's buffer is cut, not split. */
	char big[600];
	memset(big, 'x', sizeof big - 2);
	big[sizeof big - 2] = '\n';
	big[sizeof big - 1] = '\0';
	unit_append(path, big);
	unit_append(path, "next\n");
	char small[32];
	CHECK_INT(cd_kmsg_line(&k, small, sizeof small), 1);
	CHECK_INT(strlen(small), 31);
	CHECK_INT(cd_kmsg_line(&k, small, sizeof small), 1);
	CHECK_STR(small, "next");
	cd_kmsg_close(&k);
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), -EBADF);

	/* From the start: the history too. */
	unit_put(path, "a\nb\n");
	CHECK_INT(cd_kmsg_open(&k, path, true), 0);
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 1);
	CHECK_STR(line, "a");
	cd_kmsg_close(&k);
	snprintf(path, sizeof path, "%s/missing", dir);
	CHECK_INT(cd_kmsg_open(&k, path, false), -ENOENT);
}

static void test_follow_fifo(void)
{
	char path[128], line[256];
	snprintf(path, sizeof path, "%s/fifo", dir);
	CHECK_INT(mkfifo(path, 0600), 0);
	struct cd_kmsg k;
	CHECK_INT(cd_kmsg_open(&k, path, false), 0);
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 0); /* no writer: nothing, no block */
	int wfd = open(path, O_WRONLY | O_NONBLOCK);
	CHECK(wfd >= 0);
	CHECK_INT(write(wfd, "one\ntwo\n", 8), 8);
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 1);
	CHECK_STR(line, "one");
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 1);
	CHECK_STR(line, "two");
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 0);
	close(wfd);
	CHECK_INT(cd_kmsg_line(&k, line, sizeof line), 0); /* the writer went away: still no error */
	cd_kmsg_close(&k);
}

static void test_dev_kmsg(void)
{
	/* Read only: records in the /dev/kmsg layout, one a read. */
	struct cd_kmsg k;
	int rc = cd_kmsg_open(&k, NULL, true);
	if (rc == -ENOENT || rc == -EPERM || rc == -EACCES) {
		printf("kmsg: /dev/kmsg not readable here (%s): skipped its test\n", strerror(-rc));
		return;
	}
	CHECK_INT(rc, 0);
	CHECK(k.device);
	char line[1100];
	int fac, lev, records = 0;
	unsigned long long seq, last = 0;
	bool ordered = true;
	for (int i = 0; i < 2000 && cd_kmsg_line(&k, line, sizeof line) == 1; i++)
		if (cd_kmsg_prefix(line, &fac, &lev, &seq)) {
			ordered &= records == 0 || seq > last;
			last = seq;
			records++;
		}
	CHECK(records > 0);
	CHECK(ordered);
	cd_kmsg_close(&k);
	CHECK_INT(cd_kmsg_open(&k, NULL, false), 0);   /* at the end: nothing old */
	int old = 0;
	while (cd_kmsg_line(&k, line, sizeof line) == 1 && old < 100)
		old++;
	CHECK(old < 5); /* only what the kernel logged in the meantime, if anything */
	cd_kmsg_close(&k);
}

/* The kernel's watchdog report, as 6.1 logs it, in /dev/kmsg records. */
static const char *const watchdog[] = {
	"4,567,3007005852,-;clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:",
	"4,568,3007005860,-;clocksource:                       'hpet' wd_nsec: 511989875 wd_now: 5d4e0a5b wd_last: 5ce1f5d9 mask: ffffffff",
	"4,569,3007005870,-;clocksource:                       'tsc' cs_nsec: 512000468 cs_now: 6a1f6e0d3bc cs_last: 6a1c6b4c05e mask: ffffffffffffffff",
	" SUBSYSTEM=cpu",
	"4,570,3007005875,-;clocksource:                       Clocksource 'tsc' skewed 10593 ns (0 ms) over watchdog 'hpet' interval of 511989875 ns (511 ms)",
	"4,571,3007005880,-;clocksource:                       'tsc' is current clocksource.",
};

static void test_group_watchdog(void)
{
	struct cd_kgroup g;
	struct cd_kgroup_event ev[8];
	CHECK_INT(cd_kgroup_init(&g), 0);
	size_t last = sizeof watchdog / sizeof watchdog[0] - 1;
	for (size_t i = 0; i < last; i++)
		CHECK_INT(cd_kgroup_feed(&g, watchdog[i], 10.0 + 0.001 * (double)i, ev, 8), 0);
	CHECK(cd_kgroup_due(&g, 10.1) > 0.8);
	CHECK_INT(cd_kgroup_flush(&g, 10.5, false, ev, 8), 0); /* its second is not over */
	/* Another line that quotes the report's end does not end it. */
	CHECK_INT(cd_kgroup_feed(&g, "6,900,3007005879,-;usb 1-1: Product: 'tsc' is current clocksource.", 10.55, ev, 8),
	          0);
	/* "'tsc' is current clocksource." ends the report: out at once. */
	CHECK_INT(cd_kgroup_feed(&g, watchdog[last], 10.6, ev, 8), 1);
	CHECK_INT(cd_kgroup_feed(&g, "4,572,3007005900,-;tsc: Marking TSC unstable due to clocksource watchdog",
	                         10.6, ev + 1, 7), 1);
	int n = 2;
	CHECK_INT(n, 2);
	CHECK_INT(ev[0].ev.kind, CD_EV_WATCHDOG_SKEW);
	CHECK_STR(ev[0].ev.name, "tsc");
	CHECK_STR(ev[0].ev.name2, "hpet");
	CHECK_INT(ev[0].ev.cpu_a, 1);
	CHECK(ev[0].ev.value == 511989875);
	CHECK(ev[0].ev.value2 == 512000468);
	CHECK(ev[0].ev.wd_cycles == ((0x5d4e0a5bull - 0x5ce1f5d9ull) & 0xffffffffull));
	CHECK_INT(ev[0].facility, 0);
	CHECK_INT(ev[0].level, 4);
	CHECK(ev[0].ev.ts > 3007.0 && ev[0].ev.ts < 3008.0);
	CHECK(strncmp(ev[0].raw, "clocksource: timekeeping watchdog on CPU1:", 42) == 0);
	CHECK(strstr(ev[0].raw, "\nclocksource:                       'hpet' wd_nsec: 511989875") != NULL);
	CHECK(strstr(ev[0].raw, "SUBSYSTEM") == NULL); /* dictionary lines are not the message */
	CHECK(strstr(ev[0].raw, "is current clocksource.") != NULL);
	CHECK_INT(ev[1].ev.kind, CD_EV_TSC_UNSTABLE);
	CHECK_STR(ev[1].ev.name, "clocksource watchdog");
	CHECK_STR(cd_watch_event_type(ev[0].ev.kind), "watchdog-skew");
	CHECK(cd_kgroup_due(&g, 11.0) < 0);

	/* Without its last line, the next event's line completes it. */
	for (size_t i = 0; i < 3; i++)
		CHECK_INT(cd_kgroup_feed(&g, watchdog[i], 15.0, ev, 8), 0);
	CHECK_INT(cd_kgroup_feed(&g, "4,573,3007006000,-;clocksource: Switched to clocksource hpet", 15.1, ev, 8), 2);
	CHECK_INT(ev[0].ev.kind, CD_EV_WATCHDOG_SKEW);
	CHECK_INT(ev[1].ev.kind, CD_EV_CS_SWITCHED);

	/* Alone, the report is complete when its second is over. */
	for (size_t i = 0; i < 3; i++)
		CHECK_INT(cd_kgroup_feed(&g, watchdog[i], 20.0, ev, 8), 0);
	CHECK_INT(cd_kgroup_flush(&g, 21.01, false, ev, 8), 1);
	CHECK(ev[0].ev.value == 511989875 && ev[0].ev.value2 == 512000468);
	CHECK_INT(cd_kgroup_flush(&g, 30, true, ev, 8), 0);

	/* Written by a process to /dev/kmsg (facility user), one write a line. */
	static const char *const fake[] = {
		"12,900,5000000,-;clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:",
		"12,901,5000100,-;clocksource:                       'hpet' wd_nsec: 500000000 wd_now: 10 wd_last: 5 mask: ffffffff",
		"12,902,5000200,-;clocksource:                       'tsc' cs_nsec: 1000000000 cs_now: 20 cs_last: 10 mask: ffffffffffffffff",
	};
	for (size_t i = 0; i < 3; i++)
		CHECK_INT(cd_kgroup_feed(&g, fake[i], 40.0, ev, 8), 0);
	CHECK_INT(cd_kgroup_flush(&g, 40.0, true, ev, 8), 1);
	CHECK_INT(ev[0].facility, 1);
	CHECK(ev[0].ev.value == 500000000 && ev[0].ev.value2 == 1000000000);
	CHECK(ev[0].ev.cs_cycles == 0x10); /* hexadecimal, as printed */
	cd_kgroup_free(&g);
}

static void test_group_other(void)
{
	struct cd_kgroup g;
	struct cd_kgroup_event ev[8];
	CHECK_INT(cd_kgroup_init(&g), 0);
	/* One line, one event, at once. */
	CHECK_INT(cd_kgroup_feed(&g, "6,10,100,-;clocksource: Switched to clocksource hpet", 1, ev, 8), 1);
	CHECK_INT(ev[0].ev.kind, CD_EV_CS_SWITCHED);
	CHECK_STR(ev[0].ev.name, "hpet");
	CHECK_STR(ev[0].raw, "clocksource: Switched to clocksource hpet");
	/* No clocksource news: nothing. */
	CHECK_INT(cd_kgroup_feed(&g, "6,11,100,-;tsc: Refined TSC clocksource calibration: 2596.130 MHz", 1, ev, 8), 0);
	CHECK_INT(cd_kgroup_feed(&g, "6,12,100,-;usb 1-1: new device", 1, ev, 8), 0);
	CHECK_INT(cd_kgroup_feed(&g, "", 1, ev, 8), 0);
	/* The sync test's two lines make one tsc-warp, with the CPUs. */
	CHECK_INT(cd_kgroup_feed(&g, "4,13,100,-;TSC synchronization [CPU#0 -> CPU#3]:", 2, ev, 8), 0);
	CHECK_INT(cd_kgroup_feed(&g, "4,14,100,-;Measured 6817 cycles TSC warp between CPUs, turning off TSC clock.",
	                         2, ev, 8), 1);
	CHECK_INT(ev[0].ev.kind, CD_EV_TSC_WARP);
	CHECK(ev[0].ev.value == 6817);
	CHECK_INT(ev[0].ev.cpu_a, 0);
	CHECK_INT(ev[0].ev.cpu_b, 3);
	CHECK(cd_kgroup_due(&g, 2) < 0);
	/* TSC ADJUST, dmesg layout (no kmsg prefix: facility unknown). */
	CHECK_INT(cd_kgroup_feed(&g, "[    0.5] [Firmware Bug]: TSC ADJUST differs: CPU2 0 --> -1234. Restoring",
	                         3, ev, 8), 1);
	CHECK_INT(ev[0].ev.kind, CD_EV_TSC_ADJUST);
	CHECK_INT(ev[0].facility, -1);
	CHECK_INT(ev[0].ev.cpu_a, 2);
	/* Binary junk never crashes and is no event. */
	char junk[300];
	for (size_t i = 0; i < sizeof junk - 1; i++)
		junk[i] = (char)(1 + (i * 37) % 250);
	junk[sizeof junk - 1] = '\0';
	CHECK(cd_kgroup_feed(&g, junk, 4, ev, 8) >= 0);
	/* max bounds what comes out. */
	CHECK_INT(cd_kgroup_feed(&g, "6,20,100,-;clocksource: Switched to clocksource tsc", 5, ev, 0), 0);
	cd_kgroup_free(&g);
	CHECK(cd_watch_event_type(CD_EV_TSC_FREQ) == NULL);
	CHECK(cd_watch_event_type(CD_EV_WD_NOISE) == NULL);
	CHECK_STR(cd_watch_event_type(CD_EV_TSC_ADJUST), "tsc-adjust");
}

int main(void)
{
	unit_tempdir(dir, sizeof dir, "kmsg");
	test_prefix();
	test_follow_file();
	test_follow_fifo();
	test_dev_kmsg();
	test_group_watchdog();
	test_group_other();
	return unit_done("kmsg");
}
