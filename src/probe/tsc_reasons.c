/* SPDX-License-Identifier: MIT */
/*
 * tsc_reasons.c: the reasons Linux passes to mark_tsc_unstable() (printed
 * "Marking TSC unstable due to %s"; "due to: %s." in 2.6.21 to 2.6.23's
 * arch/i386/kernel/tsc.c), each with the file that passes it.  Where the
 * kernel measured nothing (a rule, a flag), the row says how to tell a false
 * alarm from a real one.
 */
#include "probe/tsc_reasons.h"

#include <string.h>

#define NO_PARAMETER "no parameter makes it a clock: forced into use by one, it would lose time with every deep sleep"

static const struct cd_tsc_reason reasons[] = {
	/* arch/x86/kernel/tsc_sync.c check_tsc_sync_source() (2.6.18+): after
	 * "Measured %Ld cycles TSC warp between CPUs" */
	{ "check_tsc_sync_source failed", CD_REASON_SYNC, true,
	  "the kernel's boot test measured the TSCs of two CPUs apart (the warp is on the "
	  "\"Measured ... cycles TSC warp\" line): time read on one CPU and then another could go "
	  "backwards. On bare metal that is the firmware's or the hardware's fault; in a VM, the "
	  "host's. Measure it with `clockdoctor tsc` before trusting the TSC." },
	/* arch/x86/kernel/tsc.c tsc_init()/init_tsc_clocksource() (2.6.18+),
	 * when unsynchronized_tsc() says so: a rule, not a measurement (a
	 * non-Intel CPU without constant_tsc on more than one CPU, or an Intel
	 * box with clustered APICs) */
	{ "TSCs unsynchronized", CD_REASON_SYNC, false,
	  "the kernel assumed, without measuring, that the TSCs of this machine's CPUs are not "
	  "synchronized (unsynchronized_tsc(): a CPU without constant_tsc on more than one CPU, or "
	  "a multi-chassis box). A false alarm is possible on a CPU whose TSC is in fact invariant: "
	  "`clockdoctor tsc` measures the warp between every pair of CPUs and tells which." },
	/* arch/x86/kernel/tsc.c tsc_cs_mark_unstable() (4.11+), after the
	 * watchdog's own report; earlier the watchdog printed "Clocksource tsc
	 * unstable (delta = ...)" */
	{ "clocksource watchdog", CD_REASON_WATCHDOG, false,
	  "the clocksource watchdog compared the TSC with another clock (hpet, acpi_pm) and found "
	  "them apart: see the watchdog's numbers. A false alarm is possible when the watchdog's "
	  "clock itself was delayed (SMIs, an overloaded host); a read-back delay line says so." },
	/* drivers/idle/intel_idle.c intel_idle_cpuidle_driver_init() (2.6.35+):
	 * an MWAIT C-state deeper than C2 on a CPU without nonstop_tsc */
	{ "TSC halts in idle states deeper than C2", CD_REASON_IDLE, true,
	  "this CPU has no nonstop_tsc, and its TSC stops in the deep idle states intel_idle uses "
	  "(C3 and deeper): the kernel was right, and " NO_PARAMETER ". Keep the current "
	  "clocksource; a CPU with an invariant TSC (nonstop_tsc) is the cure." },
	/* drivers/acpi/processor_idle.c tsc_check_state() (about 2.6.24+) and
	 * intel_idle.c (5.x+): a C-state deeper than C1 on a CPU without
	 * nonstop_tsc */
	{ "TSC halts in idle", CD_REASON_IDLE, true,
	  "this CPU has no nonstop_tsc, and its TSC stops in the ACPI idle states deeper than C1 "
	  "the firmware offers: the kernel was right, and " NO_PARAMETER ". Keep the current "
	  "clocksource; a CPU with an invariant TSC (nonstop_tsc) is the cure." },
	/* drivers/acpi/processor_idle.c acpi_processor_idle() 2.6.18 to 2.6.23:
	 * on entering C2 ("possible TSC halt in C2") and C3 ("TSC halts in C3") */
	{ "possible TSC halt in C2", CD_REASON_IDLE, true,
	  "the CPU entered the ACPI C2 idle state, in which this kernel assumes the TSC may stop: "
	  "the kernel dropped it rather than risk losing time with every sleep, and on this kernel "
	  "that is final. A newer kernel (2.6.24 or later) decides by the CPU's nonstop_tsc flag "
	  "and the idle states it really uses; without nonstop_tsc, " NO_PARAMETER "." },
	{ "TSC halts in C3", CD_REASON_IDLE, true,
	  "the CPU entered the ACPI C3 idle state, in which its TSC stops: the kernel was right, "
	  "and " NO_PARAMETER ". Keep the current clocksource." },
	/* arch/x86/kernel/process.c (amd_e400 C1E detection, about 2.6.29+;
	 * arch_post_acpi_subsys_init() since about 4.14): AMD's C1E stops the
	 * TSC of a CPU without nonstop_tsc */
	{ "TSC halt in AMD C1E", CD_REASON_IDLE, true,
	  "this AMD CPU enters C1E (a firmware-enabled idle state that stops the clocks), and "
	  "without nonstop_tsc its TSC stops there: the kernel was right, and " NO_PARAMETER ". "
	  "Keep the current clocksource; turning C1E off in the BIOS setup keeps the TSC "
	  "running on some boards." },
	/* arch/x86/kernel/tsc.c cpufreq_register_tsc_scaling() (about 4.8+):
	 * at boot, a CPU without constant_tsc and more than one CPU present,
	 * before any frequency change is seen */
	{ "cpufreq changes on SMP", CD_REASON_CPUFREQ, true,
	  "this CPU has no constant_tsc, so its TSC's rate follows each CPU's frequency, and with "
	  "several CPUs they drift apart: it is not a clock on this machine, and no parameter makes "
	  "it one. Keep the current clocksource; a CPU with constant_tsc is the cure." },
	/* arch/x86/kernel/tsc.c time_cpufreq_notifier() (2.6.18+): a
	 * frequency change on a CPU without constant_tsc */
	{ "cpufreq changes", CD_REASON_CPUFREQ, true,
	  "the TSC's rate followed the CPU's frequency (no constant_tsc): it is not a clock on "
	  "this machine, and no parameter makes it one. Keep the current clocksource; a CPU with "
	  "constant_tsc is the cure." },
	/* arch/x86/kernel/cpu/mshyperv.c ms_hyperv_init_platform() (about
	 * 4.14+): the host does not offer HV_ACCESS_TSC_INVARIANT */
	{ "running on Hyper-V", CD_REASON_HYPERVISOR, true,
	  "this Hyper-V host does not promise the guest an invariant TSC (it may change across "
	  "live migration or a save and restore): Hyper-V guests keep time with the Hyper-V TSC "
	  "page (hyperv_clocksource_tsc_page), read in the vDSO; see the hypervisor's side." },
	/* arch/x86/kvm/x86.c kvm_arch_hardware_enable() (2.6.38+): the host's
	 * own TSC went backwards across a suspend or a CPU hotplug */
	{ "KVM discovered backwards TSC", CD_REASON_HOST, true,
	  "this machine is a KVM host, and KVM saw its own TSC go backwards (after a suspend, or a "
	  "CPU coming back): the kernel was right; the firmware's handling of the TSC across "
	  "suspend is the cause. Update the BIOS." },
	/* arch/x86/kernel/tsc.c tsc_init() (about 2.6.26+): no frequency to
	 * compute with */
	{ "could not calculate TSC khz", CD_REASON_FIRMWARE, true,
	  "the kernel could not measure the TSC's frequency (no PIT, HPET or PM timer to calibrate "
	  "against, or a hypervisor that gave none): a firmware or hypervisor problem, which no "
	  "parameter fixes." },
	/* arch/x86/kernel/cpu/cyrix.c (2.6.18+): the 5510/5520 companion chips */
	{ "cyrix 5510/5520 detected", CD_REASON_FIRMWARE, true,
	  "a Cyrix 5510/5520 chipset, whose CPU clock stops with power management: the kernel "
	  "was right; keep the current clocksource." },
	/* arch/x86/kernel/apic/x2apic_uv_x.c uv_tsc_check_sync() (about 5.9+):
	 * the UV firmware says the TSCs of its chassis are not in sync */
	{ "UV BIOS", CD_REASON_FIRMWARE, true,
	  "the firmware of this HPE/SGI UV machine reports that the TSCs of its chassis are not "
	  "synchronized: the kernel was right; the machine's own clock (sgi_rtc/uv_rtc) or a "
	  "firmware update is the way, not a parameter." },
	/* arch/i386/kernel/summit.c and mach-summit (2.6.x): IBM x440/x445
	 * Summit chipsets, whose nodes' TSCs are not in sync (they use cyclone) */
	{ "Summit based system", CD_REASON_FIRMWARE, true,
	  "an IBM Summit-chipset machine (x440, x445), whose nodes' TSCs are not synchronized: "
	  "the kernel was right and uses the chipset's cyclone timer instead." },
	/* arch/x86/kernel/tsc.c notsc_setup(): "notsc" on the command line
	 * ("user disabled TSC" in 2.6.x) */
	{ "boot parameter notsc", CD_REASON_PARAMETER, false,
	  "the command line says notsc: see clocksource-forced. Whoever added it may have had a "
	  "reason; `clockdoctor tsc` measures whether the TSC is sound before it comes off." },
	{ "user disabled TSC", CD_REASON_PARAMETER, false,
	  "the command line says notsc: see clocksource-forced. Whoever added it may have had a "
	  "reason; `clockdoctor tsc` measures whether the TSC is sound before it comes off." },
	/* arch/x86/kernel/tsc.c tsc_setup(): tsc=unstable on the command line */
	{ "boot parameter", CD_REASON_PARAMETER, false,
	  "the command line says tsc=unstable: see clocksource-forced. Whoever added it may have "
	  "had a reason; `clockdoctor tsc` measures whether the TSC is sound before it comes off." },
};

/* Longer rows first where one begins another ("TSC halts in idle states
 * deeper than C2" before "TSC halts in idle"): the table is in that order. */
const struct cd_tsc_reason *cd_tsc_reason_find(const char *reason)
{
	for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
		size_t n = strlen(reasons[i].text);
		if (strncmp(reason, reasons[i].text, n) == 0 && (reason[n] == 0 || reason[n] == '.'))
			return &reasons[i];
	}
	return NULL;
}

bool cd_tsc_reason_is_beginning(const char *text, size_t n)
{
	for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
		if (n < strlen(reasons[i].text) && strncmp(text, reasons[i].text, n) == 0)
			return true;
	return false;
}
