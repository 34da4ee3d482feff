/* SPDX-License-Identifier: MIT */
/*
 * clockfacts.c: the clocksource table (see clockfacts.h for the versions
 * and their sources, docs/timekeeping.md for the same facts explained).
 *
 * Which clocksources have a vDSO read: lib/vdso/gettimeofday.c serves a
 * high-resolution clock id only when the current clocksource has a vDSO
 * clock mode (VDSO_CLOCKMODE_*, before about 5.7 VCLOCK_*); the x86 modes
 * are TSC, PVCLOCK (kvm-clock, xen) and HVCLOCK (the Hyper-V TSC page),
 * the arm64 one is ARCHTIMER.  Every other clocksource is read by the
 * kernel, so each call is a system call.
 *
 * The typical costs are per call of clock_gettime(CLOCK_MONOTONIC), as
 * measured on real and virtual machines and reported publicly; they are
 * orders of magnitude for people, not thresholds.
 */
#include "clockfacts.h"

#include <stddef.h>
#include <string.h>

/* The vDSO read of the TSC: rdtsc and a multiply (arch/x86/include/asm/vdso/gettimeofday.h). */
#define TSC_STATE { FC_VDSO_YES, 1, "15-60 ns" }

static const struct fc_cs_fact table[] = {
	{ .name = "tsc", .counter = "the CPU's TSC (rdtsc)", .cpu_counter = true, .read = TSC_STATE },
	{ .name = "tsc-early", .counter = "the CPU's TSC (rdtsc), before the TSC's calibration is refined",
	  .cpu_counter = true, .read = TSC_STATE },
	/* pvclock: the TSC scaled by the host's per-vCPU parameters
	 * (arch/x86/kernel/pvclock.c); the vDSO reads the page only while
	 * the host sets PVCLOCK_TSC_STABLE_BIT. */
	{ .name = "kvm-clock", .counter = "the TSC, scaled by KVM's pvclock page", .cpu_counter = true, .paravirt = true,
	  .read = { FC_VDSO_DEPENDS, 1, "about 30 ns when served" },
	  .unread = { FC_VDSO_NO, 2, "150-300 ns" },
	  .change = { FC_KV_KVMCLOCK_VDSO } },
	{ .name = "xen", .counter = "the TSC, scaled by Xen's pvclock vCPU time area", .cpu_counter = true, .paravirt = true,
	  .read = { FC_VDSO_DEPENDS, 2, "about 0.5-1 us as a system call" },
	  .unread = { FC_VDSO_NO, 2, "about 0.5-1 us" },
	  .change = { FC_KV_XEN_VDSO } },
	/* The reference TSC page: the TSC times a scale plus an offset that
	 * Hyper-V writes (Documentation/virt/hyperv/clocks.rst). */
	{ .name = "hyperv_clocksource_tsc_page", .counter = "the TSC, scaled by Hyper-V's reference TSC page",
	  .cpu_counter = true, .paravirt = true,
	  .read = { FC_VDSO_YES, 1, "about 30 ns" },
	  .unread = { FC_VDSO_NO, 2, "about 0.3-1 us" },
	  .change = { FC_KV_HYPERV_TSC_PAGE_VDSO } },
	/* A synthetic MSR, which traps to the hypervisor: Hyper-V derives
	 * its reference count from the same TSC. */
	{ .name = "hyperv_clocksource_msr", .counter = "Hyper-V's reference counter MSR (a trap to the hypervisor)",
	  .cpu_counter = true, .paravirt = true,
	  .unread = { FC_VDSO_NO, 3, "about 1 us" } },
	{ .name = "hpet", .counter = "the HPET's main counter (memory-mapped I/O)",
	  .read = { FC_VDSO_SLOW, 2, "0.5-1 us" },
	  .unread = { FC_VDSO_NO, 2, "0.7-1.2 us" },
	  .removed = true, .change = { FC_KV_HPET_VDSO_REMOVED }, .change_stable = { FC_KV_HPET_VDSO_REMOVED_STABLE } },
	{ .name = "acpi_pm", .counter = "the ACPI PM timer (an I/O port)",
	  .unread = { FC_VDSO_NO, 3, "2-2.5 us" } },
	{ .name = "jiffies", .counter = "the timer tick count",
	  .unread = { FC_VDSO_NO, 4, "a system call, tick resolution" } },
	{ .name = "refined-jiffies", .counter = "the timer tick count",
	  .unread = { FC_VDSO_NO, 4, "a system call, tick resolution" } },
	{ .name = "pit", .counter = "the i8253 PIT (I/O ports)",
	  .unread = { FC_VDSO_NO, 4, "several us" } },
	/* The arm64 generic timer's virtual counter; an erratum workaround
	 * that replaces the counter read takes the vDSO mode away
	 * (drivers/clocksource/arm_arch_timer.c). */
	{ .name = "arch_sys_counter", .counter = "the arm64 generic timer (cntvct_el0)", .cpu_counter = true,
	  .read = { FC_VDSO_YES, 1, "20-40 ns" },
	  .unread = { FC_VDSO_NO, 2, "0.2-1 us" }, .arch = "arm/arm64" },

	/* ---- the rest of x86: no vDSO clock mode, every call a system call ---- */
	/* The UV hub's RTC, read across the NUMA fabric
	 * (arch/x86/platform/uv/uv_time.c, "sgi_rtc"). */
	{ .name = "sgi_rtc", .counter = "the SGI UV hub's RTC (memory-mapped I/O, across the NUMA fabric)",
	  .unread = { FC_VDSO_NO, 2, "about 1-2 us" }, .arch = "x86",
	  .note = "sgi_rtc is an RTC on the UV hub, read through memory-mapped I/O by the kernel: "
	          "no vDSO read" },
	{ .name = "uv_rtc", .counter = "the SGI UV hub's RTC (memory-mapped I/O)",
	  .unread = { FC_VDSO_NO, 2, "about 1-2 us" }, .arch = "x86",
	  .note = "the UV RTC is read through memory-mapped I/O by the kernel: no vDSO read" },
	/* IBM Summit's chipset counter (arch/x86/kernel/cyclone.c, later
	 * drivers/clocksource/cyclone.c; removed with Summit support). */
	{ .name = "cyclone", .counter = "IBM Summit's cyclone counter (memory-mapped I/O)",
	  .unread = { FC_VDSO_NO, 2, "about 1 us" }, .arch = "x86",
	  .note = "the cyclone counter is read through memory-mapped I/O by the kernel: no vDSO read" },
	/* NatSemi/AMD Geode SC1100 (drivers/clocksource/scx200_hrt.c). */
	{ .name = "scx200_hrt", .counter = "the Geode SCx200 high-resolution timer (an I/O port)",
	  .unread = { FC_VDSO_NO, 3, "about 2 us" }, .arch = "x86",
	  .note = "the SCx200 timer is an I/O port the kernel reads: no vDSO read" },
	/* AMD Geode CS5535/CS5536 multi-function general-purpose timers. */
	{ .name = "mfgpt", .counter = "the Geode CS5535 MFGPT (an I/O port)",
	  .unread = { FC_VDSO_NO, 3, "about 2 us" }, .arch = "x86",
	  .note = "the CS5535 MFGPT is an I/O port the kernel reads: no vDSO read" },
	/* NumaScale NumaChip (arch/x86/kernel/apic/apic_numachip.c and
	 * drivers/clocksource/numachip.c). */
	{ .name = "numachip2", .counter = "the NumaChip2's counter (memory-mapped I/O)",
	  .unread = { FC_VDSO_NO, 2, "about 1 us" }, .arch = "x86",
	  .note = "the NumaChip counter is read through memory-mapped I/O by the kernel: no vDSO read" },
	/* Paravirtual clocks of hypervisors Linux dropped: lguest (removed in
	 * 4.14) and VMware's VMI (removed in 2.6.37).  Neither had a vDSO
	 * clock mode. */
	{ .name = "lguest", .counter = "lguest's clock (a hypercall page)", .paravirt = true,
	  .unread = { FC_VDSO_NO, 2, "a system call" }, .arch = "x86",
	  .note = "lguest's clock had no vDSO read: every call is a system call" },
	{ .name = "vmi-timer", .counter = "VMware VMI's paravirtual timer", .paravirt = true,
	  .unread = { FC_VDSO_NO, 2, "a system call" }, .arch = "x86",
	  .note = "VMware's VMI timer had no vDSO read: every call is a system call" },
	/* Hyper-V's clocksource before it was split into the TSC page and the
	 * MSR (drivers/hv/hv_util.c, 2.6.x): the reference counter MSR. */
	{ .name = "hyperv_clocksource", .counter = "Hyper-V's reference counter MSR (a trap to the hypervisor)",
	  .cpu_counter = true, .paravirt = true,
	  .unread = { FC_VDSO_NO, 3, "about 1 us" }, .arch = "x86",
	  .note = "hyperv_clocksource is read with an MSR, which only the kernel can do" },

	/* ---- arm and arm64 ---- */
	/* The memory-mapped frame of the generic timer, registered only when
	 * the system-register counter cannot be (arm_arch_timer.c). */
	{ .name = "arch_mem_counter", .counter = "the generic timer's memory-mapped frame (CNTVCT in MMIO)",
	  .unread = { FC_VDSO_NO, 2, "0.3-1 us" }, .arch = "arm/arm64",
	  .note = "arch_mem_counter is the timer's memory-mapped frame: the vDSO reads only the "
	          "system-register counter (arch_sys_counter)" },

	/* ---- the other architectures, each with its own vDSO mode ---- */
	/* The CPU's timebase register, read with mftb (arch/powerpc/kernel/time.c). */
	{ .name = "timebase", .counter = "the PowerPC timebase (mftb)", .cpu_counter = true,
	  .read = { FC_VDSO_YES, 1, "20-50 ns" }, .arch = "powerpc",
	  .note = "the vDSO reads the PowerPC timebase without a system call" },
	/* The TOD clock, read with STCK/STCKE (arch/s390/kernel/time.c). */
	{ .name = "tod", .counter = "the s390 TOD clock (stcke)", .cpu_counter = true,
	  .read = { FC_VDSO_YES, 1, "20-50 ns" }, .arch = "s390",
	  .note = "the vDSO reads the s390 TOD clock without a system call" },
	{ .name = "riscv_clocksource", .counter = "the RISC-V time CSR (rdtime)", .cpu_counter = true,
	  .read = { FC_VDSO_YES, 1, "30-100 ns" },
	  .unread = { FC_VDSO_NO, 2, "0.3-1 us" },
	  .change = { FC_KV_RISCV_VDSO }, .arch = "riscv" },
	{ .name = "MIPS", .counter = "the MIPS CP0 count register", .cpu_counter = true,
	  .read = { FC_VDSO_YES, 1, "30-100 ns" },
	  .unread = { FC_VDSO_NO, 2, "0.5-1 us" },
	  .change = { FC_KV_MIPS_VDSO }, .arch = "mips" },
	{ .name = "GIC", .counter = "the MIPS GIC counter (memory-mapped I/O)",
	  .read = { FC_VDSO_YES, 2, "0.1-0.3 us" },
	  .unread = { FC_VDSO_NO, 2, "0.5-1 us" },
	  .change = { FC_KV_MIPS_VDSO }, .arch = "mips" },
	/* arch/sparc/kernel/time_64.c: "tick" (%tick), "stick" (%stick);
	 * "hbtick" is the Hummingbird's STICK in MMIO, which has no mode. */
	{ .name = "stick", .counter = "the SPARC %stick register", .cpu_counter = true,
	  .read = { FC_VDSO_YES, 1, "30-100 ns" },
	  .unread = { FC_VDSO_NO, 2, "0.5-1 us" },
	  .change = { FC_KV_SPARC_VDSO }, .arch = "sparc" },
	{ .name = "tick", .counter = "the SPARC %tick register", .cpu_counter = true,
	  .read = { FC_VDSO_YES, 1, "30-100 ns" },
	  .unread = { FC_VDSO_NO, 2, "0.5-1 us" },
	  .change = { FC_KV_SPARC_VDSO }, .arch = "sparc" },
	/* arch/loongarch/kernel/time.c: the stable counter, read with rdtime
	 * (VDSO_CLOCKMODE_CPU); LoongArch came with the generic vDSO (5.19). */
	{ .name = "Constant", .counter = "the LoongArch stable counter (rdtime)", .cpu_counter = true,
	  .read = { FC_VDSO_YES, 1, "30-100 ns" }, .arch = "loongarch",
	  .note = "the vDSO reads the LoongArch stable counter without a system call" },
	/* arch/alpha/kernel/time.c: the cycle counter; alpha has no vDSO. */
	{ .name = "rpcc", .counter = "the Alpha cycle counter (rpcc)",
	  .unread = { FC_VDSO_NO, 2, "a system call" }, .arch = "alpha",
	  .note = "alpha has no vDSO: every time call is a system call" },
	{ .name = "hbtick", .counter = "the Hummingbird's STICK (memory-mapped I/O)",
	  .unread = { FC_VDSO_NO, 2, "about 1 us" }, .arch = "sparc",
	  .note = "hbtick is read through memory-mapped I/O by the kernel: no vDSO read" },
};

/* An SoC or board timer (see fc_cs_fact): a memory-mapped device the
 * kernel reads. */
static const struct fc_cs_fact soc_timer = {
	.name = "an SoC or board timer", .counter = "an SoC or board timer (memory-mapped I/O)",
	.unread = { FC_VDSO_NO, 2, "0.3-1 us" }, .arch = "arm/arm64 and other SoCs",
	.note = "an SoC or board timer is a memory-mapped device only the kernel reads: the vDSO "
	        "reads only the CPU's own counter (arch_sys_counter on arm and arm64)",
};

/* The names SoC and board timer drivers register (drivers/clocksource and
 * arch/arm/mach-*), whole or as a prefix; and the words such names
 * are made of, for the drivers not listed. */
static const char *const soc_names[] = {
	"timer", "mct-frc", "mxc_timer1", "32k_counter", "dmtimer", "hstimer", "sun4i", "sun5i",
	"rk_timer", "rockchip", "arm_global_timer", "arm,sp804", "sp804", "nomadik_mtu", "mtu",
	"ttc_clocksource", "orion_clocksource", "armada_370_xp_clocksource", "dw-apb-timer", "dw_apb",
	"timer_us", "tegra", "mtk_timer", "mtk-", "bcm2835", "clps711x", "tcb_clksrc", "pit_at91",
	"at91_", "imx", "gpt", "ostm", "sh_cmt", "sh_mtu2", "sh_tmu", "em_sti", "meson", "owl",
	"stm32", "vt8500", "pxa", "mmp", "samsung_pwm", "s5p", "exynos", "omap", "keystone",
	"davinci", "digicolor", "asm9260", "lpc32xx", "fttmr010", "moxart", "zevio", "qcom", "msm",
	"kona", "versatile", "integrator", "mps2", "xilinx", "timer-", "_timer", "-timer", "clksrc",
	"-clksrc", "_clksrc",
};

static bool soc_timer_name(const char *name)
{
	/* The architectures' own counters stay the table's, never the rule's. */
	if (strcmp(name, "arch_sys_counter") == 0 || strcmp(name, "arch_mem_counter") == 0)
		return false;
	for (size_t i = 0; i < sizeof soc_names / sizeof soc_names[0]; i++) {
		const char *w = soc_names[i];
		size_t n = strlen(w);
		bool affix = w[0] == '-' || w[0] == '_' || w[n - 1] == '-' || w[n - 1] == '_';
		if (affix ? strstr(name, w) != NULL : strncmp(name, w, n) == 0)
			return true;
	}
	return false;
}

enum fc_kver fc_kver_compare(int maj, int min, int patch, int want_maj, int want_min, int want_patch)
{
	bool newer;
	if (maj < 0)
		return FC_KVER_UNKNOWN;
	if (maj != want_maj)
		newer = maj > want_maj;
	else if (min != want_min)
		newer = min > want_min;
	else
		newer = patch >= want_patch;
	return newer ? FC_KVER_SAME_OR_NEWER : FC_KVER_OLDER;
}

const struct fc_cs_fact *fc_cs_fact(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return name[0] && soc_timer_name(name) ? &soc_timer : NULL;
}

const struct fc_cs_fact *fc_cs_table(int *n)
{
	*n = (int)(sizeof table / sizeof table[0]);
	return table;
}

/* The change is in this kernel: at or after the mainline release, or in the
 * stable series that took it, from that stable release on. */
static bool change_in(const struct fc_cs_fact *cs, int maj, int min, int patch)
{
	const int *c = cs->change, *s = cs->change_stable;
	if (fc_kver_compare(maj, min, patch, c[0], c[1], c[2]) == FC_KVER_SAME_OR_NEWER)
		return true;
	return s[0] && maj == s[0] && min == s[1] && patch >= s[2];
}

bool fc_cs_vdso_reads(const struct fc_cs_fact *cs, int maj, int min, int patch)
{
	if (!cs || cs->read.vdso == FC_VDSO_UNKNOWN)
		return false;
	if (cs->unread.vdso == FC_VDSO_UNKNOWN || cs->change[0] == 0)
		return true;
	/* An unknown kernel is taken as a current one. */
	bool in = maj < 0 || change_in(cs, maj, min, patch);
	return cs->removed ? !in : in;
}

const struct fc_cs_state *fc_cs_state(const struct fc_cs_fact *cs, int maj, int min, int patch)
{
	return fc_cs_vdso_reads(cs, maj, min, patch) ? &cs->read : &cs->unread;
}

int fc_vdso_usually_fast(enum fc_vdso v)
{
	switch (v) {
	case FC_VDSO_YES:
	case FC_VDSO_DEPENDS: return 1;
	case FC_VDSO_NO:
	case FC_VDSO_SLOW: return 0;
	default: return -1;
	}
}

int fc_vdso_surely_fast(enum fc_vdso v)
{
	return v == FC_VDSO_DEPENDS ? -1 : fc_vdso_usually_fast(v);
}

bool fc_cs_is_cpu_counter(const char *name)
{
	const struct fc_cs_fact *cs = fc_cs_fact(name);
	return cs && cs->cpu_counter;
}

bool fc_cs_is_paravirt(const char *name)
{
	const struct fc_cs_fact *cs = fc_cs_fact(name);
	return cs && cs->paravirt;
}
