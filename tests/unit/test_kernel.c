/* SPDX-License-Identifier: MIT */
/* Unit tests of kernel.c, clocksource.c and os.c: release numbers, the
 * command line, the clocksource files and the distribution. */
#include "probe/probe.h"
#include "unit.h"

#include <stdlib.h>

static void release(const char *s, int maj, int min, int patch)
{
	struct cd_kernel k;
	memset(&k, 0, sizeof k);
	int rc = cd_parse_kernel_release(s, &k);
	CHECK_INT(rc, maj < 0 ? -22 : 0);
	CHECK_INT(k.ver_major, maj);
	CHECK_INT(k.ver_minor, min);
	CHECK_INT(k.ver_patch, patch);
}

static void test_release(void)
{
	release("6.1.0-56-amd64", 6, 1, 0);
	release("3.2.0-4-686-pae", 3, 2, 0);
	release("3.11-0.bpo.2-686-pae", 3, 11, 0);
	release("2.6.32-358.18.1.el6.x86_64", 2, 6, 32);
	release("4.4.190", 4, 4, 190);
	release("6.18.44-fc-v669", 6, 18, 44);
	release("", -1, -1, -1);
	release("linux", -1, -1, -1);
	release("6", -1, -1, -1);
	release("99999999999.1", -1, -1, -1);
	release("6.x", -1, -1, -1);

	struct cd_kernel k;
	memset(&k, 0, sizeof k);
	k.ver_major = -1;
	CHECK_INT(cd_kernel_compare(&k, 3, 3, 0), FC_KVER_UNKNOWN);
	cd_parse_kernel_release("3.2.0-4-686-pae", &k);
	CHECK_INT(cd_kernel_compare(&k, 3, 3, 0), FC_KVER_OLDER);
	CHECK_INT(cd_kernel_compare(&k, 3, 2, 0), FC_KVER_SAME_OR_NEWER);
	CHECK_INT(cd_kernel_compare(&k, 2, 6, 32), FC_KVER_SAME_OR_NEWER);
	cd_parse_kernel_release("4.4.189", &k);
	CHECK_INT(cd_kernel_compare(&k, 4, 4, 190), FC_KVER_OLDER);
	CHECK_INT(cd_kernel_compare(&k, 4, 4, 189), FC_KVER_SAME_OR_NEWER);
}

static void test_cmdline(void)
{
	struct cd_kernel k;
	memset(&k, 0, sizeof k);
	cd_parse_cmdline("BOOT_IMAGE=/boot/vmlinuz ro tsc=reliable quiet clocksource=acpi_pm", &k);
	CHECK(k.cmd_tsc_reliable);
	CHECK_STR(k.cmd_clocksource, "acpi_pm");
	CHECK(!k.cmd_notsc && !k.cmd_tsc_unstable);

	memset(&k, 0, sizeof k);
	cd_parse_cmdline("tsc=nowatchdog tsc=noirqtime notsc no-kvmclock no-kvmclock-vsyscall clocksource_failover=acpi_pm", &k);
	CHECK(k.cmd_tsc_nowatchdog && k.cmd_tsc_noirqtime && !k.cmd_tsc_reliable);
	CHECK(!k.cmd_tsc_ignored[0]);
	CHECK(k.cmd_notsc && k.cmd_no_kvmclock && k.cmd_no_kvmclock_vsyscall && k.cmd_clocksource_failover);

	/* acpi=off takes away the HPET and the PM timer; the others only the HPET */
	memset(&k, 0, sizeof k);
	cd_parse_cmdline("ro acpi=off nohpet", &k);
	CHECK(k.cmd_acpi_off && k.cmd_nohpet);
	memset(&k, 0, sizeof k);
	cd_parse_cmdline("acpi=noirq hpet=disable acpi=offx", &k);
	CHECK(!k.cmd_acpi_off && k.cmd_nohpet);

	/* The kernel compares the whole value: a comma list sets nothing. */
	memset(&k, 0, sizeof k);
	cd_parse_cmdline("tsc=reliable,noirqtime", &k);
	CHECK(!k.cmd_tsc_reliable && !k.cmd_tsc_noirqtime);
	CHECK_STR(k.cmd_tsc_ignored, "reliable,noirqtime");
	memset(&k, 0, sizeof k);
	cd_parse_cmdline("tsc=noirqtime,reliable", &k);
	CHECK(!k.cmd_tsc_reliable && k.cmd_tsc_noirqtime); /* noirqtime is a prefix test */

	/* The last clocksource= wins, as in the kernel. */
	memset(&k, 0, sizeof k);
	cd_parse_cmdline("clocksource=hpet clocksource=tsc", &k);
	CHECK_STR(k.cmd_clocksource, "tsc");

	/* The deprecated clock= sets the same choice (kernel/time/clocksource.c
	 * boot_override_clock(): pmtmr is acpi_pm), the last of either winning;
	 * the word that set it is kept as written, to be removed by name. */
	static const struct { const char *cmdline, *name, *word; } clock[] = {
		{ "console=ttyS0 clock=acpi_pm loglevel=7", "acpi_pm", "clock=acpi_pm" },
		{ "clocksource=tsc clock=pmtmr", "acpi_pm", "clock=pmtmr" },
		{ "clock=pmtmr clocksource=hpet noclock=tsc", "hpet", "clocksource=hpet" },
	};
	for (size_t i = 0; i < sizeof clock / sizeof clock[0]; i++) {
		memset(&k, 0, sizeof k);
		cd_parse_cmdline(clock[i].cmdline, &k);
		CHECK_STR(k.cmd_clocksource, clock[i].name);
		CHECK_STR(k.cmd_clocksource_word, clock[i].word);
	}

	/* Words that only look alike, and what follows "--" (init's arguments). */
	memset(&k, 0, sizeof k);
	cd_parse_cmdline("notsc2 xtsc=reliable mytsc=unstable init=/x -- tsc=reliable notsc", &k);
	CHECK(!k.cmd_notsc && !k.cmd_tsc_reliable && !k.cmd_tsc_unstable);

	/* Quoted values hold spaces. */
	memset(&k, 0, sizeof k);
	cd_parse_cmdline("foo=\"a tsc=reliable b\" tsc=unstable", &k);
	CHECK(!k.cmd_tsc_reliable && k.cmd_tsc_unstable);

	/* An enormous clocksource name is cut, not overflowed. */
	char big[4096];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	memcpy(big, "clocksource=", 12);
	memset(&k, 0, sizeof k);
	cd_parse_cmdline(big, &k);
	CHECK_INT(strlen(k.cmd_clocksource), CD_NAME_MAX - 1);

	memset(&k, 0, sizeof k);
	cd_parse_cmdline("", &k);
	cd_parse_cmdline("\"unterminated", &k);
	CHECK(!k.cmd_clocksource[0]);
}

static void test_clocksource_files(void)
{
	struct cd_clocksource cs;
	memset(&cs, 0, sizeof cs);
	CHECK_INT(cd_parse_clocksource_list("tsc hpet acpi_pm \n", &cs), 3);
	CHECK_STR(cs.available[2], "acpi_pm");
	CHECK(cd_clocksource_available(&cs, "hpet"));
	CHECK(!cd_clocksource_available(&cs, "kvm-clock"));
	CHECK_INT(cd_parse_clocksource_current("tsc-early\n", &cs), 0);
	CHECK_STR(cs.current, "tsc-early");

	memset(&cs, 0, sizeof cs);
	CHECK_INT(cd_parse_clocksource_list("", &cs), -22);
	CHECK(!cs.have_available);
	CHECK_INT(cd_parse_clocksource_current(" \n", &cs), -22);
	CHECK(!cs.have_current);
	/* Bytes that no clocksource name has are skipped, not trusted. */
	CHECK_INT(cd_parse_clocksource_list("hp\x01" "et tsc \xff\xfe", &cs), 1);
	CHECK_STR(cs.available[0], "tsc");
	/* More names than fit. */
	char many[2048] = "";
	for (int i = 0; i < 40; i++)
		strcat(many, "cs ");
	CHECK_INT(cd_parse_clocksource_list(many, &cs), CD_MAX_CLOCKSOURCES);
	/* A name too long to keep. */
	char longname[200];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	CHECK_INT(cd_parse_clocksource_current(longname, &cs), -22);
}

/* The distribution, read into a blank cd_os: from os-release's text, from
 * the kernel's release, or from a file older than os-release. */
static struct cd_os os;

static const struct cd_os *os_release(const char *text)
{
	memset(&os, 0, sizeof os);
	cd_parse_os_release(text, &os);
	return &os;
}

static const struct cd_os *guess(const char *release)
{
	memset(&os, 0, sizeof os);
	cd_os_guess_from_release(release, &os);
	return &os;
}

static const struct cd_os *legacy(const char *path, const char *text)
{
	memset(&os, 0, sizeof os);
	cd_parse_os_legacy(path, text, &os);
	return &os;
}

static void test_os(void)
{
	const struct cd_os *o;
	o = os_release("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nID=debian\n");
	CHECK_INT(o->family, CD_OS_DEBIAN);
	CHECK_STR(o->id, "debian");
	CHECK_STR(o->pretty, "Debian GNU/Linux 12 (bookworm)");
	CHECK_INT(os_release("ID=\"almalinux\"\nID_LIKE=\"rhel centos fedora\"\n")->family, CD_OS_REDHAT);
	CHECK_INT(os_release("ID=pop\nID_LIKE=\"ubuntu debian\"\n")->family, CD_OS_DEBIAN);
	CHECK_INT(os_release("ID=opensuse-leap\nID_LIKE=\"suse opensuse\"\n")->family, CD_OS_SUSE);
	CHECK_INT(os_release("garbage\n\n=\nID\n")->family, CD_OS_UNKNOWN);
	CHECK_INT(guess("2.6.32-358.18.1.el6.x86_64")->family, CD_OS_REDHAT);
	CHECK_INT(guess("3.2.0-4-686-pae")->family, CD_OS_DEBIAN);
	CHECK_INT(guess("6.18.44-fc-v669")->family, CD_OS_UNKNOWN);
	CHECK(!os.guessed);

	/* The release, for advice of its era */
	o = os_release("ID=ubuntu\nVERSION_ID=\"18.04\"\n");
	CHECK_STR(o->version, "18.04");
	CHECK(!o->guessed);
	CHECK_STR(os_release("ID=ubuntu\nVERSION_ID=\"18.04\033[31m\"\n")->version, "");   /* not a release: never printed */
	o = guess("2.6.32-358.18.1.el6.x86_64");
	CHECK_STR(o->id, "rhel");
	CHECK_STR(o->version, "6");
	CHECK(o->guessed);
	o = guess("3.2.0-4-686-pae");
	CHECK(o->guessed && !o->version[0]);

	/* Before os-release: the distribution's own files */
	o = legacy("/etc/lsb-release", "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=8.04\nDISTRIB_CODENAME=hardy\n"
	           "DISTRIB_DESCRIPTION=\"Ubuntu 8.04.4 LTS\"\n");
	CHECK_INT(o->family, CD_OS_DEBIAN);
	CHECK_STR(o->id, "ubuntu");
	CHECK_STR(o->version, "8.04");
	CHECK_STR(o->pretty, "Ubuntu 8.04.4 LTS");
	o = legacy("/etc/debian_version", "7.11\n");
	CHECK_STR(o->id, "debian");
	CHECK_STR(o->version, "7");
	o = legacy("/etc/debian_version", "lenny/sid\n");
	CHECK_INT(o->family, CD_OS_DEBIAN);
	CHECK_STR(o->version, "");
	o = legacy("/etc/redhat-release", "CentOS release 6.5 (Final)\n");
	CHECK_INT(o->family, CD_OS_REDHAT);
	CHECK_STR(o->id, "centos");
	CHECK_STR(o->version, "6");
	CHECK_STR(o->pretty, "CentOS release 6.5 (Final)");
	CHECK_STR(legacy("/etc/redhat-release", "")->version, "");
	o = legacy("/etc/SuSE-release", "SUSE Linux Enterprise Server 11 (x86_64)\nVERSION = 11\nPATCHLEVEL = 4\n");
	CHECK_INT(o->family, CD_OS_SUSE);
	CHECK_STR(o->id, "sles");
	CHECK_STR(o->version, "11");
}

int main(void)
{
	test_release();
	test_cmdline();
	test_clocksource_files();
	test_os();
	return unit_done("kernel");
}
