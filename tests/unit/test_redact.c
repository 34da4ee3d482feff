/* SPDX-License-Identifier: MIT */
/* Unit tests of redact.c: a real-looking kernel log and command line full
 * of identifiers (this host's name, addresses, MACs, UUIDs, serial
 * numbers, a builder's address) lose every one of them, and keep every
 * line the diagnosis reads as it was. */
#include "util/redact.h"
#include "unit.h"

#include <string.h>
#include <time.h>

static char *redact(struct cd_redact *r, const char *in)
{
	size_t n = 0;
	char *out = cd_redact_text(r, in, strlen(in), &n);
	CHECK(out != NULL && strlen(out) == n);
	return out;
}

static const char log_in[] =
	"[    0.000000] Linux version 6.1.0-56-amd64 (builder@build7.corp.example.net) (gcc-12 (Debian 12.2.0-14)"
	" 12.2.0) #1 SMP PREEMPT_DYNAMIC Debian 6.1.140-1 (2025-05-22)\n"
	"[    0.000000] Command line: BOOT_IMAGE=/vmlinuz-6.1.0-56-amd64 root=UUID=3f1e2d4c-5b6a-4978-8695-a4b3c2d1e0f9 ro"
	" ip=10.20.30.40::10.20.30.1:255.255.255.0:DB1-prod:eth0:off nfsroot=192.168.7.9:/srv/db1-prod quiet\n"
	"[    0.000000] DMI: Dell Inc. PowerEdge R640/0W23H8, BIOS 2.10.2 02/24/2021\n"
	"[    0.270869] tsc: Marking TSC unstable due to TSCs unsynchronized\n"
	"[    0.412001] pci 0000:00:1f.2: [8086:2922] type 00 class 0x010601\n"
	"[    1.002000] e1000e 0000:00:19.0 eth0: (PCI Express:2.5GT/s:Width x1) 00:1e:67:aa:bb:cc\n"
	"[    1.500000] usb 1-1: SerialNumber: 4C530001230825105045\n"
	"[    1.500100] usb 1-2: Serial Number: AB 12 CD\n"
	"[    1.600000] EXT4-fs (sda1): mounted filesystem 3f1e2d4c-5b6a-4978-8695-a4b3c2d1e0f9 with ordered data mode\n"
	"[    2.000000] systemd[1]: Hostname set to <db1-prod.dc2.example.com>.\n"
	"[    3.100000] IPv6: eth0: fe80::21e:67ff:feaa:bbcc%eth0 and 2001:db8::7 dad ok; mapped ::ffff:10.1.2.3\n"
	"[    3.200000] [UFW BLOCK] IN=eth0 OUT= MAC=00:1e:67:aa:bb:cc:52:54:00:12:34:56:08:00 SRC=203.0.113.5 DST=10.20.30.40\n"
	"[    3.300000] nfs: server nas01.dc2.example.com not responding, still trying; db1-prod.\n"
	"[ 3007.005852] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
	"[ 3007.005860] clocksource:                       'hpet' wd_nsec: 511989875 wd_now: 5d4e0a5b wd_last: 5ce1f5d9 mask: ffffffff\n"
	"[ 3007.005900] clocksource: Switched to clocksource hpet\n"
	"[ 3008.000000] Serial: 8250/16550 driver, 4 ports, IRQ sharing enabled\n"
	"[ 3009.000000] Linux version 2.6.32.59-0.7-default (geeko@buildhost) at 23:38:30.408 @0\n"
	"[ 3010.000000] md: PARTUUID=0a1b2c3d-01 and \x1b]0;PWNED\x07 std::vector a::b\n";

static void test_log(void)
{
	struct cd_redact r = { 0 };
	cd_redact_add_name(&r, "db1-prod");
	cd_redact_learn(&r, log_in, sizeof log_in - 1);
	char *out = redact(&r, log_in);
	if (!out)
		return;
	/* Nothing that identifies the machine, its network or its parts is left. */
	static const char *const gone[] = {
		"db1-prod", "DB1-prod", "dc2.example.com", "build7", "builder@", "10.20.30", "192.168.7.9",
		"255.255.255.0", "3f1e2d4c", "00:1e:67", "52:54:00", "4C530001230825105045", "AB 12 CD",
		"fe80", "2001:db8", "10.1.2.3", "203.0.113.5", "0a1b2c3d",
	};
	for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
		if (strstr(out, gone[i])) {
			CHECK(!"an identifier is left");
			fprintf(stderr, "left: %s\n", gone[i]);
		}
	/* In their place, the markers. */
	CHECK(strstr(out, "root=UUID=<uuid> ro ip=<ipv4>::<ipv4>:<ipv4>:<host>:eth0:off nfsroot=<ipv4>:<path> quiet\n"));
	CHECK(strstr(out, "(PCI Express:2.5GT/s:Width x1) <mac>\n"));
	CHECK(strstr(out, "usb 1-1: SerialNumber: <serial>\n"));
	CHECK(strstr(out, "usb 1-2: Serial Number: <serial>\n"));
	CHECK(strstr(out, "mounted filesystem <uuid> with"));
	CHECK(strstr(out, "Hostname set to <<host>>.\n"));
	CHECK(strstr(out, "eth0: <ipv6>%eth0 and <ipv6> dad ok; mapped <ipv6>\n"));
	CHECK(strstr(out, "MAC=<mac> SRC=<ipv4> DST=<ipv4>\n"));
	CHECK(strstr(out, "server <host> not responding, still trying; <host>.\n"));
	CHECK(strstr(out, "(<email>)"));
	CHECK(strstr(out, "md: PARTUUID=<uuid> and"));
	/* What the diagnosis reads, to the byte. */
	static const char *const kept[] = {
		"Linux version 6.1.0-56-amd64 (",
		"BOOT_IMAGE=/vmlinuz-6.1.0-56-amd64 ",
		"[    0.000000] DMI: Dell Inc. PowerEdge R640/0W23H8, BIOS 2.10.2 02/24/2021\n",
		"[    0.270869] tsc: Marking TSC unstable due to TSCs unsynchronized\n",
		"[    0.412001] pci 0000:00:1f.2: [8086:2922] type 00 class 0x010601\n",
		"[ 3007.005852] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:\n",
		"[ 3007.005860] clocksource:                       'hpet' wd_nsec: 511989875 wd_now: 5d4e0a5b wd_last: 5ce1f5d9 mask: ffffffff\n",
		"[ 3007.005900] clocksource: Switched to clocksource hpet\n",
		"[ 3008.000000] Serial: 8250/16550 driver, 4 ports, IRQ sharing enabled\n",
		"Linux version 2.6.32.59-0.7-default (<email>) at 23:38:30.408 @0\n",
		"\x1b]0;PWNED\x07 std::vector a::b\n",   /* bytes kept: the text output sanitises */
	};
	for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
		if (!strstr(out, kept[i])) {
			CHECK(!"a line the diagnosis reads changed");
			fprintf(stderr, "changed: %s\n", kept[i]);
		}
	CHECK(r.count[CD_REDACT_SERIAL] == 2);
	CHECK(r.count[CD_REDACT_UUID] == 3);
	CHECK(r.count[CD_REDACT_EMAIL] == 2);
	free(out);
}

static void test_names(void)
{
	struct cd_redact r = { 0 };
	cd_redact_add_name(&r, "localhost");
	cd_redact_add_name(&r, "(none)");
	cd_redact_add_name(&r, "x");
	cd_redact_add_name(&r, "bad name");
	CHECK(r.n_names == 0);
	cd_redact_add_name(&r, "web3.example.org");
	CHECK(r.n_names == 3);                      /* and web3, and its domain */
	cd_redact_add_name(&r, "WEB3.example.org");
	CHECK(r.n_names == 3);                      /* once */
	char *out = redact(&r, "web3.example.org web3 WEB3.EXAMPLE.ORG mail.example.org example.org web30 xweb3.example.org\n");
	CHECK_STR(out, "<host> <host> <host> <host> <host> web30 <host>\n");
	free(out);
	for (int i = 0; i < 40; i++) {             /* at most CD_REDACT_NAMES, no overflow */
		char n[32];
		snprintf(n, sizeof n, "host%02d", i);
		cd_redact_add_name(&r, n);
	}
	CHECK(r.n_names == CD_REDACT_NAMES);
	/* A learnt name runs only to its closing mark, on its line. */
	struct cd_redact l = { 0 };
	static const char t[] = "Hostname set to <a\nb> Hostname set to <" "Changed host name to 'db9'";
	cd_redact_learn(&l, t, sizeof t - 1);
	CHECK(l.n_names == 1 && strcmp(l.names[0], "db9") == 0);
}

static void test_hostile(void)
{
	struct cd_redact r = { 0 };
	cd_redact_add_name(&r, "db1");
	/* NUL bytes, a word longer than any buffer, separators only, a lone
	 * "SerialNumber:" at the end: no crash, same length where nothing
	 * matched. */
	char big[70000];
	memset(big, 'a', sizeof big);
	memcpy(big + 100, ":::", 3);
	size_t n;
	char *out = cd_redact_text(&r, big, sizeof big, &n);
	CHECK(out && n == sizeof big && memcmp(out, big, n) == 0);
	free(out);
	static const char nul[] = "db1\0db1\0SerialNumber:";
	out = cd_redact_text(&r, nul, sizeof nul - 1, &n);
	CHECK(out && n == 6 + 1 + 6 + 1 + 13 && memcmp(out, "<host>\0<host>\0SerialNumber:", n) == 0);
	free(out);
	out = cd_redact_text(&r, "", 0, &n);
	CHECK(out && n == 0 && out[0] == '\0');
	free(out);
	CHECK_STR(cd_redact_marker(CD_REDACT_N), "<redacted>");
}

/* Redacting twice changes nothing (a marker is never an identifier, and
 * what follows one is read the same way both times). */
static void test_twice(void)
{
	struct cd_redact r = { 0 };
	cd_redact_add_name(&r, "db1-prod");
	cd_redact_learn(&r, log_in, sizeof log_in - 1);
	static const char more[] = "Da@bfe80::1 00:11:22:33:44:55::ffff:1.2.3.4 x<ipv6>SerialNumber:a "
	                           "@SerialNumber:DB1-prod.>00:11:22:33:44:55::SerialNumber:serial=(\n";
	const char *inputs[] = { log_in, more };
	for (int i = 0; i < 2; i++) {
		size_t n1, n2;
		char *once = cd_redact_text(&r, inputs[i], strlen(inputs[i]), &n1);
		char *twice = once ? cd_redact_text(&r, once, n1, &n2) : NULL;
		CHECK(once && twice && n1 == n2 && memcmp(once, twice, n1) == 0);
		free(once);
		free(twice);
	}
}

/* A hostile line of a megabyte, all colons and hex digits, is read in
 * linear time: well under a second here, where reading each start's
 * candidates to the line's end took over a minute. */
static void test_linear(void)
{
	static const char *const pats[] = { "1:", "a:", "1.2.3.4:", "aa:bb:cc:dd:ee:ff:" };
	size_t n = 1u << 20;
	char *big = malloc(n);
	if (!big) {
		CHECK(0);
		return;
	}
	for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
		size_t pl = strlen(pats[p]);
		for (size_t i = 0; i < n; i++)
			big[i] = pats[p][i % pl];
		struct cd_redact r = { 0 };
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		size_t m;
		char *out = cd_redact_text(&r, big, n, &m);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		CHECK(out != NULL);
		CHECK(s < 10.0);
		if (s >= 10.0)
			fprintf(stderr, "1 MiB of \"%s\": %.1f s\n", pats[p], s);
		free(out);
	}
	free(big);
}

/* Identifiers known by where they stand: each planted, each gone, the
 * text around it kept. */
static void test_places(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "Serial\t\t: 100000003a1c8d5e\n", "Serial\t\t: <serial>\n" },
		{ "Revision\t: a02082\nSerial\t\t: 00000000deadbeef\nModel\t\t: Raspberry Pi 3 Model B Rev 1.2\n",
		  "Revision\t: a02082\nSerial\t\t: <serial>\nModel\t\t: Raspberry Pi 3 Model B Rev 1.2\n" },
		{ "[ 0.1] Serial: 8250/16550 driver, 4 ports\n", "[ 0.1] Serial: 8250/16550 driver, 4 ports\n" },
		{ "rd.luks.uuid=luks-3f1e2d4c-5b6a-4978-8695-a4b3c2d1e0f9 quiet",
		  "rd.luks.uuid=<uuid> quiet" },
		{ "/dev/mapper/luks-3f1e2d4c-5b6a-4978-8695-a4b3c2d1e0f9: ok", "/dev/mapper/luks-<uuid>: ok" },
		{ "root=UUID=1A2B-3C4D ro", "root=UUID=<uuid> ro" },
		{ "root=PARTUUID=0a1b2c3d-01 ro", "root=PARTUUID=<uuid> ro" },
		{ "root=PARTUUID=3F1E2D4C-5B6A-4978-8695-A4B3C2D1E0F9 ro", "root=PARTUUID=<uuid> ro" },
		{ "/var/log/journal/0123456789abcdef0123456789abcdef/system.journal",
		  "/var/log/journal/<uuid>/system.journal" },
		{ "cryptdevice=/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_1TB_S467NX0M123456A-part2:cryptroot rw",
		  "cryptdevice=/dev/disk/by-id/nvme-<serial>-part2:cryptroot rw" },
		{ "resume=/dev/disk/by-id/ata-WDC_WD10EZEX-08WN4A0_WD-WCC6Y7HJ1234 ",
		  "resume=/dev/disk/by-id/ata-<serial> " },
		{ "audit: apparmor=\"DENIED\" operation=\"open\" name=\"/home/alice/.mozilla/firefox/x.default/\" pid=1",
		  "audit: apparmor=\"DENIED\" operation=\"open\" name=\"/home/<user>/.mozilla/firefox/x.default/\" pid=1" },
		{ "/var/home/bob.smith/x", "/var/home/<user>/x" },
		{ "nfsroot=192.168.7.9:/srv/nfs/alice,v3,tcp ip=dhcp", "nfsroot=<ipv4>:<path>,v3,tcp ip=dhcp" },
		{ "nfsroot=/exports/carol rw", "nfsroot=<path> rw" },
		{ "link aa-bb-cc-dd-ee-ff up", "link <mac> up" },
		{ "cdp neighbour 0012.7f57.ac80 port", "cdp neighbour <mac> port" },
		{ "[ 9.1] IPv4: martian source 10.0.0.5 from 10.0.0.1, on dev eth0\n"
		  "[ 9.1] ll header: 00000000: ff ff ff ff ff ff 52 54 00 12 34 56 08 00        ......RT..4V..\n",
		  "[ 9.1] IPv4: martian source <ipv4> from <ipv4>, on dev eth0\n[ 9.1] ll header: <mac>\n" },
		{ "ll header: ff:ff:ff:ff:ff:ff:52:54:00:12:34:56:08:00\n", "ll header: <mac>\n" },
	};
	for (size_t i = 0; i < UNIT_COUNT(cases); i++) {
		struct cd_redact r = { 0 };
		unit_case("%s", cases[i].in);
		char *out = redact(&r, cases[i].in);
		CHECK_STR(out, cases[i].out);
		size_t n;
		char *twice = out ? cd_redact_text(&r, out, strlen(out), &n) : NULL;
		CHECK_STR(twice, cases[i].out);
		free(out);
		free(twice);
		unit_case(NULL);
	}
}

int main(void)
{
	test_places();
	test_twice();
	test_linear();
	test_log();
	test_names();
	test_hostile();
	return unit_done("redact");
}
