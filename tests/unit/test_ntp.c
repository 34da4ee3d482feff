/* SPDX-License-Identifier: MIT */
/* Unit tests of ntp.c: a snapshot's adjtimex.txt, as `snapshot` writes it
 * and as `adjtimex --print` prints it, read back into the NTP facts that
 * the rule ntp-unsynchronized uses; malformed files refused. */
#include "probe/probe.h"
#include "unit.h"

#include <errno.h>
#include <string.h>

/* `adjtimex --print` on an unsynchronised machine (the adjtimex package's
 * format: the return value line only when it is not 0). */
static const char unsynced[] =
	"         mode: 0\n"
	"       offset: 0\n"
	"    frequency: -1114112\n"
	"     maxerror: 16000000\n"
	"     esterror: 16000000\n"
	"       status: 64\n"
	"time_constant: 2\n"
	"    precision: 1\n"
	"    tolerance: 32768000\n"
	"         tick: 10000\n"
	"     raw time:  1795608148s 412345us = 1795608148.412345\n"
	" return value = 5\n";

/* The same on a machine chrony disciplines: status 0x2001 (STA_PLL,
 * STA_NANO), TIME_OK, so no return value line. */
static const char synced[] =
	"         mode: 0\n"
	"       offset: 1234\n"
	"    frequency: 655360\n"
	"     maxerror: 4500\n"
	"     esterror: 12\n"
	"       status: 8193\n"
	"time_constant: 6\n"
	"     raw time:  1795608148s 412345us = 1795608148.412345\n";

static void test_parse(void)
{
	struct cd_ntp n;
	CHECK(cd_parse_adjtimex_txt(unsynced, &n) == 0);
	CHECK(n.have && !n.synchronized);
	CHECK(n.state == 5 && n.status == 64);
	CHECK(n.freq_ppm == -17.0 && n.maxerror_us == 16000000 && n.esterror_us == 16000000);
	CHECK(cd_parse_adjtimex_txt(synced, &n) == 0);
	CHECK(n.have && n.synchronized && n.state == 0 && n.status == 8193 && n.freq_ppm == 10.0);
	/* STA_UNSYNC alone (state TIME_OK) is unsynchronised too. */
	CHECK(cd_parse_adjtimex_txt("status: 64\n", &n) == 0 && n.have && !n.synchronized);
	/* TIME_ERROR alone too. */
	CHECK(cd_parse_adjtimex_txt("status: 0\nreturn value = 5\n", &n) == 0 && !n.synchronized);
	CHECK(cd_parse_adjtimex_txt("status: 0\r\n", &n) == 0 && n.synchronized);
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"", "\n\n", "garbage", "frequency: 5\n", "status:\n", "status: 64 (0x40)\n", "status: -1\n",
		"status: 99999999999999999999999\n", "status: 64\nreturn value = 9\n",
		"status: 64\nreturn value = -1\n", "statusx: 64\n", "# status: 64 is what it said\n",
		"status: 0x40\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct cd_ntp n;
		memset(&n, 0xa5, sizeof n);
		CHECK(cd_parse_adjtimex_txt(bad[i], &n) == -EINVAL);
		CHECK(!n.have);
	}
}

/* What snapshot writes, check reads back as it was. */
static void test_round_trip(void)
{
	struct cd_ntp in, out;
	CHECK(cd_parse_adjtimex_txt(unsynced, &in) == 0);
	char buf[512];
	int n = cd_format_adjtimex_txt(&in, buf, sizeof buf);
	CHECK(n > 0 && strstr(buf, " return value = 5\n") != NULL);
	CHECK(cd_parse_adjtimex_txt(buf, &out) == 0);
	CHECK(memcmp(&in, &out, sizeof in) == 0);
	CHECK(cd_parse_adjtimex_txt(synced, &in) == 0);
	n = cd_format_adjtimex_txt(&in, buf, sizeof buf);
	CHECK(n > 0 && strstr(buf, "return value") == NULL);
	CHECK(cd_parse_adjtimex_txt(buf, &out) == 0 && out.synchronized && out.status == 8193);
	CHECK(cd_format_adjtimex_txt(&in, buf, 10) == -ENOSPC);
	struct cd_ntp none = { .have = false };
	CHECK(cd_format_adjtimex_txt(&none, buf, sizeof buf) == -ENODATA);
	/* This machine's own state, through the file. */
	struct cd_ntp live;
	cd_ntp_live(&live);
	if (live.have) {
		CHECK(cd_format_adjtimex_txt(&live, buf, sizeof buf) > 0);
		CHECK(cd_parse_adjtimex_txt(buf, &out) == 0);
		CHECK(out.synchronized == live.synchronized && out.state == live.state && out.status == live.status);
	}
}

int main(void)
{
	test_parse();
	test_refused();
	test_round_trip();
	return unit_done("ntp");
}
