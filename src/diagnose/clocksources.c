/* SPDX-License-Identifier: MIT */
/*
 * clocksources.c: what this kernel's vDSO can do with each clocksource.
 *
 * The vDSO serves a high-resolution clock id itself only when the current
 * clocksource has a vDSO clock mode (lib/vdso/gettimeofday.c); otherwise the
 * call becomes a real system call that reads the device.  Which clocksources
 * have a mode changed over the kernel's history: the table of states and the
 * versions are lib/clockfacts (shared with libfastclock, which must never
 * disagree); this file adds what only the command can see (a 32-bit kernel,
 * the command line, the kernel log) and says why in words.  Versions the
 * kernel's history could not confirm are said with "about".
 */
#include "diagnose/diagnose.h"
#include "probe/probe.h"
#include "util/table.h"

#include "clockfacts.h"

#include <stdio.h>
#include <string.h>

static bool klog_has(const struct cd_facts *f, enum cd_event_kind kind)
{
	for (int i = 0; i < f->klog.n_events; i++)
		if (f->klog.events[i].kind == kind)
			return true;
	return false;
}

/* Only the arch_timer errata whose workaround replaces the counter read
 * (read_cntvct_el0 set: drivers/clocksource/arm_arch_timer.c) take the vDSO
 * mode away; others, such as ARM erratum 1418040 on Neoverse-N1 (Graviton2),
 * only turn off the 32-bit compat vDSO. */
const struct cd_event *cd_arch_timer_vdso_erratum(const struct cd_facts *f)
{
	/* the kernel's descriptions (arch_timer_erratum_workaround's .desc):
	 * Freescale's A-008585 is printed "Freescale erratum a005858", the
	 * digits swapped in the kernel's own string; its device-tree id
	 * "fsl,erratum-a008585" in 4.10's wording */
	static const char *const errata[] = { "858921", "a008585", "a005858", "161010101", "UNKNOWN1",
	                                      "unstable timer" };
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind != CD_EV_ARCH_TIMER_WORKAROUND)
			continue;
		for (size_t k = 0; k < sizeof errata / sizeof errata[0]; k++)
			if (strstr(e->name, errata[k]) || strstr(e->line, errata[k]))
				return e;
	}
	return NULL;
}

/* A 32-bit x86 kernel: uname says so, or the release names it (Debian's
 * -486/-686/-686-pae, Ubuntu's -386, Red Hat's .i686 and .i686.PAE), or the
 * log holds a line only such a kernel prints (klog.c: HIGHMEM, LOWMEM, the
 * compat vDSO at ffffe000).  Ubuntu's -generic and -server were built for
 * both, so only the log tells those apart. */
bool cd_kernel_32bit(const struct cd_facts *f)
{
	static const char *const rel32[] = { "-686", "-486", "-386", ".i686", ".i586", ".i386", "-pae", "PAE" };
	const char *rel = f->kernel.release;
	if (strcmp(f->cpu.arch, "i686") == 0 || strcmp(f->cpu.arch, "i586") == 0 || strcmp(f->cpu.arch, "i386") == 0)
		return true;
	for (size_t i = 0; i < sizeof rel32 / sizeof rel32[0]; i++)
		if (strstr(rel, rel32[i]))
			return true;
	return klog_has(f, CD_EV_X86_32BIT);
}

/* The 32-bit x86 vDSO had only the system-call entry and signal return
 * until 3.15 added clock_gettime and gettimeofday to it (commit 7a59ed415f5b,
 * "x86, vdso: Add 32 bit VDSO time support for 32 bit kernel"): before, glibc
 * makes the system call whatever the clocksource.  A kernel of unknown
 * version is taken as a current one, as the table does (fc_cs_vdso_reads). */
bool cd_kernel_no_vdso_time(const struct cd_facts *f)
{
	return cd_kernel_32bit(f) && cd_kernel_compare(&f->kernel, FC_KV_X86_32_VDSO_GETTIME) == FC_KVER_OLDER;
}

/* Why the vDSO reads each clocksource of the table (lib/clockfacts.c) or
 * not, in words: read when this kernel's vDSO has a read for it by version
 * (fc_cs_vdso_reads), unread when it has none, unknown_kernel instead when
 * the kernel's version is not known and the words would name it.  The
 * reasons name the version rule the state rests on; their versions come
 * from the same constants. */
static const struct {
	const char *name, *read, *unread, *unknown_kernel;
} reasons[] = {
	{ "tsc", "the vDSO reads the TSC without a system call", NULL, NULL },
	{ "tsc-early", "the vDSO reads the TSC without a system call", NULL, NULL },
	{ "kvm-clock",
	  "the vDSO reads kvm-clock only while the host sets PVCLOCK_TSC_STABLE_BIT "
	  "(host on tsc, vCPU TSCs matched); otherwise every call is a system call",
	  "kvm-clock gained its vDSO read in about Linux " FC_KV_STR(FC_KV_KVMCLOCK_VDSO) "; "
	  "this kernel is older "
	  "(a distribution kernel may have it backported: measure on the machine)", NULL },
	{ "xen",
	  "the vDSO reads xen only if Xen sets the TSC stable bit and the vCPU time area "
	  "registers; many Xen instances do not",
	  "the xen clocksource gained its vDSO read in about Linux " FC_KV_STR(FC_KV_XEN_VDSO)
	  "; this kernel is older", NULL },
	{ "hyperv_clocksource_tsc_page", "the vDSO reads the Hyper-V TSC page",
	  "the vDSO reads the Hyper-V TSC page from about Linux "
	  FC_KV_STR(FC_KV_HYPERV_TSC_PAGE_VDSO) "; this kernel is older", NULL },
	{ "hyperv_clocksource_msr", NULL,
	  "hyperv_clocksource_msr is read with an MSR, which only the kernel can do", NULL },
	{ "hpet",
	  "before Linux " FC_KV_STR(FC_KV_HPET_VDSO_REMOVED) " the vDSO may read the HPET "
	  "itself (distribution kernels took the " FC_KV_STR3(FC_KV_HPET_VDSO_REMOVED_STABLE)
	  " removal too): no system call, but each read is a slow device access",
	  "hpet has no vDSO read since Linux " FC_KV_STR(FC_KV_HPET_VDSO_REMOVED)
	  " (and " FC_KV_STR3(FC_KV_HPET_VDSO_REMOVED_STABLE) ")",
	  "hpet has no vDSO read since Linux " FC_KV_STR(FC_KV_HPET_VDSO_REMOVED)
	  " (kernel version unknown here)" },
	{ "acpi_pm", NULL, "the vDSO never reads acpi_pm: the kernel reads the I/O port", NULL },
	{ "jiffies", NULL, "jiffies counts timer ticks: no vDSO read and only tick resolution", NULL },
	{ "refined-jiffies", NULL, "jiffies counts timer ticks: no vDSO read and only tick resolution", NULL },
	{ "pit", NULL, "the PIT is read through I/O ports by the kernel", NULL },
	{ "arch_sys_counter", "the vDSO reads the arm64 generic timer (cntvct_el0)", NULL, NULL },
	{ "riscv_clocksource", "the vDSO reads the RISC-V time CSR (the SBI firmware may trap rdtime, "
	  "which makes each read slow)",
	  "riscv's vDSO reads the time CSR from about Linux " FC_KV_STR(FC_KV_RISCV_VDSO)
	  " (the generic vDSO); this kernel is older: its clock_gettime makes the system call", NULL },
	{ "MIPS", "the vDSO reads the MIPS CP0 count",
	  "the MIPS vDSO reads the CP0 count from about Linux " FC_KV_STR(FC_KV_MIPS_VDSO) "; this kernel is older",
	  NULL },
	{ "GIC", "the vDSO reads the MIPS GIC counter (a memory-mapped read)",
	  "the MIPS vDSO reads the GIC counter from about Linux " FC_KV_STR(FC_KV_MIPS_VDSO)
	  "; this kernel is older", NULL },
	{ "stick", "the vDSO reads %stick",
	  "the sparc64 vDSO reads %stick from about Linux " FC_KV_STR(FC_KV_SPARC_VDSO) "; this kernel is older",
	  NULL },
	{ "tick", "the vDSO reads %tick",
	  "the sparc64 vDSO reads %tick from about Linux " FC_KV_STR(FC_KV_SPARC_VDSO) "; this kernel is older",
	  NULL },
};

/* What takes the clocksource's vDSO read away on this machine whatever the
 * kernel's version (a 32-bit kernel, the command line, the kernel log): the
 * reason, written into buf, or NULL.  reads: the version gives it one. */
static const char *read_taken_away(const char *name, const struct cd_facts *f, bool reads, char *buf, size_t cap)
{
	const char *why = NULL;
	if (strcmp(name, "kvm-clock") == 0 && cd_kernel_32bit(f))
		why = "32-bit kernels never read kvm-clock in the vDSO (kvm_setup_vsyscall_timeinfo "
		      "is x86-64 only)";
	else if (strcmp(name, "kvm-clock") == 0 && f->kernel.cmd_no_kvmclock_vsyscall)
		why = "no-kvmclock-vsyscall on the command line turns off the vDSO read of kvm-clock";
	else if (strcmp(name, "xen") == 0 && reads && klog_has(f, CD_EV_XEN_NO_VDSO))
		why = "the kernel logged that Xen's pvclock vDSO mode is not supported here";
	if (why) {
		snprintf(buf, cap, "%s", why);
		return buf;
	}
	const struct cd_event *wa = strcmp(name, "arch_sys_counter") == 0 ? cd_arch_timer_vdso_erratum(f) : NULL;
	if (!wa)
		return NULL;
	/* The erratum named as the kernel logged it, for a user to search. */
	snprintf(buf, cap, "the arch_timer workaround for %s replaces the counter read, "
	         "which takes away the vDSO read", wa->name);
	return buf;
}

static void set(struct cd_cs_state *v, const struct fc_cs_state *st, const char *why)
{
	v->vdso = st->vdso;
	v->rank = st->rank;
	v->typical = st->typical;
	snprintf(v->why, sizeof v->why, "%s", why ? why : "");
}

/* The table's state for this clocksource on this kernel and machine, and
 * the reason; all zero for a name the reasons do not hold. */
static void clocksource_state(const char *name, const struct cd_facts *f, struct cd_cs_state *v)
{
	const struct cd_kernel *k = &f->kernel;
	memset(v, 0, sizeof *v);
	const struct fc_cs_fact *cs = fc_cs_fact(name);
	if (!cs) {
		static const struct fc_cs_state unknown = { FC_VDSO_UNKNOWN, 0, "unknown" };
		set(v, &unknown, "a clocksource this tool does not know: measure on the machine");
		return;
	}
	bool reads = fc_cs_vdso_reads(cs, k->ver_major, k->ver_minor, k->ver_patch);
	char taken[sizeof v->why];
	if (read_taken_away(name, f, reads, taken, sizeof taken)) {
		set(v, &cs->unread, taken);
		return;
	}
	for (size_t i = 0; i < CD_ARRAY_LEN(reasons); i++) {
		if (strcmp(reasons[i].name, name) != 0)
			continue;
		const char *why = reads ? reasons[i].read : reasons[i].unread;
		if (k->ver_major < 0 && reasons[i].unknown_kernel)
			why = reasons[i].unknown_kernel;
		set(v, reads ? &cs->read : &cs->unread, why);
		return;
	}
	/* The rest of the table says why in its own words. */
	set(v, reads ? &cs->read : &cs->unread, cs->note);
}

void cd_clocksource_state(const char *name, const struct cd_facts *f, struct cd_cs_state *v)
{
	clocksource_state(name, f, v);
	if (!cd_kernel_no_vdso_time(f) || v->vdso == CD_VDSO_NO || v->vdso == CD_VDSO_UNKNOWN)
		return;
	/* The rank stays the clocksource's: a faster one still makes a cheaper
	 * system call. */
	v->vdso = CD_VDSO_NO;
	if (v->rank == 1)
		v->typical = "150-300 ns (a system call)";
	snprintf(v->why, sizeof v->why,
	         "a 32-bit x86 kernel older than " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME) " has no clock_gettime "
	         "in its vDSO (it came with commit 7a59ed415f5b in " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME) "): every "
	         "time call is a system call, whatever the "
	         "clocksource");
}
