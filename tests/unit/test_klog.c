/* SPDX-License-Identifier: MIT */
/*
 * test_klog.c: the kernel-log parser against real lines of every kernel
 * generation (from tests/fixtures, from the kernel sources and from logs
 * quoted on the kernel mailing lists), every prefix layout, and bad input;
 * test_klog_events.c: each message only where the kernel puts it.
 * Run from the top of the repository (the fixtures are read relative to it).
 */
#include "klog_check.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/* ---- the prefix layouts ---- */

static void check_switch(const char *text, double ts, bool boot)
{
	const struct cd_event *e = only(text, CD_EV_CS_SWITCHED);
	CHECK_STR(e->name, "hpet");
	CHECK_STR(e->line, "clocksource: Switched to clocksource hpet");
	CHECK(near(e->ts, ts));
	CHECK_INT(L.reaches_boot, boot);
	CHECK_INT(e->cpu_a, -1);
	CHECK_INT(e->value, 0);
	if (!near(e->ts, ts))
		fprintf(stderr, "  ts %f, expected %f for: %s\n", e->ts, ts, text);
}

static void test_layouts(void)
{
	const struct cd_klog *l;

	/* dmesg */
	check_switch("[    0.955003] clocksource: Switched to clocksource hpet\n", 0.955003, true);
	check_switch("[ 3007.007138] clocksource: Switched to clocksource hpet", 3007.007138, false);
	/* syslog(2), `dmesg -r`, and /proc/kmsg */
	check_switch("<6>[    0.955003] clocksource: Switched to clocksource hpet\n", 0.955003, true);
	check_switch("<6>clocksource: Switched to clocksource hpet\n", -1, false);
	/* /dev/kmsg: microseconds; newer kernels add ",caller=T1" */
	check_switch("6,431,955003,-;clocksource: Switched to clocksource hpet\n", 0.955003, true);
	check_switch("6,431,3007007138,-,caller=T1;clocksource: Switched to clocksource hpet\n",
		     3007.007138, false);
	/* journalctl -k -o short-monotonic */
	check_switch("[    0.955003] debian kernel: clocksource: Switched to clocksource hpet\n",
		     0.955003, true);
	/* bare messages (printk.time=0, or grepped) */
	check_switch("clocksource: Switched to clocksource hpet\n", -1, false);
	check_switch("   clocksource: Switched to clocksource hpet   \r\n", -1, false);
	/* /var/log/kern.log, journalctl -k (short), ISO stamps, dmesg -T */
	check_switch("May  6 11:52:52 frontendlivingroom kernel: [26977.145667] clocksource: "
		     "Switched to clocksource hpet\n", 26977.145667, false);
	check_switch("Sep 11 07:03:06 kernel: clocksource: Switched to clocksource hpet\n", -1, false);
	check_switch("Sep 11 07:03:06 myhost kernel: clocksource: Switched to clocksource hpet", -1, false);
	check_switch("2023-09-11T07:03:06,123456+02:00 clocksource: Switched to clocksource hpet", -1, false);
	check_switch("2023-09-11T07:03:06.123456+0200 myhost kernel: clocksource: Switched to "
		     "clocksource hpet", -1, false);
	check_switch("[Mon Sep 11 07:03:06 2023] clocksource: Switched to clocksource hpet", -1, false);
	/* CONFIG_PRINTK_CALLER */
	check_switch("[    7.544040][  T236] clocksource: Switched to clocksource hpet", 7.544040, false);
	check_switch("[    7.544040] [   C14] clocksource: Switched to clocksource hpet", 7.544040, false);

	/* a paste that lost the line's '[' keeps its time */
	check_switch("   0.955003] clocksource: Switched to clocksource hpet", 0.955003, true);
	/* syslog without its date, as appliances (Synology DSM) log it */
	check_switch("kernel: [  384.258940] clocksource: Switched to clocksource hpet", 384.258940, false);
	/* grep -H over log files: the file's name, a colon, the line */
	check_switch("/var/log/kern.log:Feb  2 17:33:32 proxmox kernel: [    0.182097] clocksource: "
		     "Switched to clocksource hpet", 0.182097, true);
	check_switch("kern.log.1:[  384.258940] clocksource: Switched to clocksource hpet", 384.258940, false);
	check_switch("dmesg.txt:clocksource: Switched to clocksource hpet", -1, false);
	/* ... but a message's own "subsystem: " (a blank after the colon) is
	 * kept, even with a '/' in it: this one is no prefix the kernel prints
	 * the switch with, so nothing counts (stripped, the rest would) */
	l = parse("x86/tsc: Switched to clocksource hpet\n");
	CHECK_INT(l->n_events, 0);

	/* /dev/kmsg dictionary lines are skipped, but counted as lines. */
	l = parse("6,1,2,-;clocksource: Switched to clocksource hpet\n"
					" SUBSYSTEM=acpi\n DEVICE=+acpi:PNP0103:00\n");
	CHECK_INT(l->n_events, 1);
	CHECK_INT(l->lines, 3);
	/* A message that starts with a bracket is no time stamp. */
	l = parse("[Firmware Bug]: TSC ADJUST: CPU0: -281474976710656 force to 0\n");
	CHECK_INT(l->n_events, 1);
	CHECK(near(l->events[0].ts, -1));
	CHECK_STR(l->events[0].line, "[Firmware Bug]: TSC ADJUST: CPU0: -281474976710656 force to 0");
	/* A malformed stamp leaves the line whole: where its message starts is
	 * not known, so it makes no event */
	l = parse("[    0.12x] clocksource: Switched to clocksource hpet\n");
	CHECK_INT(l->n_events, 0);
	CHECK_INT(l->reaches_boot, 0);
	/* A time stamp too long to be one is no prefix either */
	l = parse("[1234567890123.5] clocksource: Switched to clocksource hpet\n");
	CHECK_INT(l->n_events, 0);
	/* Any line before 1 s says the log reaches boot, even with no event. */
	l = parse("[    0.000000] BIOS-provided physical RAM map:\n");
	CHECK_INT(l->reaches_boot, 1);
	CHECK_INT(l->n_events, 0);
	CHECK_INT(l->lines, 1);
}

/* ---- the fixtures ---- */

static void test_fixtures_all(void)
{
	/* Every fixture with a kernel log parses, whatever it holds. */
	DIR *d = opendir("tests/fixtures");
	struct dirent *de;
	int n = 0, n_with_events = 0;
	CHECK(d != NULL);
	while (d && (de = readdir(d))) {
		size_t len;
		char *text = unit_read_fixture(de->d_name, "dmesg.txt", &len);
		if (!text)
			continue;
		parse_n(text, len);
		CHECK(L.lines > 0);
		CHECK(!L.truncated_events);
		/* A healthy machine's log may hold no timekeeping event at all
		 * (a Raspberry Pi's arch_sys_counter, a boot's first lines). */
		n_with_events += L.n_events > 0;
		free(text);
		n++;
	}
	if (d)
		closedir(d);
	CHECK(n >= 9);   /* the corpus only grows: at least the first nine logs */
	CHECK(n_with_events >= n / 2);
}

static void test_fixture_qemu(void)
{
	const struct cd_klog *l = fixture("qemu-tcg-smp2-hpet");
	const struct cd_event *e;
	CHECK_INT(l->lines, 380);
	CHECK_INT(l->reaches_boot, 1);
	CHECK_INT(l->n_events, 11);  /* 6, 4 clocksources registered, the paravirt banner ("bare hardware": TCG has no paravirt backend) */
	CHECK((e = find(l, CD_EV_KERNEL_VERSION, 0)) && strcmp(e->name, "6.1.0-56-amd64") == 0);
	CHECK((e = find(l, CD_EV_DMI, 0)) && strncmp(e->line, "DMI: QEMU Standard PC", 21) == 0);
	CHECK_INT(count(l, CD_EV_CMDLINE), 1);   /* "Kernel command line:" is the same */
	CHECK((e = find(l, CD_EV_CMDLINE, 0)) && strcmp(e->line, "Command line: console=ttyS0 loglevel=4") == 0);
	CHECK((e = find(l, CD_EV_TSC_FREQ, 0)) && e->khz == 2596116 && strcmp(e->name, "detected") == 0);
	CHECK((e = find(l, CD_EV_TSC_UNSTABLE, 0)) && strcmp(e->name, "TSCs unsynchronized") == 0 &&
	      near(e->ts, 0.270869));
	CHECK((e = find(l, CD_EV_CS_SWITCHED, 0)) && strcmp(e->name, "hpet") == 0 && near(e->ts, 0.955003));
	CHECK_INT(count(l, CD_EV_CS_SWITCHED), 1);
	CHECK_INT(count(l, CD_EV_HYPERVISOR), 0);   /* TCG: no hypervisor line */

	l = fixture("qemu-tcg-smp2-acpi_pm-cmdline");
	CHECK_INT(l->lines, 383);
	CHECK((e = find(l, CD_EV_CMDLINE, 0)) && strstr(e->line, "clocksource=acpi_pm"));
	CHECK((e = find(l, CD_EV_TSC_FREQ, 0)) && e->khz == 2596120);
	CHECK((e = find(l, CD_EV_CS_SWITCHED, 0)) && strcmp(e->name, "hpet") == 0);
	CHECK((e = find(l, CD_EV_CS_SWITCHED, 1)) && strcmp(e->name, "acpi_pm") == 0 && near(e->ts, 1.446920));
	CHECK_INT(count(l, CD_EV_TSC_UNSTABLE), 1);

	l = fixture("qemu-tcg-smp1-tsc");
	CHECK_INT(l->lines, 371);
	CHECK((e = find(l, CD_EV_TSC_FREQ, 0)) && e->khz == 2596121);
	CHECK((e = find(l, CD_EV_CS_SWITCHED, 0)) && strcmp(e->name, "tsc-early") == 0);
	CHECK_INT(count(l, CD_EV_TSC_UNSTABLE), 0);
	CHECK_INT(count(l, CD_EV_SCHED_CLOCK_UNSTABLE), 0);   /* "Marking stable" is not */

	l = fixture("qemu-tcg-smp2-tsc-reliable");
	CHECK((e = find(l, CD_EV_TSC_FREQ, 0)) && e->khz == 2596142 && strcmp(e->name, "detected") == 0);
	CHECK((e = find(l, CD_EV_TSC_FREQ, 1)) && e->khz == 2596122 && strcmp(e->name, "refined") == 0 &&
	      near(e->ts, 2.249147));
	CHECK((e = find(l, CD_EV_CS_SWITCHED, 1)) && strcmp(e->name, "tsc") == 0);
	CHECK((e = find(l, CD_EV_CMDLINE, 0)) && strstr(e->line, "tsc=reliable"));
	CHECK_INT(count(l, CD_EV_TSC_UNSTABLE), 0);
}

static void test_fixture_cases(void)
{
	const struct cd_klog *l = fixture("virtualbox-debian7-smp8-acpi_pm-3.2");
	const struct cd_event *e;
	CHECK_INT(l->lines, 4);
	CHECK_INT(l->reaches_boot, 1);
	CHECK_INT(l->n_events, 3);
	CHECK((e = find(l, CD_EV_TSC_SYNC_HEADER, 0)) && e->cpu_a == 0 && e->cpu_b == 1);
	e = UNIT_FOUND(find(l, CD_EV_TSC_WARP, 0));
	CHECK_INT(e->value, 66930);
	CHECK_INT(e->cpu_a, 0);
	CHECK_INT(e->cpu_b, 1);
	CHECK(near(e->ts, 0.144008));
	CHECK_STR(e->line, "Measured 66930 cycles TSC warp between CPUs, turning off TSC clock.");
	CHECK((e = find(l, CD_EV_TSC_UNSTABLE, 0)) && strcmp(e->name, "check_tsc_sync_source failed") == 0);

	l = fixture("virtualbox-debian7-smp8-tsc-reliable-3.11");
	CHECK_INT(l->lines, 1);
	CHECK_INT(l->n_events, 0);   /* "Fast TSC calibration using PIT" is no trouble */
	CHECK_INT(l->reaches_boot, 1);

	l = fixture("vmware-tsc-hypervisor-reliable");
	CHECK_INT(l->n_events, 2);
	CHECK((e = find(l, CD_EV_TSC_FREQ, 0)) && e->khz == 2394000 && strcmp(e->name, "hypervisor") == 0);
	CHECK((e = find(l, CD_EV_TSC_SYNC_SKIPPED, 0)) && near(e->ts, 0.222151));

	l = fixture("kvm-rhel6-kvm-clock-old-watchdog");
	CHECK_INT(l->reaches_boot, 0);
	e = UNIT_FOUND(find(l, CD_EV_CS_UNSTABLE_DELTA, 0));
	CHECK_STR(e->name, "tsc");
	CHECK_INT(e->value, 6824818792LL);
	CHECK(near(e->ts, 2423264.824259));

	l = fixture("server-watchdog-tsc-to-acpi_pm");
	CHECK_INT(l->lines, 6);
	CHECK_INT(l->reaches_boot, 0);
	CHECK_INT(l->n_events, 4);
	e = UNIT_FOUND(find(l, CD_EV_WATCHDOG_SKEW, 0));
	CHECK_INT(e->cpu_a, 0);
	CHECK_STR(e->name, "tsc");
	CHECK_STR(e->name2, "acpi_pm");
	CHECK_INT(e->wd_cycles, 1940462);        /* (0x13f3cd - 0xf657df) & 0xffffff */
	CHECK_INT(e->cs_cycles, 49767030994LL);  /* 0x96685727fda - 0x95aef19df08 */
	CHECK_INT(e->value, 0);                  /* no wd_nsec/cs_nsec before 5.14 */
	CHECK_INT(e->value2, 0);
	CHECK(near(e->ts, 3007.005852));
	CHECK((e = find(l, CD_EV_TSC_UNSTABLE, 0)) && strcmp(e->name, "clocksource watchdog") == 0);
	CHECK((e = find(l, CD_EV_SCHED_CLOCK_UNSTABLE, 0)) && near(e->ts, 3007.006767));
	CHECK((e = find(l, CD_EV_CS_SWITCHED, 0)) && strcmp(e->name, "acpi_pm") == 0);
}

/* ---- the watchdog ---- */

/* Lines that name the machine or its kernel's word size. */
static void test_dmi_and_32bit(void)
{
	const struct cd_klog *l;
	const struct cd_event *e;

	/* drivers/firmware/dmi_scan.c, and lib/dump_stack.c in a backtrace */
	e = only("[    0.000000] DMI: innotek GmbH VirtualBox/VirtualBox, BIOS VirtualBox 12/01/2006\n", CD_EV_DMI);
	CHECK_STR(e->line, "DMI: innotek GmbH VirtualBox/VirtualBox, BIOS VirtualBox 12/01/2006");
	e = only("[ 12.3] CPU: 1 PID: 0 Comm: swapper/1 Not tainted 5.10.0 #1 Hardware name: VMware, Inc. "
	         "VMware Virtual Platform/440BX Desktop Reference Platform, BIOS 6.00 11/12/2020\n", CD_EV_DMI);
	CHECK(strstr(e->line, "Hardware name: VMware, Inc.") != NULL);
	/* "DMI: Memory slots populated" names no machine; "DMI 2.5 present." neither */
	l = parse("[    0.000000] DMI: Memory slots populated: 1/1\n[    0.000000] DMI 2.5 present.\n");
	CHECK_INT(l->n_events, 0);

	/* Only a 32-bit x86 kernel prints these (Ubuntu 8.04 i386, 2008) */
	l = parse("[    0.000000] 3200MB HIGHMEM available.\n"
	          "[    0.000000] 896MB LOWMEM available.\n"
	          "[   15.069155] Compat vDSO mapped to ffffe000.\n");
	CHECK_INT(count(l, CD_EV_X86_32BIT), 3);
	CHECK((e = find(l, CD_EV_X86_32BIT, 0)) && strcmp(e->name, "highmem") == 0);
	CHECK((e = find(l, CD_EV_X86_32BIT, 2)) && strcmp(e->name, "compat-vdso") == 0);
	/* A 64-bit kernel's memory lines are not these */
	l = parse("[    0.000000] Memory: 16314540K/16651036K available (12288K kernel code)\n");
	CHECK_INT(count(l, CD_EV_X86_32BIT), 0);
	/* A decoded backtrace through the 32-bit entry code (lkp-robot, 5.17 i386) */
	e = only("[ 3.256402][ T1] ret_from_fork (arch/x86/entry/entry_32.S:772) \n", CD_EV_X86_32BIT);
	CHECK_STR(e->name, "entry_32");
	/* Each clocksource registered, in both pr_fmt eras; other "mask:" lines are not */
	l = parse("[    0.000000] clocksource: arch_sys_counter: mask: 0xffffffffffffff max_cycles: 0x588fe9dc0, max_idle_ns: 440795202592 ns\n"
	          "[    0.000000] clocksource: tsc-early: mask: 0xffffffffffffffff max_cycles: 0x2e09cc5255e, max_idle_ns: 440795261586 ns\n"
	          "[    0.104000] hpet: mask: 0xffffffff max_cycles: 0xffffffff, max_idle_ns: 133484873504 ns\n"
	          "[    0.200000] clocksource: 'hpet' wd_now: 1 wd_last: 0 mask: ffffffff\n"
	          "[    0.300000] irq: mask: 0x1 something else\n");
	CHECK_INT(count(l, CD_EV_CS_REGISTERED), 3);
	CHECK((e = find(l, CD_EV_CS_REGISTERED, 0)) && strcmp(e->name, "arch_sys_counter") == 0);
	CHECK((e = find(l, CD_EV_CS_REGISTERED, 2)) && strcmp(e->name, "hpet") == 0);
	/* ... and not the 64-bit kernel's, nor its compat entry for 32-bit programs */
	l = parse("[ 5.1] ret_from_fork (arch/x86/entry/entry_64.S:295)\n"
	          "[ 5.2] entry_SYSENTER_compat_after_hwframe (arch/x86/entry/entry_64_compat.S:122)\n");
	CHECK_INT(count(l, CD_EV_X86_32BIT), 0);
}

static void test_watchdog(void)
{
	const struct cd_klog *l;
	const struct cd_event *e;

	/* A header pasted without its time stamp is dated by the first line
	 * of its report that kept one (a Xen dom0 log on lkml, 2023) ... */
	l = parse("timekeeping watchdog on CPU9: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
		  "[  152.557154] clocksource:                       'xen' wd_nsec: 511979417 wd_now: 24e4d7625e wd_last: 24c65332c5 mask: ffffffffffffffff\n"
		  "[  152.566197] clocksource:                       'tsc' cs_nsec: 512468734 cs_now: 9a306c9b808c cs_last: 9a302c9e30ba mask: ffffffffffffffff\n");
	CHECK_INT(count(l, CD_EV_WATCHDOG_SKEW), 1);
	e = find(l, CD_EV_WATCHDOG_SKEW, 0);
	CHECK(e && near(e->ts, 152.557154) && strcmp(e->name2, "xen") == 0 && e->value == 511979417);
	/* ... and a dated header keeps its own time */
	l = parse("[  100.000001] clocksource: timekeeping watchdog on CPU9: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
		  "[  100.000002] clocksource:                       'xen' wd_nsec: 511979417 wd_now: 24e4d7625e wd_last: 24c65332c5 mask: ffffffffffffffff\n");
	e = find(l, CD_EV_WATCHDOG_SKEW, 0);
	CHECK(e && near(e->ts, 100.000001));

	/* 5.14+ with wd_nsec/cs_nsec, 6.x with the "skewed" line (lkml, 2023) */
	l = parse("[  882.011139] clocksource: timekeeping watchdog on CPU1800: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
		  "[  882.011140] clocksource:                       'hpet' wd_nsec: 503029760 wd_now: 48a38f74 wd_last: 47e3ab74 mask: ffffffff\n"
		  "[  882.011140] clocksource:                       'tsc' cs_nsec: 503466648 cs_now: 3224653e7bd cs_last: 3220d4f8d57 mask: ffffffffffffffff\n"
		  "[  882.011141] clocksource:                       Clocksource 'tsc' skewed 436888 ns (0 ms) over watchdog 'hpet' interval of 503029760 ns (503 ms)\n"
		  "[  882.011141] clocksource:                       'tsc' is current clocksource.\n"
		  "[  882.011142] tsc: Marking TSC unstable due to clocksource watchdog\n"
		  "[  882.011150] TSC found unstable after boot, most likely due to broken BIOS. Use 'tsc=unstable'.\n"
		  "[  882.011160] sched_clock: Marking unstable (882011139159, 1572951254)<-(913395032446, -29810979023)\n"
		  "[  882.011170] clocksource: Checking clocksource tsc synchronization from CPU 1800 to CPUs 0,187,336,434,495,644,1719,1792.\n"
		  "[  882.011180] clocksource: Switched to clocksource hpet\n");
	CHECK_INT(l->n_events, 5);
	CHECK_INT(count(l, CD_EV_WATCHDOG_SKEW), 1);
	e = find(l, CD_EV_WATCHDOG_SKEW, 0);
	if (e) {
		CHECK_INT(e->cpu_a, 1800);
		CHECK_STR(e->name, "tsc");
		CHECK_STR(e->name2, "hpet");
		CHECK_INT(e->value, 503029760);
		CHECK_INT(e->value2, 503466648);
		CHECK_INT(e->wd_cycles, 12575744);     /* 0x48a38f74 - 0x47e3ab74 */
		CHECK_INT(e->cs_cycles, 956586598);    /* 0x3224653e7bd - 0x3220d4f8d57 */
		CHECK(strstr(e->line, "Marking clocksource 'tsc' as unstable") != NULL);
		/* The kernel's numbers as printed, one line each, blanks made one */
		CHECK_STR(e->detail,
		          "clocksource: 'hpet' wd_nsec: 503029760 wd_now: 48a38f74 wd_last: 47e3ab74 mask: ffffffff\n"
		          "clocksource: 'tsc' cs_nsec: 503466648 cs_now: 3224653e7bd cs_last: 3220d4f8d57 mask: ffffffffffffffff\n"
		          "clocksource: Clocksource 'tsc' skewed 436888 ns (0 ms) over watchdog 'hpet' interval of 503029760 ns (503 ms)");
	}
	CHECK_INT(count(l, CD_EV_TSC_BROKEN_BIOS), 1);
	CHECK_INT(count(l, CD_EV_SCHED_CLOCK_UNSTABLE), 1);
	CHECK((e = find(l, CD_EV_CS_SWITCHED, 0)) && strcmp(e->name, "hpet") == 0);

	/* 2021 -next trees spelt it "wd_nesc" (lkml); tsc-early watched by refined-jiffies */
	l = parse("[   13.796429] clocksource: timekeeping watchdog on CPU19: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
		  "[   13.797413] clocksource:                       'hpet' wd_nesc: 505192062 wd_now: 10657158 wd_last: fac6f97 mask: ffffffff\n"
		  "[   13.797413] clocksource:                       'tsc' cs_nsec: 504008008 cs_now: 3445570292aa5 cs_last: 344551f0cad6f mask: ffffffffffffffff\n"
		  "[   13.797413] clocksource:                       'tsc' is current clocksource.\n");
	CHECK_INT(l->n_events, 1);
	e = &l->events[0];
	CHECK_INT(e->kind, CD_EV_WATCHDOG_SKEW);
	CHECK_INT(e->cpu_a, 19);
	CHECK_INT(e->value, 505192062);
	CHECK_INT(e->value2, 504008008);
	CHECK_INT(e->wd_cycles, 12124609);
	CHECK_INT(e->cs_cycles, 1360821558);

	/* A counter that wrapped: 'hpet' wd_nsec: 0 (lkml, 2410 s after boot) */
	l = parse("[ 2410.706900] clocksource: timekeeping watchdog on CPU233: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
		  "[ 2410.706920] clocksource:                       'hpet' wd_nsec: 0 wd_now: ffd70be2 wd_last: 40da633b mask: ffffffff\n"
		  "[ 2410.718583] clocksource:                       'tsc' cs_nsec: 471766594285 cs_now: 44f62c184e9 cs_last: 394a7a43771 mask: ffffffffffffffff\n");
	e = find(l, CD_EV_WATCHDOG_SKEW, 0);
	CHECK(e && e->wd_cycles == 3204229287u && e->cs_cycles == 802003176824ULL &&
	      e->value == 0 && e->value2 == 471766594285LL && e->cpu_a == 233);

	/* 4.2 to about 4.18: no CPU in the header (Ubuntu forum, syslog layout) */
	l = parse("May  6 11:52:52 frontendlivingroom kernel: [26977.145667] clocksource: timekeeping watchdog: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
		  "May  6 11:52:52 frontendlivingroom kernel: [26977.145674] clocksource:                       'acpi_pm' wd_now: b79ba9 wd_last: 2b48e8 mask: ffffff\n"
		  "May  6 11:52:52 frontendlivingroom kernel: [26977.145677] clocksource:                       'tsc' cs_now: 144d927c4e cs_last: 140ba6e2a0 mask: ffffffffffffffff\n");
	CHECK_INT(l->n_events, 1);
	e = &l->events[0];
	CHECK_INT(e->cpu_a, -1);
	CHECK_STR(e->name2, "acpi_pm");
	CHECK_INT(e->wd_cycles, 9196225);
	CHECK_INT(e->cs_cycles, 1105959342);
	CHECK(near(e->ts, 26977.145667));

}

/* The watchdog's report in pieces: cut, without its header, alone, twice. */
static void test_watchdog_pieces(void)
{
	const struct cd_klog *l;
	const struct cd_event *e;

	/* Cut after the header: an event, with the counters unknown */
	l = parse("[ 3007.005852] clocksource: timekeeping watchdog on CPU0: Marking clocksource 'tsc' as unstable because the skew is too large:");
	CHECK_INT(l->n_events, 1);
	e = &l->events[0];
	CHECK(e->kind == CD_EV_WATCHDOG_SKEW && e->cpu_a == 0 && strcmp(e->name, "tsc") == 0 &&
	      e->name2[0] == 0 && e->wd_cycles == 0 && e->cs_cycles == 0);
	/* ... or cut inside a continuation line */
	l = parse("clocksource: timekeeping watchdog on CPU3: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
		  "clocksource:                       'hpet' wd_now: 24f422b8 wd_last: 247de");
	CHECK_INT(l->n_events, 1);
	CHECK(l->events[0].wd_cycles == 0 && strcmp(l->events[0].name2, "hpet") == 0);
	l = parse("clocksource:                       'hpet' wd_now: 24f422b8 wd_last: 247dea41 mask: ffffffff\n"
		  "clocksource:                       '");
	CHECK_INT(l->n_events, 1);
	CHECK_INT(l->events[0].wd_cycles, 7747703);

	/* Continuation lines without their header (grepped, or the ring
	 * buffer wrapped) still make one event */
	l = parse("[26.5] clocksource:                       'hpet' wd_now: 24f422b8 wd_last: 247dea41 mask: ffffffff\n"
		  "[26.5] clocksource:                       'tsc' cs_now: 144d927c4e cs_last: 140ba6e2a0 mask: ffffffffffffffff\n");
	CHECK_INT(l->n_events, 1);
	e = &l->events[0];
	CHECK(e->kind == CD_EV_WATCHDOG_SKEW && e->cpu_a == -1 && strcmp(e->name, "tsc") == 0 &&
	      strcmp(e->name2, "hpet") == 0 && e->wd_cycles == 7747703 && e->cs_cycles == 1105959342);
	/* The "skewed" line alone (journalctl -k | grep, 2026) */
	l = parse("Sep 11 07:03:06 kernel: clocksource: Clocksource 'tsc' skewed -485515617 ns (-485 ms) over watchdog 'acpi_pm' interval of 485515617 ns (485 ms)\n");
	e = &l->events[0];
	CHECK(l->n_events == 1 && e->kind == CD_EV_WATCHDOG_SKEW && strcmp(e->name, "tsc") == 0 &&
	      strcmp(e->name2, "acpi_pm") == 0 && e->value == 485515617 && e->value2 == 0);
	CHECK_STR(e->detail, "");   /* its line already quotes it */
	/* Two reports in a row are two events; a header 1 s later is not continued */
	l = parse("[10.0] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
		  "[10.0] clocksource:                       'hpet' wd_now: 10 wd_last: 5 mask: ffffffff\n"
		  "[10.0] clocksource:                       'hpet' wd_now: 30 wd_last: 10 mask: ffffffff\n"
		  "[20.0] clocksource:                       'tsc' cs_now: 30 cs_last: 10 mask: ffffffffffffffff\n");
	CHECK_INT(count(l, CD_EV_WATCHDOG_SKEW), 3);
	CHECK_INT(l->events[0].wd_cycles, 0x10 - 0x5);
	CHECK_INT(l->events[1].wd_cycles, 0x20);
	CHECK(l->events[2].cs_cycles == 0x20 && l->events[2].wd_cycles == 0);
	/* Numbers too big are unknown, not wrapped */
	l = parse("'hpet' wd_nsec: 99999999999999999999 wd_now: 1ffffffffffffffff wd_last: 0 mask: ffffffff\n");
	CHECK(l->n_events == 1 && l->events[0].value == 0 && l->events[0].wd_cycles == 0);
}

static void test_readback(void)
{
	const struct cd_event *e;

	/* 6.2+ (lkml, 2024) */
	e = only("[    5.000000] clocksource: timekeeping watchdog on CPU227: wd-tsc-wd excessive read-back delay of 153560ns vs. limit of 125000ns, wd-wd read-back delay only 11440ns, attempt 3, marking tsc unstable",
		 CD_EV_WD_READBACK_EXCESSIVE);
	CHECK_INT(e->cpu_a, 227);
	CHECK_STR(e->name, "tsc");
	CHECK_INT(e->value, 153560);
	CHECK_INT(e->value2, 125000);
	/* about 6.0-6.1 */
	e = only("clocksource: timekeeping watchdog on CPU13: wd-tsc-wd read-back delay of 1000614ns, attempt 3, marking unstable",
		 CD_EV_WD_READBACK_EXCESSIVE);
	CHECK(e->cpu_a == 13 && strcmp(e->name, "tsc") == 0 && e->value == 1000614 && e->value2 == 0);
	/* 5.14: the watchdog is named (lkml, 2021) */
	e = only("[   29.690760] clocksource: timekeeping watchdog on CPU53: hpet read-back delay of 169583ns, attempt 4, marking unstable",
		 CD_EV_WD_READBACK_EXCESSIVE);
	CHECK(e->cpu_a == 53 && e->name[0] == 0 && strcmp(e->name2, "hpet") == 0 && e->value == 169583);
	/* Noise: nothing demoted */
	e = only("clocksource: timekeeping watchdog on CPU4: hpet wd-wd read-back delay of 246000ns", CD_EV_WD_NOISE);
	CHECK(e->cpu_a == 4 && strcmp(e->name2, "hpet") == 0 && e->value == 246000);
	e = only("clocksource: wd-tsc-wd read-back delay of 289000ns, clock-skew test skipped!", CD_EV_WD_NOISE);
	CHECK(e->cpu_a == -1 && strcmp(e->name, "tsc") == 0 && e->value == 289000);
	e = only("clocksource: timekeeping watchdog on CPU2: hpet retried 2 times before success", CD_EV_WD_NOISE);
	CHECK(e->cpu_a == 2 && strcmp(e->name2, "hpet") == 0);
	e = only("[ 1204.5] clocksource: Long readout interval, skipping watchdog check: cs_nsec: 1000219536 wd_nsec: 1000216820",
		 CD_EV_WD_NOISE);
	CHECK(e->value == 1000216820 && e->value2 == 1000219536);
}

static void test_old_watchdog(void)
{
	/* 2.6/3.x, value may be negative (Ubuntu forum, 2008) */
	const struct cd_event *e = only("Clocksource tsc unstable (delta = -2090960056 ns)", CD_EV_CS_UNSTABLE_DELTA);
	CHECK_STR(e->name, "tsc");
	CHECK_INT(e->value, -2090960056LL);
	e = only("[   52.1] Clocksource tsc unstable (delta = -9223372036854775808 ns)", CD_EV_CS_UNSTABLE_DELTA);
	CHECK(e->value == INT64_MIN);
	e = only("[   52.1] Clocksource tsc unstable (delta = 9223372036854775808 ns)", CD_EV_CS_UNSTABLE_DELTA);
	CHECK_INT(e->value, 0);   /* too big: unknown */
	/* "Switching" before about 3.10, "Time: ... installed" in 2.6.18 */
	e = only("Switching to clocksource acpi_pm", CD_EV_CS_SWITCHED);
	CHECK_STR(e->name, "acpi_pm");
	e = only("[   25.942735] Time: tsc clocksource has been installed.", CD_EV_CS_SWITCHED);
	CHECK_STR(e->name, "tsc");
	e = only("[    1.3] clocksource: Switched to clocksource arch_sys_counter", CD_EV_CS_SWITCHED);
	CHECK_STR(e->name, "arch_sys_counter");
}

/* ---- the TSC ---- */

static void test_tsc(void)
{
	static const char *const reasons[] = {
		"clocksource watchdog", "check_tsc_sync_source failed", "TSCs unsynchronized",
		"cpufreq changes", "boot parameter notsc", "could not calculate TSC khz",
		"running on Hyper-V", "cpufreq changes on SMP",
	};
	char line[200];
	const struct cd_event *e;

	for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
		snprintf(line, sizeof line, "[    0.270869] tsc: Marking TSC unstable due to %s\n", reasons[i]);
		e = only(line, CD_EV_TSC_UNSTABLE);
		CHECK_STR(e->name, reasons[i]);
		snprintf(line, sizeof line, "Marking TSC unstable due to %s", reasons[i]);   /* old */
		CHECK_STR(only(line, CD_EV_TSC_UNSTABLE)->name, reasons[i]);
	}

	/* The header carries the CPUs to the warp; a warp alone has none. */
	const struct cd_klog *l = parse("[    0.144008] TSC synchronization [CPU#2 -> CPU#17]:\n"
					"[    0.144008] Measured 1234567890123 cycles TSC warp between CPUs, turning off TSC clock.\n"
					"[    0.144008] TSC warped randomly between CPUs\n"
					"[    0.150000] Measured 5 cycles TSC warp between CPUs, turning off TSC clock.\n");
	CHECK_INT(l->n_events, 3);
	CHECK(l->events[1].kind == CD_EV_TSC_WARP && l->events[1].value == 1234567890123LL &&
	      l->events[1].cpu_a == 2 && l->events[1].cpu_b == 17);
	CHECK(l->events[2].kind == CD_EV_TSC_WARP && l->events[2].cpu_a == -1 && l->events[2].value == 5);
	l = parse("TSC synchronization [CPU#0 -> CPU#1]: passed\n");   /* pr_debug */
	CHECK_INT(l->n_events, 0);
	l = parse("TSC synchronization [CPU#99999999999 -> CPU#1]:\nMeasured 99999999999999999999999 cycles TSC warp between CPUs, turning off TSC clock.\n");
	CHECK(l->n_events == 1 && l->events[0].value == 0 && l->events[0].cpu_a == -1);
	only("[    0.052188] Skipped synchronization checks as TSC is reliable.", CD_EV_TSC_SYNC_SKIPPED);

	/* TSC_ADJUST (tsc_sync.c 4.10+) */
	e = only("[    0.000000] [Firmware Bug]: TSC ADJUST: CPU0: -281474976710656 force to 0", CD_EV_TSC_ADJUST);
	CHECK(e->cpu_a == 0 && e->value == -281474976710656LL && strcmp(e->name, "force-to-0") == 0);
	e = only("[    1.2] [Firmware Bug]: TSC ADJUST differs: Reference CPU0: -1234 CPU12: 5678", CD_EV_TSC_ADJUST);
	CHECK(e->cpu_a == 12 && e->value == 5678 && e->cpu_b == 0 && e->value2 == -1234 &&
	      strcmp(e->name, "differs") == 0);
	e = only("[  300.5] [Firmware Bug]: TSC ADJUST differs: CPU3 0 --> -5000. Restoring", CD_EV_TSC_ADJUST);
	CHECK(e->cpu_a == 3 && e->value == -5000 && e->value2 == 0 && strcmp(e->name, "restoring") == 0);
	e = only("TSC ADJUST synchronize: Reference CPU0: 0 CPU4: 77", CD_EV_TSC_ADJUST);
	CHECK(e->cpu_a == 4 && e->value == 77 && strcmp(e->name, "synchronize") == 0);
	e = only("TSC ADJUST compensate: CPU1 observed 381 warp. Adjust: 381", CD_EV_TSC_ADJUST);
	CHECK(e->cpu_a == 1 && e->value == 381 && e->value2 == 381 && strcmp(e->name, "compensate") == 0);

	/* Calibration trouble (tsc.c; "TSC: " before about 4.2) */
	CHECK_STR(only("tsc: Fast TSC calibration failed", CD_EV_TSC_CALIBRATION)->name, "fast-failed");
	CHECK_STR(only("Fast TSC calibration failed", CD_EV_TSC_CALIBRATION)->name, "fast-failed");
	CHECK_STR(only("[    0.000000] TSC: Unable to calibrate against PIT", CD_EV_TSC_CALIBRATION)->name, "pit-failed");
	CHECK_STR(only("tsc: HPET/PMTIMER calibration failed", CD_EV_TSC_CALIBRATION)->name, "ref-failed");
	CHECK_STR(only("TSC: No reference (HPET/PMTIMER) available", CD_EV_TSC_CALIBRATION)->name, "no-reference");
	CHECK_STR(only("tsc: Warning: TSC freq calibrated by CPUID/MSR differs from what is calibrated by HW timer, please check with vendor!!",
		       CD_EV_TSC_CALIBRATION)->name, "cpuid-differs");
	e = only("TSC: PIT calibration deviates from PMTIMER: 2793245 2394000.", CD_EV_TSC_CALIBRATION);
	CHECK(strcmp(e->name, "pit-deviates") == 0 && e->value == 2793245 && e->value2 == 2394000);
	CHECK_INT(parse("tsc: Fast TSC calibration using PIT\ntsc: PIT calibration matches HPET. 1 loops\n")->n_events, 0);

	/* Frequencies, exactly */
	e = only("[    0.000000] tsc: Detected 2596.121 MHz processor", CD_EV_TSC_FREQ);
	CHECK(e->khz == 2596121 && strcmp(e->name, "detected") == 0);
	CHECK_INT(only("[    0.000000] Detected 2394.086 MHz processor.", CD_EV_TSC_FREQ)->khz, 2394086);
	CHECK_INT(only("[    0.000000] tsc: Detected 2299.968 MHz TSC", CD_EV_TSC_FREQ)->khz, 2299968);
	e = only("[    2.249147] tsc: Refined TSC clocksource calibration: 2596.122 MHz", CD_EV_TSC_FREQ);
	CHECK(e->khz == 2596122 && strcmp(e->name, "refined") == 0);
	CHECK_INT(only("Refined TSC clocksource calibration: 3392.144 MHz.", CD_EV_TSC_FREQ)->khz, 3392144);
	e = only("[    0.000000] vmware: TSC freq read from hypervisor : 2394.000 MHz", CD_EV_TSC_FREQ);
	CHECK(e->khz == 2394000 && strcmp(e->name, "hypervisor") == 0);
	CHECK_INT(only("tsc: Detected 0.001 MHz processor", CD_EV_TSC_FREQ)->khz, 1);
	CHECK_INT(only("tsc: Detected 2596.1 MHz processor", CD_EV_TSC_FREQ)->khz, 2596100);
	CHECK_INT(only("tsc: Detected 2596.12345 MHz processor", CD_EV_TSC_FREQ)->khz, 2596123);
	CHECK_INT(only("tsc: Detected 4294967.295 MHz processor", CD_EV_TSC_FREQ)->khz, 4294967295u);
	CHECK_INT(only("tsc: Detected 4294967.296 MHz processor", CD_EV_TSC_FREQ)->khz, 0);
	CHECK_INT(only("tsc: Detected 99999999999999999999.000 MHz processor", CD_EV_TSC_FREQ)->khz, 0);
	CHECK_INT(parse("Detected VIPT I-cache on CPU1\nsched_clock: 56 bits at 24MHz, resolution 41ns\n")->n_events, 0);
	/* sched_clock: "Marking stable" is no event */
	only("[ 3007.006767] sched_clock: Marking unstable (3006972692137, 33974437)<-(3007014491200, -7725623)",
	     CD_EV_SCHED_CLOCK_UNSTABLE);
	CHECK_INT(parse("[    1.654069] sched_clock: Marking stable (1640115645, 12981701)->(1731275291, -78177945)")->n_events, 0);
	only("[  T236] TSC found unstable after boot, most likely due to broken BIOS. Use 'tsc=unstable'.",
	     CD_EV_TSC_BROKEN_BIOS);
}

/* ---- platforms ---- */

static void test_platforms(void)
{
	CHECK_STR(only("[    0.000000] Hypervisor detected: KVM", CD_EV_HYPERVISOR)->name, "KVM");
	CHECK_STR(only("Hypervisor detected: VMware", CD_EV_HYPERVISOR)->name, "VMware");
	CHECK_STR(only("Hypervisor detected: Microsoft Hyper-V", CD_EV_HYPERVISOR)->name, "Microsoft Hyper-V");
	CHECK_STR(only("Hypervisor detected: Xen HVM", CD_EV_HYPERVISOR)->name, "Xen HVM");

	const struct cd_event *e = only("[    0.4] xen: VDSO_CLOCKMODE_PVCLOCK not supported (tsc unstable)", CD_EV_XEN_NO_VDSO);
	CHECK(strcmp(e->name, "tsc unstable") == 0 && e->value == 0);
	e = only("xen: VCLOCK_PVCLOCK not supported (err -38)", CD_EV_XEN_NO_VDSO);
	CHECK(strcmp(e->name, "err -38") == 0 && e->value == -38);
	e = only("xen: VDSO_CLOCKMODE_PVCLOCK not supported", CD_EV_XEN_NO_VDSO);   /* cut */
	CHECK(e->name[0] == 0);

	/* arm64 errata (lkml boot logs), and the kernel's descriptions as
	 * arch_timer_enable_workaround prints them */
	static const struct {
		const char *line, *name;
	} errata[] = {
		{ "[    0.000000] arch_timer: Enabling global workaround for Allwinner erratum UNKNOWN1",
		  "Allwinner erratum UNKNOWN1" },
		{ "arch_timer: Enabling local workaround for ARM erratum 1418040", "ARM erratum 1418040" },
		{ "arch_timer: Enabling workaround for fsl,erratum-a008585", "fsl,erratum-a008585" },
		{ "[    0.000000] arch_timer: Enabling global workaround for Freescale erratum a005858",
		  "Freescale erratum a005858" },
		{ "arch_timer: Enabling global workaround for HiSilicon erratum 161010101", "HiSilicon erratum 161010101" },
		{ "[    0.688442] arch_timer: Enabling local workaround for ARM erratum 858921", "ARM erratum 858921" },
	};
	for (size_t i = 0; i < UNIT_COUNT(errata); i++)
		CHECK_STR(only(errata[i].line, CD_EV_ARCH_TIMER_WORKAROUND)->name, errata[i].name);
	/* user-space reads of the counter trap: the first CPU's line is kept */
	const struct cd_event *trap = only("[    0.000000] arch_timer: CPU0: Trapping CNTVCT access", CD_EV_ARCH_TIMER_TRAP);
	CHECK_INT(trap->cpu_a, 0);
	CHECK_STR(trap->line, "arch_timer: CPU0: Trapping CNTVCT access");
	CHECK_INT(only("6,101,52,-;arch_timer: CPU4: Trapping CNTVCT access", CD_EV_ARCH_TIMER_TRAP)->cpu_a, 4);
	const struct cd_klog *l = parse("[    0.000000] arch_timer: Enabling global workaround for Freescale erratum a005858\n"
	                                "[    0.000000] arch_timer: CPU0: Trapping CNTVCT access\n"
	                                "[    0.083206] arch_timer: CPU1: Trapping CNTVCT access\n"
	                                "[    0.083694] arch_timer: CPU2: Trapping CNTVCT access\n");
	CHECK_INT(l->n_events, 2);
	CHECK_INT(l->events[1].kind, CD_EV_ARCH_TIMER_TRAP);
	CHECK_INT(l->events[1].cpu_a, 0);
	/* not the driver's: no event */
	CHECK_INT(parse("foo: CPU0: Trapping CNTVCT access\n")->n_events, 0);
	CHECK_INT(parse("arch_timer: CPU0: Trapping CNTPCT access\n")->n_events, 0);
	/* the timer's state, which tells an arm kernel too */
	CHECK_STR(only("arch_timer: cp15 timer(s) running at 24.00MHz (phys).", CD_EV_ARM_TIMER)->name, "running");
	CHECK_STR(only("[    0.000000] arch_timer: cp15 and mmio timer(s) running at 50.00MHz (virt/virt).",
		       CD_EV_ARM_TIMER)->name, "running");
	CHECK_STR(only("arch_timer: Unable to find a suitable frame in timer @ 0x000000002a810000",
		       CD_EV_ARM_TIMER)->name, "refused");
	CHECK_STR(only("arch_timer: No interrupt available, giving up", CD_EV_ARM_TIMER)->name, "refused");
	/* a line that merely names the words is no event */
	CHECK_INT(parse("usb 1-1: Product: arch_timer: Unable to find a suitable frame\n")->n_events, 0);

	/* the platform's signs */
	CHECK_STR(only("[    0.000000] Booting paravirtualized kernel on bare hardware", CD_EV_PARAVIRT_BOOT)->name,
		  "bare hardware");
	CHECK_STR(only("Booting paravirtualized kernel on KVM", CD_EV_PARAVIRT_BOOT)->name, "KVM");
	CHECK_STR(only("[    0.000000] OF: fdt: Machine model: linux,dummy-virt", CD_EV_MACHINE_MODEL)->name,
		  "linux,dummy-virt");
	CHECK_STR(only("Machine model: Raspberry Pi 4 Model B Rev 1.4", CD_EV_MACHINE_MODEL)->name,
		  "Raspberry Pi 4 Model B Rev 1.4");
	CHECK_STR(only("[    0.000000] Starting gVisor...", CD_EV_SANDBOX)->name, "gvisor");
	CHECK_INT(parse("sshd[1]: Booting paravirtualized kernel on bare hardware\n")->n_events, 0);
}

static void test_boot(void)
{
	const struct cd_klog *l = parse("[    0.000000] Linux version 3.2.0-4-amd64 (debian-kernel@lists.debian.org) (gcc version 4.6.3 (Debian 4.6.3-14) ) #1 SMP Debian 3.2.51-1\n");
	CHECK_INT(l->reaches_boot, 1);
	CHECK(l->n_events == 1 && l->events[0].kind == CD_EV_KERNEL_VERSION &&
	      strcmp(l->events[0].name, "3.2.0-4-amd64") == 0);
	/* Without time stamps, the version line alone says the log reaches boot */
	l = parse("Linux version 2.6.32-358.18.1.el6.x86_64 (mockbuild@x86-001.build.bos.redhat.com)\n");
	CHECK(l->reaches_boot && strcmp(l->events[0].name, "2.6.32-358.18.1.el6.x86_64") == 0);
	l = parse("Command line: ro root=/dev/sda1\nKernel command line: ro root=/dev/sda1\n");
	CHECK(l->reaches_boot && l->n_events == 1 && l->events[0].kind == CD_EV_CMDLINE);
	l = parse("Kernel command line: BOOT_IMAGE=/Image console=ttyAMA0\n");   /* arm64 */
	CHECK(l->reaches_boot && l->n_events == 1 && l->events[0].kind == CD_EV_CMDLINE);
	/* "on the kernel command line" is not the command line */
	l = parse("[    2.705882] on the kernel command line\n");
	CHECK(!l->reaches_boot && l->n_events == 0);
}

/* ---- bad input ---- */

static void test_bad_input(void)
{
	const struct cd_klog *l;
	char *big;

	parse_n(NULL, 0);
	CHECK(L.lines == 0 && L.n_events == 0);
	parse_n(NULL, 100);
	CHECK_INT(L.lines, 0);
	l = parse("");
	CHECK(l->lines == 0 && l->n_events == 0 && !l->reaches_boot);
	l = parse("\n");
	CHECK(l->lines == 1 && l->n_events == 0);
	l = parse("\n\n\r\n");
	CHECK_INT(l->lines, 3);
	/* No final newline */
	l = parse("[ 3007.007138] clocksource: Switched to clocksource acpi_pm");
	CHECK(l->lines == 1 && l->n_events == 1 && strcmp(l->events[0].name, "acpi_pm") == 0);
	/* NUL bytes and non-printable bytes inside a line */
	static const char nul[] = "[    0.1] clocksource: Switched to clocksource h\0pet\x01\xff\n"
				  "[  0.2] tsc: Marking TSC unstable due to \0\n";
	l = parse_n(nul, sizeof nul - 1);
	CHECK_INT(l->lines, 2);
	CHECK_INT(l->n_events, 2);
	CHECK_STR(l->events[0].name, "h?pet??");
	CHECK_STR(l->events[0].line, "clocksource: Switched to clocksource h?pet??");
	CHECK_STR(l->events[1].name, "?");
	/* Binary noise */
	big = malloc(1 << 20);
	unsigned x = 12345;
	for (size_t i = 0; i < 1 << 20; i++)
		big[i] = (char)((x = x * 1103515245u + 12345u) >> 16);
	l = parse_n(big, 1 << 20);
	CHECK(l->lines > 1000);
	CHECK(l->n_events >= 0 && l->n_events <= CD_MAX_EVENTS);
	free(big);
	/* A 10 MB line, then a line that must still be read */
	size_t n = 10u << 20;
	const char *tail = "\n[ 5.0] clocksource: Switched to clocksource hpet\n";
	big = malloc(n + strlen(tail) + 1);
	memset(big, 'A', n);
	strcpy(big + n, tail);
	l = parse_n(big, n + strlen(tail));
	CHECK(l->lines == 2 && l->n_events == 1 && strcmp(l->events[0].name, "hpet") == 0);
	/* A 10 MB line that is an event: names and line truncated */
	memcpy(big, "[ 1.5] tsc: Marking TSC unstable due to ", 40);
	big[n] = 0;
	l = parse_n(big, n);
	CHECK(l->lines == 1 && l->n_events == 1);
	CHECK_INT(strlen(l->events[0].name), CD_NAME_MAX - 1);
	CHECK_INT(strlen(l->events[0].line), CD_LINE_MAX - 1);
	CHECK(strncmp(l->events[0].line, "tsc: Marking TSC unstable due to AAA", 36) == 0);
	free(big);
}

static void test_too_many_events(void)
{
	const struct cd_klog *l;
	/* More events than CD_MAX_EVENTS: the first kept, the rest counted out,
	 * and a watchdog block past the end harms nothing */
	char *many = malloc(200 * 64 + 1000), *p = many;
	for (int i = 0; i < 100; i++)
		p += sprintf(p, "[%d.5] clocksource: Switched to clocksource cs%d\n", i, i);
	strcpy(p, "clocksource: timekeeping watchdog on CPU0: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
		  "clocksource:                       'hpet' wd_now: 24f422b8 wd_last: 247dea41 mask: ffffffff\n"
		  "clocksource:                       Clocksource 'tsc' skewed 1 ns (0 ms) over watchdog 'hpet' interval of 2 ns (0 ms)\n");
	l = parse(many);
	CHECK_INT(l->n_events, CD_MAX_EVENTS);
	CHECK_INT(l->truncated_events, 1);
	CHECK_INT(l->lines, 103);
	CHECK_STR(l->events[CD_MAX_EVENTS - 1].name, "cs63");
	free(many);
	/* Exactly CD_MAX_EVENTS is not truncated */
	many = malloc(CD_MAX_EVENTS * 64);
	p = many;
	for (int i = 0; i < CD_MAX_EVENTS; i++)
		p += sprintf(p, "Switched to clocksource tsc\n");
	CHECK(parse(many)->n_events == CD_MAX_EVENTS && !L.truncated_events);
	free(many);
}

static void test_truncated_prefixes(void)
{
	const struct cd_klog *l;
	static const char *const cuts[] = {
		"[", "[ ", "[ 1", "[ 1.", "[ 1.5", "<", "<6", "<6>", "<6>[", "6,", "6,1", "6,1,2",
		"6,1,2,", "6,1,2,-", "May", "May  6 11:52", "May  6 11:52:52", "2023-09-11T", "[Mon Sep 11",
		"[    1.0][ T", "[    1.0] host", "[    1.0] host kernel:", "'", "'hpet'", "'hpet' wd_now:",
		"TSC synchronization [CPU#", "TSC synchronization [CPU#1 -> CPU#", "Measured ",
		"TSC ADJUST", "[Firmware Bug]: TSC ADJUST: CPU", "Clocksource ", "Clocksource '",
		"Clocksource 'tsc' skewed ", "xen: VCLOCK_PVCLOCK not supported (", "arch_timer: Enabling ",
		"tsc: Detected ", "tsc: Detected 1.", "timekeeping watchdog on CPU",
	};
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		l = parse(cuts[i]);
		CHECK(l->lines == 1 && l->n_events <= 1);
	}
}

/* 100 MB of a realistic log, for time and memory: parsing is one pass. */
static void test_huge(void)
{
	size_t cap = 100u << 20, n = 0;
	char *big = malloc(cap + 200);
	static const char *const lines[] = {
		"[ 1234.567890] pci 0000:00:02.0: [8086:6f04] type 01 class 0x060400\n",
		"[ 1234.567891] clocksource: hpet: mask: 0xffffffff max_cycles: 0xffffffff, max_idle_ns: 19112604467 ns\n",
		"[ 1234.567892] tsc: Marking TSC unstable due to clocksource watchdog\n",
	};
	for (int i = 0; n < cap; i++) {
		size_t k = strlen(lines[i % 3]);
		memcpy(big + n, lines[i % 3], k);
		n += k;
	}
	clock_t t0 = clock();
	const struct cd_klog *l = parse_n(big, n);
	double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	CHECK(l->lines > 1000000);
	CHECK(l->n_events == CD_MAX_EVENTS && l->truncated_events);
	CHECK(secs < 60);
	printf("klog: parsed %zu MB in %.2f s\n", n >> 20, secs);
	free(big);
}

static void test_append_and_names(void)
{
	struct cd_klog *l = calloc(1, sizeof *l);
	const char *a = "[ 5.0] clocksource: Switched to clocksource hpet\n";
	cd_klog_parse(a, strlen(a), l);
	cd_klog_parse(a, strlen(a), l);
	CHECK(l->n_events == 2 && l->lines == 2 && !l->reaches_boot);
	free(l);
	static const char *const sources[] = { "none", "file", "ring", "journal" };   /* in enum order */
	for (int k = CD_KLOG_NONE; k <= CD_KLOG_JOURNAL; k++)
		CHECK_STR(cd_klog_source_name((enum cd_klog_source)k), sources[k]);
	CHECK_STR(cd_klog_source_name((enum cd_klog_source)42), "none");
}

/* The live machine: whatever it allows, the answer must be consistent. */
static void test_live(void)
{
	struct cd_klog *l = calloc(1, sizeof *l);
	cd_klog_live(l);
	if (l->readable) {
		CHECK(l->source == CD_KLOG_RING || l->source == CD_KLOG_JOURNAL);
		CHECK(l->lines > 0);
	} else {
		CHECK_INT(l->source, CD_KLOG_NONE);
		CHECK(l->why_not[0] != 0);
	}
	CHECK(strlen(l->why_not) < CD_LINE_MAX);
	printf("klog: live log from %s, %ld lines, %d events%s%s\n", cd_klog_source_name(l->source),
	       l->lines, l->n_events, l->why_not[0] ? "; " : "", l->why_not);

	size_t len = 1;
	enum cd_klog_source src;
	char why[CD_LINE_MAX];
	char *text = cd_klog_live_text(&len, &src, why, sizeof why);
	CHECK(text ? src != CD_KLOG_NONE && len == strlen(text) : len == 0 && src == CD_KLOG_NONE);
	CHECK(text == NULL || l->readable);
	free(text);
	text = cd_klog_live_text(&len, &src, NULL, 0);   /* no room for a reason */
	free(text);
	free(l);
}

int main(void)
{
	test_layouts();
	test_fixtures_all();
	test_fixture_qemu();
	test_fixture_cases();
	test_watchdog();
	test_watchdog_pieces();
	test_dmi_and_32bit();
	test_readback();
	test_old_watchdog();
	test_tsc();
	test_platforms();
	test_boot();
	test_bad_input();
	test_too_many_events();
	test_truncated_prefixes();
	test_huge();
	test_append_and_names();
	test_live();
	return unit_done("klog");
}
