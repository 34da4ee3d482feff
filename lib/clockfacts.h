/* SPDX-License-Identifier: MIT */
/*
 * clockfacts.h: the timekeeping facts of the Linux kernel that both
 * libfastclock and the clockdoctor command rest on, in one place.
 *
 * Every kernel version a rule depends on is a named constant here, each
 * citing the change that made it true (the commit and its title, the pull
 * request or the release); the per-clocksource facts (does the vDSO read it
 * on this kernel, what does a call typically cost, which counter is read)
 * are the table in clockfacts.c.  Nothing elsewhere types these numbers:
 * tests/cli/test_docs.py greps for it.  docs/timekeeping.md explains the
 * same facts to a user, with the same sources.
 *
 * A version constant is a "major, minor, patch" triple, so that it can be
 * passed straight to a comparison (cd_kernel_compare(k, FC_KV_...),
 * fc_kver_compare) and spelled in a message with FC_KV_STR (major.minor) or
 * FC_KV_STR3 (major.minor.patch, for stable releases).
 *
 * "Unverified" below means the version could not be checked against the
 * kernel's history here: it comes from the change's date and the merge
 * window it fell in, and the command's own text says "about" for it.
 */
#ifndef FC_CLOCKFACTS_H
#define FC_CLOCKFACTS_H

#include <stdbool.h>

/* ---- kernel versions that changed what the vDSO can read ---- */

/* hpet: the vDSO stopped reading the HPET itself.  Commit 1ed95e52d902
 * "x86/vdso: Remove direct HPET access through the vDSO" (Andy Lutomirski,
 * 2016-04; 4.7 merge window), and in stable 4.4.190 as d96d87834d5b (Greg
 * Kroah-Hartman's 4.4 review series, 2019-08-22, patch 71/78). */
#define FC_KV_HPET_VDSO_REMOVED        4, 7, 0
#define FC_KV_HPET_VDSO_REMOVED_STABLE 4, 4, 190

/* kvm-clock: the vDSO reads the pvclock page (VCLOCK_PVCLOCK, set by
 * kvm_setup_vsyscall_timeinfo in arch/x86/kernel/kvmclock.c only while
 * the host sets PVCLOCK_TSC_STABLE_BIT).  Marcelo Tosatti's "pvclock
 * vsyscall support" series (2012); release 3.8 unverified. */
#define FC_KV_KVMCLOCK_VDSO            3, 8, 0

/* hyperv_clocksource_tsc_page: "x86/vdso: Add VCLOCK_HVCLOCK vDSO clock
 * read method" (Vitaly Kuznetsov; the title verified in SUSE's backport
 * changelog, bsc#1133308); release 4.11 unverified. */
#define FC_KV_HYPERV_TSC_PAGE_VDSO     4, 11, 0

/* xen: "x86/xen/time: setup vcpu 0 time info page" and "x86/xen/time: set
 * pvclock flags on xen_time_init()" (Joao Martins; the titles verified in
 * SUSE's backport changelog, bsc#1098382); release 4.15 unverified. */
#define FC_KV_XEN_VDSO                 4, 15, 0

/* 32-bit x86 kernels: the vDSO gained clock_gettime.  Commit 7a59ed415f5b
 * "x86, vdso: Add 32 bit VDSO time support for 32 bit kernel" (Stefani
 * Seibold, 2014-03), "new in 3.15" (Andy Lutomirski, LKML, 2014-05). */
#define FC_KV_X86_32_VDSO_GETTIME      3, 15, 0

/* 32-bit and x32 programs on kvm-clock: only the 64-bit vDSO read the
 * pvclock page until "x86/vdso: Enable vdso pvclock access on all vdso
 * variants" (Andy Lutomirski, patch of 2015-12; unverified: about 4.5). */
#define FC_KV_PVCLOCK_COMPAT_VDSO      4, 5, 0

/* The kernel sets TSC_ADJUST back when firmware wrote it ("x86/tsc:
 * Verify TSC_ADJUST from idle", Thomas Gleixner; unverified: about 4.10). */
#define FC_KV_TSC_ADJUST_RESTORE       4, 10, 0

/* BPF programs attached to the syscall tracepoints (sys_enter_*), which
 * `clockdoctor top` uses to count each process's calls exactly: "bpf: add
 * support for sys_enter_* and sys_exit_* tracepoints" (Yonghong Song,
 * 2017-08; unverified: 4.14).  Not a clock fact, but a kernel version the
 * command states. */
#define FC_KV_BPF_SYSCALL_TRACEPOINTS  4, 14, 0

/* The "hypervisor" flag in /proc/cpuinfo (X86_FEATURE_HYPERVISOR shown to
 * user space; unverified: about 2.6.30): before it, its absence says
 * nothing. */
#define FC_KV_CPUINFO_HYPERVISOR_FLAG  2, 6, 30

/* x86: CLOCK_TAI in the vDSO came with Thomas Gleixner's rework of the x86
 * vDSO (unverified: about 4.20); CLOCK_BOOTTIME and CLOCK_MONOTONIC_RAW
 * with "x86/vdso: Switch to generic vDSO implementation" (Vincenzo
 * Frascino; unverified: about 5.3).  Before them, those ids are system
 * calls on every clocksource. */
#define FC_KV_X86_VDSO_TAI             4, 20, 0
#define FC_KV_X86_GENERIC_VDSO         5, 3, 0

/* MIPS: the vDSO reads the CP0 count ("MIPS", csrc-r4k.c) and the GIC
 * counter ("GIC", mips-gic-timer.c) from "MIPS: VDSO: Add implementations
 * of gettimeofday() and clock_gettime()" (Alex Smith, Markos Chandras,
 * linux-mips 2015-10; VDSO_CLOCK_R4K and VDSO_CLOCK_GIC in
 * arch/mips/include/asm/clocksource.h); release 4.4 unverified. */
#define FC_KV_MIPS_VDSO                4, 4, 0

/* sparc64: the vDSO reads %tick and %stick (VCLOCK_TICK, VCLOCK_STICK in
 * arch/sparc/include/asm/clocksource.h, Oracle 2017: "sparc64: vDSO
 * support", Nagarathnam Muthusamy); release 4.13 unverified. */
#define FC_KV_SPARC_VDSO               4, 13, 0

/* riscv: the vDSO's clock_gettime made the system call until "riscv: use
 * vDSO common flow to reduce the latency of the time-related functions"
 * (Vincent Chen, 2020) moved riscv to the generic vDSO, which reads the
 * timer CSR (VDSO_CLOCKMODE_ARCHTIMER); release 5.8 unverified. */
#define FC_KV_RISCV_VDSO               5, 8, 0

/* ---- kernel versions that changed what a boot parameter means ---- */

/* tsc=reliable reaches the boot-time TSC sync check: "x86, tsc: Skip TSC
 * synchronization checks for tsc=reliable" (Suresh Siddha; the title
 * verified in Red Hat's 2.6.32-220.10.1.el6 and Oracle's UEK
 * 2.6.32-300.7.1 changelogs, 2012, which backported it); mainline 3.3
 * unverified.  Before it check_tsc_sync_source() skipped the test only for
 * CPUs flagged X86_FEATURE_TSC_RELIABLE (set by VMware's platform code). */
#define FC_KV_TSC_RELIABLE_SKIPS_SYNC  3, 3, 0

/* tsc=nowatchdog: "x86/tsc: Add option to disable tsc clocksource
 * watchdog" (Juri Lelli), in Ingo Molnar's "[GIT PULL] x86/timers updates
 * for v5.2" (LKML, 2019-05-06). */
#define FC_KV_TSC_NOWATCHDOG           5, 2, 0

/* tsc-early, the TSC's first clocksource (Pavel Tatashin's early TSC
 * series; unverified: about 4.18), ignored tsc=reliable and tsc=nowatchdog
 * until commit 63ec58b44fcc "x86/tsc: Respect tsc command line paraemeter
 * for clocksource_tsc_early" (Michael Zhivich), in the x86-urgent pull at
 * 5.4-rc7 (LKML, 2019-11), also taken into 5.3.y stable (2019-12). */
#define FC_KV_TSC_EARLY                4, 18, 0
#define FC_KV_TSC_EARLY_HONOURS_PARAMS 5, 4, 0

/* The kernel turns the TSC watchdog off by itself on CPUs with
 * constant_tsc, nonstop_tsc and TSC_ADJUST and at most 2 sockets: commit
 * b50db7095fe0 "x86/tsc: Disable clocksource watchdog for TSC on
 * qualified platorms" (Feng Tang), "since kernel 5.16-rc4" (Doug
 * Smythies, LKML, 2022-02); also in 5.15.y and older stable trees. */
#define FC_KV_TSC_WATCHDOG_SELF_OFF    5, 16, 0

/* The watchdog re-reads its clocksource when the read itself took too long
 * and blames "read-back delay" instead of the clocksource: "clocksource:
 * Retry clock read if long delays detected" (Paul E. McKenney, 2021;
 * unverified: about 5.14).  From then on a skew it reports is one no
 * read-back delay explains. */
#define FC_KV_WATCHDOG_READ_RETRY      5, 14, 0

/* ---- a clocksource's own constants ---- */

/* The ACPI PM timer counts at 3.579545 MHz (ACPI specification, "PM
 * Timer"; PMTMR_TICKS_PER_SEC in include/linux/acpi_pmtmr.h). */
#define FC_ACPI_PM_HZ 3579545.0

/* Spelling a version constant: FC_KV_STR(FC_KV_TSC_NOWATCHDOG) is "5.2",
 * FC_KV_STR3(FC_KV_HPET_VDSO_REMOVED_STABLE) is "4.4.190".  String
 * literals, so that they join a printf format at compile time. */
#define FC_KV_STR(v) FC_KV_STR_(v)
#define FC_KV_STR_(maj, min, patch) #maj "." #min
#define FC_KV_STR3(v) FC_KV_STR3_(v)
#define FC_KV_STR3_(maj, min, patch) #maj "." #min "." #patch

/* A kernel's version against a version constant.  An unknown version is
 * its own answer, never "older" or "newer": each caller says what it takes
 * an unknown kernel for (most take it for a current one). */
enum fc_kver {
	FC_KVER_UNKNOWN = 0,    /* the kernel's version is not known */
	FC_KVER_OLDER,          /* before the version */
	FC_KVER_SAME_OR_NEWER,  /* the version, or a later one */
};

/* Kernel maj.min.patch (maj < 0: unknown) against want_maj.want_min.want_patch. */
enum fc_kver fc_kver_compare(int maj, int min, int patch, int want_maj, int want_min, int want_patch);

/* ---- what the vDSO does with each clocksource ---- */

enum fc_vdso {
	FC_VDSO_UNKNOWN = 0,  /* a clocksource the table does not know */
	FC_VDSO_YES,          /* the vDSO reads it without a system call */
	FC_VDSO_NO,           /* every high-resolution time call is a system call */
	FC_VDSO_DEPENDS,      /* the vDSO reads it while the host allows (kvm-clock, xen) */
	FC_VDSO_SLOW,         /* the vDSO reads it, but the read is a slow device access (old hpet) */
};

/* How calls go in one state of a clocksource. */
struct fc_cs_state {
	enum fc_vdso vdso;
	int rank;             /* 1 fastest (vDSO), 2 hpet-class, 3 acpi_pm-class, 4 tick-based; 0 unknown */
	const char *typical;  /* the typical cost of one call, for people: "15-60 ns" */
};

struct fc_cs_fact {
	const char *name;         /* as in available_clocksource */
	const char *counter;      /* what a read reads */
	bool cpu_counter;         /* its time is the CPU's own counter (TSC, cntvct) scaled */
	bool paravirt;            /* a hypervisor's clock (kvm-clock, xen, Hyper-V's) */
	struct fc_cs_state read;  /* while the vDSO has a read for it */
	struct fc_cs_state unread; /* while it has none: every call a system call */
	/* The kernel from which the vDSO reads it (gained) or no longer does
	 * (removed); all zero when it never changed. */
	bool removed;
	int change[3];
	int change_stable[3];     /* a stable release that took the change; zero: none known */
	const char *arch;         /* where Linux registers it: "x86", "arm/arm64", ...; NULL: any */
	/* Why the vDSO reads it or not, for people, when the command has no
	 * more precise words for the kernel at hand (diagnose/clocksources.c). */
	const char *note;
};

/* The table's entry for a clocksource name, or NULL: an exact name first,
 * then the rule for the SoC and board timers of arm, arm64 and the other
 * embedded architectures, whose drivers pick names of their own ("timer",
 * "mxc_timer1", "mct-frc", "hstimer", "dw-apb-timer1", ...): every one of
 * them is a memory-mapped device that no vDSO reads (only arch_sys_counter
 * has a vDSO mode on arm and arm64).  A name neither the table nor the rule
 * knows is NULL, never a guess. */
const struct fc_cs_fact *fc_cs_fact(const char *name);

/* Whether this kernel's vDSO has a read for the clocksource, by version
 * alone (maj < 0: unknown, taken as a current kernel).  Hosts, 32-bit
 * kernels, boot parameters and errata can take it away: the command judges
 * those, which the library cannot see. */
bool fc_cs_vdso_reads(const struct fc_cs_fact *cs, int maj, int min, int patch);

/* The state for that kernel: fc_cs_vdso_reads ? read : unread. */
const struct fc_cs_state *fc_cs_state(const struct fc_cs_fact *cs, int maj, int min, int patch);

/* The answer for a program that cannot see the host: 1 for YES and
 * DEPENDS (kvm-clock and xen are served while the host allows, the usual
 * case), 0 for NO and SLOW, -1 unknown. */
int fc_vdso_usually_fast(enum fc_vdso v);

/* The answer when only a certainty counts: 1 for YES, 0 for NO and SLOW,
 * -1 for DEPENDS and unknown. */
int fc_vdso_surely_fast(enum fc_vdso v);

/* True when the kernel's clocks on this clocksource are the CPU's own
 * counter scaled (tsc, kvm-clock, xen, the Hyper-V clocksources,
 * arch_sys_counter): measuring the counter against them checks the
 * kernel's conversion, not the counter against another oscillator. */
bool fc_cs_is_cpu_counter(const char *name);

/* True when the clocksource is a hypervisor's paravirtual clock (kvm-clock,
 * xen, Hyper-V's two): the kernel rates it above the TSC. */
bool fc_cs_is_paravirt(const char *name);

/* The table itself, for tests: n entries. */
const struct fc_cs_fact *fc_cs_table(int *n);

#endif
