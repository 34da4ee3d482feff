/*
 * clocksources.c: what this kernel's vDSO can do with each clocksource.
 *
 * The vDSO serves a high-resolution clock id itself only when the current
 * clocksource has a vDSO clock mode (lib/vdso/gettimeofday.c); otherwise the
 * call becomes a real system call that reads the device.  Which clocksources
 * have a mode changed over the kernel's history, so each verdict names the
 * version rule it rests on.  Versions marked "about" come from merge dates
 * (knowledge.md), and the text says so.
 */
#include "diagnose/diagnose.h"
#include "probe/probe.h"

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
static bool arch_timer_loses_vdso(const struct cd_facts *f)
{
	static const char *const errata[] = { "858921", "a008585", "161010101", "UNKNOWN1", "unstable timer" };
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind != CD_EV_ARCH_TIMER_WORKAROUND)
			continue;
		for (size_t k = 0; k < sizeof errata / sizeof errata[0]; k++)
			if (strstr(e->name, errata[k]) || strstr(e->line, errata[k]))
				return true;
	}
	return false;
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
 * makes the system call whatever the clocksource. */
bool cd_kernel_no_vdso_time(const struct cd_facts *f)
{
	return cd_kernel_32bit(f) && cd_kernel_at_least(&f->kernel, 3, 15, 0) == 0;
}

static void set(struct cd_cs_verdict *v, enum cd_vdso vdso, int rank, const char *typical, const char *why)
{
	v->vdso = vdso;
	v->rank = rank;
	v->typical = typical;
	snprintf(v->why, sizeof v->why, "%s", why);
}

/* hpet lost its vDSO read in 4.7 ("x86/vdso: Remove direct HPET access
 * through the vDSO"), and the change went to 4.4.y at 4.4.190. */
static bool hpet_vdso_removed(const struct cd_kernel *k)
{
	if (cd_kernel_at_least(k, 4, 7, 0) == 1)
		return true;
	if (k->ver_major == 4 && k->ver_minor == 4 && k->ver_patch >= 190)
		return true;
	return false;
}

static void clocksource_verdict(const char *name, const struct cd_facts *f, struct cd_cs_verdict *v);

void cd_clocksource_verdict(const char *name, const struct cd_facts *f, struct cd_cs_verdict *v)
{
	clocksource_verdict(name, f, v);
	if (!cd_kernel_no_vdso_time(f) || v->vdso == CD_VDSO_NO || v->vdso == CD_VDSO_UNKNOWN)
		return;
	/* The rank stays the clocksource's: a faster one still makes a cheaper
	 * system call. */
	v->vdso = CD_VDSO_NO;
	if (v->rank == 1)
		v->typical = "150-300 ns (a system call)";
	snprintf(v->why, sizeof v->why,
	         "a 32-bit x86 kernel older than 3.15 has no clock_gettime in its vDSO (it came with "
	         "commit 7a59ed415f5b in 3.15): every time call is a system call, whatever the "
	         "clocksource");
}

static void clocksource_verdict(const char *name, const struct cd_facts *f, struct cd_cs_verdict *v)
{
	const struct cd_kernel *k = &f->kernel;
	memset(v, 0, sizeof *v);
	if (strcmp(name, "tsc") == 0 || strcmp(name, "tsc-early") == 0) {
		set(v, CD_VDSO_YES, 1, "15-60 ns", "the vDSO reads the TSC without a system call");
	} else if (strcmp(name, "kvm-clock") == 0) {
		if (cd_kernel_32bit(f))
			set(v, CD_VDSO_NO, 2, "150-300 ns",
			    "32-bit kernels never read kvm-clock in the vDSO (kvm_setup_vsyscall_timeinfo "
			    "is x86-64 only)");
		else if (k->cmd_no_kvmclock_vsyscall)
			set(v, CD_VDSO_NO, 2, "150-300 ns",
			    "no-kvmclock-vsyscall on the command line turns off the vDSO read of kvm-clock");
		else if (cd_kernel_at_least(k, 3, 8, 0) == 0)
			set(v, CD_VDSO_NO, 2, "150-300 ns",
			    "kvm-clock gained its vDSO read in about Linux 3.8; this kernel is older "
			    "(a distribution kernel may have it backported: measure on the machine)");
		else
			set(v, CD_VDSO_DEPENDS, 1, "about 30 ns when served",
			    "the vDSO reads kvm-clock only while the host sets PVCLOCK_TSC_STABLE_BIT "
			    "(host on tsc, vCPU TSCs matched); otherwise every call is a system call");
	} else if (strcmp(name, "xen") == 0) {
		if (cd_kernel_at_least(k, 4, 15, 0) == 0)
			set(v, CD_VDSO_NO, 2, "about 0.5-1 us",
			    "the xen clocksource gained its vDSO read in about Linux 4.15; this kernel is "
			    "older");
		else if (klog_has(f, CD_EV_XEN_NO_VDSO))
			set(v, CD_VDSO_NO, 2, "about 0.5-1 us",
			    "the kernel logged that Xen's pvclock vDSO mode is not supported here");
		else
			set(v, CD_VDSO_DEPENDS, 2, "about 0.5-1 us as a system call",
			    "the vDSO reads xen only if Xen sets the TSC stable bit and the vCPU time area "
			    "registers; many Xen instances do not");
	} else if (strcmp(name, "hyperv_clocksource_tsc_page") == 0) {
		if (cd_kernel_at_least(k, 4, 11, 0) == 0)
			set(v, CD_VDSO_NO, 2, "about 0.3-1 us",
			    "the vDSO reads the Hyper-V TSC page from about Linux 4.11; this kernel is older");
		else
			set(v, CD_VDSO_YES, 1, "about 30 ns", "the vDSO reads the Hyper-V TSC page");
	} else if (strcmp(name, "hyperv_clocksource_msr") == 0) {
		set(v, CD_VDSO_NO, 3, "about 1 us", "hyperv_clocksource_msr is read with an MSR, which only the kernel can do");
	} else if (strcmp(name, "hpet") == 0) {
		if (k->ver_major < 0)
			set(v, CD_VDSO_NO, 2, "0.7-1.2 us",
			    "hpet has no vDSO read since Linux 4.7 (kernel version unknown here)");
		else if (hpet_vdso_removed(k))
			set(v, CD_VDSO_NO, 2, "0.7-1.2 us",
			    "hpet has no vDSO read since Linux 4.7 (and 4.4.190)");
		else
			set(v, CD_VDSO_SLOW, 2, "0.5-1 us",
			    "before Linux 4.7 the vDSO may read the HPET itself (distribution kernels "
			    "took the 4.4.190 removal too): no system call, but each read is a slow "
			    "device access");
	} else if (strcmp(name, "acpi_pm") == 0) {
		set(v, CD_VDSO_NO, 3, "2-2.5 us", "the vDSO never reads acpi_pm: the kernel reads the I/O port");
	} else if (strcmp(name, "jiffies") == 0 || strcmp(name, "refined-jiffies") == 0) {
		set(v, CD_VDSO_NO, 4, "a system call, tick resolution",
		    "jiffies counts timer ticks: no vDSO read and only tick resolution");
	} else if (strcmp(name, "pit") == 0) {
		set(v, CD_VDSO_NO, 4, "several us", "the PIT is read through I/O ports by the kernel");
	} else if (strcmp(name, "arch_sys_counter") == 0) {
		if (arch_timer_loses_vdso(f))
			set(v, CD_VDSO_NO, 2, "0.2-1 us",
			    "an arch_timer erratum workaround replaces the counter read, which takes "
			    "away the vDSO read");
		else
			set(v, CD_VDSO_YES, 1, "20-40 ns", "the vDSO reads the arm64 generic timer (cntvct_el0)");
	} else {
		set(v, CD_VDSO_UNKNOWN, 0, "unknown", "a clocksource this tool does not know: measure on the machine");
	}
}
