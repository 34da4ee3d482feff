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
	  .unread = { FC_VDSO_NO, 2, "0.2-1 us" } },
};

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
	return NULL;
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
