/* SPDX-License-Identifier: MIT */
/*
 * test_klog_events.c: the recognisers of klog_events.c take a kernel
 * message only where the kernel puts it: each one the kernel printed makes
 * its event in every layout the logs keep it in, and the same words after
 * another program's text (a USB device's product string, an audit record,
 * a program's own log line) make none.
 */
#include "klog_check.h"

/* ---- where the kernel puts a message ----
 *
 * Each message the kernel printed (its subsystem's prefix, or none where a
 * kernel printed it bare) makes its event; the same words inside another
 * message (a USB device's product string, a program's own log line, an
 * audit record) make none. */
static const struct {
	const char *msg;
	enum cd_event_kind kind;
} genuine[] = {
	{ "tsc: Marking TSC unstable due to clocksource watchdog", CD_EV_TSC_UNSTABLE },
	{ "Marking TSC unstable due to check_tsc_sync_source failed", CD_EV_TSC_UNSTABLE },
	{ "clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:",
	  CD_EV_WATCHDOG_SKEW },
	{ "clocksource: timekeeping watchdog: Marking clocksource 'tsc' as unstable because the skew is too large:",
	  CD_EV_WATCHDOG_SKEW },
	{ "timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:",
	  CD_EV_WATCHDOG_SKEW },
	{ "clocksource:                       Clocksource 'tsc' skewed 10593 ns (0 ms) over watchdog 'hpet' interval of 511989875 ns (511 ms)",
	  CD_EV_WATCHDOG_SKEW },
	{ "clocksource: timekeeping watchdog on CPU227: wd-tsc-wd excessive read-back delay of 153560ns vs. limit of 125000ns, wd-wd read-back delay only 11440ns, attempt 3, marking tsc unstable",
	  CD_EV_WD_READBACK_EXCESSIVE },
	{ "clocksource: wd-tsc-wd read-back delay of 289000ns, clock-skew test skipped!", CD_EV_WD_NOISE },
	{ "clocksource: Long readout interval, skipping watchdog check: cs_nsec: 1000219536 wd_nsec: 1000216820",
	  CD_EV_WD_NOISE },
	{ "Clocksource tsc unstable (delta = -2090960056 ns)", CD_EV_CS_UNSTABLE_DELTA },
	{ "clocksource: Switched to clocksource hpet", CD_EV_CS_SWITCHED },
	{ "Switching to clocksource acpi_pm", CD_EV_CS_SWITCHED },
	{ "TSC synchronization [CPU#0 -> CPU#1]:", CD_EV_TSC_SYNC_HEADER },
	{ "checking TSC synchronization [CPU#0 -> CPU#1]:", CD_EV_TSC_SYNC_HEADER },
	{ "Measured 1234 cycles TSC warp between CPUs, turning off TSC clock.", CD_EV_TSC_WARP },
	{ "[Firmware Bug]: TSC ADJUST: CPU0: -281474976710656 force to 0", CD_EV_TSC_ADJUST },
	{ "TSC ADJUST compensate: CPU1 observed 381 warp. Adjust: 381", CD_EV_TSC_ADJUST },
	{ "tsc: Detected 2596.116 MHz processor", CD_EV_TSC_FREQ },
	{ "tsc: Refined TSC clocksource calibration: 2596.116 MHz", CD_EV_TSC_FREQ },
	{ "vmware: TSC freq read from hypervisor : 2596.116 MHz", CD_EV_TSC_FREQ },
	{ "xen: VDSO_CLOCKMODE_PVCLOCK not supported (tsc unstable)", CD_EV_XEN_NO_VDSO },
	{ "Skipped synchronization checks as TSC is reliable.", CD_EV_TSC_SYNC_SKIPPED },
	{ "TSC found unstable after boot, most likely due to broken BIOS. Use 'tsc=unstable'.", CD_EV_TSC_BROKEN_BIOS },
	{ "sched_clock: Marking unstable (3006972692137, 33974437)<-(3007014491200, -7725623)",
	  CD_EV_SCHED_CLOCK_UNSTABLE },
	{ "tsc: Fast TSC calibration failed", CD_EV_TSC_CALIBRATION },
	{ "Hypervisor detected: KVM", CD_EV_HYPERVISOR },
	{ "Hyper-V Host Build:20348-10.0-1-0.1544", CD_EV_HYPERVISOR },
	{ "873MB HIGHMEM available.", CD_EV_X86_32BIT },
	{ "Compat vDSO mapped to ffffe000.", CD_EV_X86_32BIT },
	{ "? ret_from_fork (arch/x86/entry/entry_32.S:772)", CD_EV_X86_32BIT },
	{ "Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014", CD_EV_DMI },
};

/* What a line of someone else's may put before the kernel's words. */
static const char *const forgers[] = {
	"usb 1-1: Product: ",
	"usb 1-1: Manufacturer: ",
	"input: ",
	"audit: type=1400 audit(1700000000.000:1): apparmor=\"DENIED\" name=\"",
	"myapp[123]: ",
	"x",
	"x86/",
	"- ",
	"Comm: ",
};

static void test_forged(void)
{
	char line[1200];
	for (size_t i = 0; i < UNIT_COUNT(genuine); i++) {
		/* as the kernel printed it, in the layouts the logs keep it in */
		only(genuine[i].msg, genuine[i].kind);
		snprintf(line, sizeof line, "[    3.000000] %s", genuine[i].msg);
		only(line, genuine[i].kind);
		snprintf(line, sizeof line, "4,572,3007005900,-;%s", genuine[i].msg);
		only(line, genuine[i].kind);
		snprintf(line, sizeof line, "Mar  8 13:19:34 host kernel: [   3.0] %s", genuine[i].msg);
		only(line, genuine[i].kind);
		for (size_t j = 0; j < UNIT_COUNT(forgers); j++) {
			unit_case("%s%s", forgers[j], genuine[i].msg);
			snprintf(line, sizeof line, "[    3.000000] %s%s", forgers[j], genuine[i].msg);
			CHECK_INT(parse(line)->n_events, 0);
			snprintf(line, sizeof line, "6,900,3007005900,-;%s%s", forgers[j], genuine[i].msg);
			CHECK_INT(parse(line)->n_events, 0);
			snprintf(line, sizeof line, "Mar  8 13:19:34 host kernel: [   3.0] %s%s", forgers[j], genuine[i].msg);
			CHECK_INT(parse(line)->n_events, 0);
		}
		unit_case(NULL);
	}
	/* The issue's own line: a device that names itself after the watchdog's verdict */
	CHECK_INT(parse("[  120.5] usb 1-1: Product: tsc: Marking TSC unstable due to clocksource watchdog\n")->n_events, 0);
	/* OpenWrt's logread keeps the kernel's stamp after its own */
	const struct cd_event *e = only("Tue Mar  8 13:19:34 2022 kern.info kernel: [14669.048261] clocksource: "
	                                "wd-tsc-wd read-back delay of 124876ns, clock-skew test skipped!", CD_EV_WD_NOISE);
	CHECK(near(e->ts, 14669.048261));
}

int main(void)
{
	test_forged();
	return unit_done("klog_events");
}
