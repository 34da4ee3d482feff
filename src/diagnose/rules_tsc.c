/* SPDX-License-Identifier: MIT */
/*
 * rules_tsc.c: the rules about the TSC itself: why the kernel rejected it
 * (the boot-time sync test, the run-time watchdog), whether the CPU promises
 * an invariant one, whether the kernel was told to trust it, whether this
 * kernel can be told at all, and what clockdoctor's own test measured.
 */
#include "diagnose/fixes.h"
#include "diagnose/rules.h"
#include "diagnose/tscjudge.h"
#include "output/duration.h"
#include "probe/probe.h"

#include "clockfacts.h"

#include <stdio.h>
#include <string.h>

/* After a rejection: switch to something faster that is listed, or say that
 * the TSC itself cannot come back before a reboot. */
static void fix_now_after_rejection(const struct cd_ctx *c, struct cd_finding *x)
{
	if (cd_better_listed(c))
		cd_act_switch_now(x, c->best);
	else
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The TSC cannot be switched back on without a reboot: the kernel removed it "
		           "from the list.\n");
}

void cd_rule_tsc_unstable_sync(struct cd_ctx *c)
{
	if (!c->rejected_sync)
		return;
	const struct cd_facts *f = c->f;
	struct cd_finding *x;
	/* A kernel on the TSC now, whose log says it failed the test: a log of
	 * another boot, or a CPU brought online later.  Worth knowing, no more. */
	bool on_tsc = cd_current_is(c, "tsc");
	enum cd_severity sev = on_tsc ? CD_SEV_INFO : CD_SEV_WARNING;
	const char *when = c->warp && c->warp->ts > 5 ? "when a CPU came online" : "at boot";
	/* The CPUs come from the header line before the Measured one; a log
	 * that lost it names none, and neither does the title. */
	const struct cd_event *hdr = c->warp && c->warp->cpu_a >= 0 ? c->warp : c->sync_header;
	char between[64] = "";
	if (hdr && hdr->cpu_a >= 0 && hdr->cpu_b >= 0)
		snprintf(between, sizeof between, " between CPU#%d and CPU#%d", hdr->cpu_a, hdr->cpu_b);
	if (c->warp)
		x = cd_add_finding(c, "tsc-unstable-sync", sev, "The kernel rejected the TSC %s: a warp of %lld cycles%s",
		        when, (long long)c->warp->value, between[0] ? between : " between CPUs");
	else if (hdr)
		x = cd_add_finding(c, "tsc-unstable-sync", sev,
		        "The kernel rejected the TSC %s: a warp%s (its size is not in this log)", when, between);
	else
		x = cd_add_finding(c, "tsc-unstable-sync", sev, "The kernel rejected the TSC at boot: %s",
		        c->unstable ? c->unstable->name : "the TSCs are not synchronized");
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind == CD_EV_TSC_SYNC_HEADER || e->kind == CD_EV_TSC_WARP ||
		    (e->kind == CD_EV_TSC_UNSTABLE && cd_reason_is_sync(e->name)))
			cd_evidence_event(x, e);
	}
	if (c->warp && c->tsc_mhz > 0)
		cd_evidence(x, "%lld cycles at %.3f MHz is about %.0f ns", (long long)c->warp->value, c->tsc_mhz,
		            (double)c->warp->value * 1e3 / c->tsc_mhz);
	/* unsynchronized_tsc() (arch/x86/kernel/tsc.c) assumes a non-Intel CPU
	 * without constant_tsc unsynchronized on more than one CPU (package, in
	 * recent kernels); on Intel the cause is a clustered APIC box, which
	 * tsc=reliable does not change. */
	if (c->unstable && strstr(c->unstable->name, "unsynchronized") && f->cpu.have_cpuinfo &&
	    !(f->cpu.flags & CD_CPU_CONSTANT_TSC) && f->cpu.count > 1 &&
	    strcmp(f->cpu.vendor, "GenuineIntel") != 0)
		cd_evidence(x, "the CPU (%s) has no constant_tsc and there are %d CPUs: the kernel then "
		            "assumes the TSCs are unsynchronized (unsynchronized_tsc() in "
		            "arch/x86/kernel/tsc.c)",
		            f->cpu.vendor[0] ? f->cpu.vendor : "vendor unknown", f->cpu.count);
	if (f->kernel.cmd_tsc_reliable)
		cd_evidence(x, "tsc=reliable is on the command line, yet the TSC was rejected");
	if (on_tsc) {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The kernel runs on tsc now: nothing slows time calls. If this log is from this "
		           "boot, a CPU that came online later disagreed with the others: run "
		           "`clockdoctor tsc` to measure the warp between every pair of CPUs.\n");
		return;
	}
	fix_now_after_rejection(c, x);
	cd_lasting_fix(c, x);
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
	if (!x->risk[0] && cd_tsc_params(c)[0])
		cd_tsc_risk(c, x);
}

/* The watchdog's counters as evidence: how long its interval was, and how
 * far the TSC ran in it.  acpi_pm ticks at exactly 3.579545 MHz, so its
 * interval can be computed; other watchdogs only when the kernel printed
 * wd_nsec. */
static void watchdog_numbers(const struct cd_ctx *c, struct cd_finding *x, const struct cd_event *e)
{
	double wd_s = 0;
	if (e->value > 0)
		wd_s = (double)e->value / 1e9;
	else if (strcmp(e->name2, "acpi_pm") == 0 && e->wd_cycles)
		wd_s = (double)e->wd_cycles / FC_ACPI_PM_HZ;
	if (wd_s > 0) {
		cd_evidence(x, "the watchdog %s measured an interval of %.1f ms", e->name2, wd_s * 1e3);
		if (e->value2 > 0)
			cd_evidence(x, "the TSC measured %.1f ms over the same interval: a skew of %.1f ms",
			         (double)e->value2 / 1e6, ((double)e->value2 - wd_s * 1e9) / 1e6);
		else if (e->cs_cycles && c->tsc_mhz > 0) {
			double tsc_s = (double)e->cs_cycles / (c->tsc_mhz * 1e6);
			cd_evidence(x, "the TSC advanced %llu cycles, %.1f ms at %.3f MHz: a skew of %.1f ms",
			         (unsigned long long)e->cs_cycles, tsc_s * 1e3, c->tsc_mhz, (tsc_s - wd_s) * 1e3);
		} else if (e->cs_cycles) {
			cd_evidence(x, "the TSC advanced %llu cycles over it, which would be a TSC of %.1f MHz; "
			            "compare with the CPU's real TSC frequency",
			         (unsigned long long)e->cs_cycles, (double)e->cs_cycles / wd_s / 1e6);
		}
	}
}

/* The watchdog's lines and numbers as evidence.  failover_hint: RHEL 6's
 * line, which says it did not fail over. */
static void watchdog_evidence(const struct cd_ctx *c, struct cd_finding *x, bool failover_hint)
{
	const struct cd_facts *f = c->f;
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *q = &f->klog.events[i];
		if ((q->kind == CD_EV_WATCHDOG_SKEW && strncmp(q->name, "tsc", 3) == 0) ||
		    (q->kind == CD_EV_CS_UNSTABLE_DELTA && strncmp(q->name, "tsc", 3) == 0) ||
		    (q->kind == CD_EV_TSC_UNSTABLE && strstr(q->name, "watchdog")) ||
		    q->kind == CD_EV_WD_READBACK_EXCESSIVE || q->kind == CD_EV_CS_SWITCHED)
			cd_evidence_event(x, q);
	}
	if (c->wd_skew)
		watchdog_numbers(c, x, c->wd_skew);
	if (c->wd_delta) {
		long long d = (long long)c->wd_delta->value;
		cd_evidence(x, "the TSC and the watchdog disagreed by %lld ns (%.2f s)", d, (double)d / 1e9);
	}
	/* Numbers the log did not give (a line cut short) are not written as 0. */
	if (c->wd_readback && c->wd_readback->value > 0 && c->wd_readback->value2 > 0)
		cd_evidence(x, "the watchdog blamed read-back delay (%lld ns against a limit of %lld ns): "
		            "a sign of SMIs, NMIs or an overloaded host rather than of a bad TSC",
		         (long long)c->wd_readback->value, (long long)c->wd_readback->value2);
	else if (c->wd_readback && c->wd_readback->value > 0)
		cd_evidence(x, "the watchdog blamed read-back delay (%lld ns): a sign of SMIs, NMIs or an "
		            "overloaded host rather than of a bad TSC", (long long)c->wd_readback->value);
	else if (c->wd_readback)
		cd_evidence(x, "the watchdog blamed read-back delay (its size is not in this log): a sign "
		            "of SMIs, NMIs or an overloaded host rather than of a bad TSC");
	if (failover_hint)
		cd_evidence(x, "this is a RHEL 6 kernel, which does not fail over by default: the current "
		            "clocksource stays %s", f->cs.have_current ? f->cs.current : "as it was");
}

/* The rejection did not slow time calls (the kernel kept its clocksource,
 * or runs on a paravirtual or a fast one): the cause is still worth
 * finding. */
static void watchdog_not_slowing(const struct cd_ctx *c, struct cd_finding *x, bool failover_hint)
{
	/* The size of the disagreement as the kernel printed it. */
	char by[80] = "";
	if (c->wd_delta)
		snprintf(by, sizeof by, ", by %lld ns (%.2f s)", (long long)c->wd_delta->value,
		         (double)c->wd_delta->value / 1e9);
	if (c->cur_known)
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "This rejection does not slow time calls: the current clocksource is %s. ",
		           c->f->cs.current);
	else
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "This report does not slow time calls: without clocksource_failover on its "
		           "command line this kernel keeps the clocksource it had (the TSC, when it was "
		           "on it). ");
	cd_appendf(x->fix_now, sizeof x->fix_now,
	           "The TSC was still seen disagreeing with the watchdog%s: find the cause on the host "
	           "(one such cause: a host reloading a passthrough NIC's VF driver made its "
	           "guests' clocks jump) and keep NTP or chrony running.\n", by);
	if (failover_hint)
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "Do not follow the advice to add clocksource_failover=acpi_pm: acpi_pm "
		           "costs about 2 us a call, the slowest clocksource there is.\n");
}

/* On a kernel known to turn the watchdog off by itself on qualified CPUs:
 * which of the flags it needs this CPU lacks. */
static void watchdog_self_off_note(const struct cd_ctx *c, struct cd_finding *x)
{
	static const struct { unsigned flag; const char *name; } need[] = {
		{ CD_CPU_CONSTANT_TSC, "constant_tsc" },
		{ CD_CPU_NONSTOP_TSC, "nonstop_tsc" },
		{ CD_CPU_TSC_ADJUST, "tsc_adjust" },
	};
	const struct cd_facts *f = c->f;
	if (cd_kernel_compare(&f->kernel, FC_KV_TSC_WATCHDOG_SELF_OFF) != FC_KVER_SAME_OR_NEWER)
		return;
	char missing[64] = "";
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (!(f->cpu.flags & need[i].flag))
			cd_appendf(missing, sizeof missing, "%s%s", missing[0] ? ", " : "", need[i].name);
	if (f->cpu.have_cpuinfo && missing[0])
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "(Since about " FC_KV_STR(FC_KV_TSC_WATCHDOG_SELF_OFF) " the kernel turns the watchdog off by itself on CPUs with "
		           "constant_tsc, nonstop_tsc and tsc_adjust; this CPU lacks %s.)\n", missing);
}

void cd_rule_tsc_unstable_watchdog(struct cd_ctx *c)
{
	if (!c->rejected_watchdog)
		return;
	const struct cd_facts *f = c->f;
	const struct cd_event *e = c->wd_skew ? c->wd_skew : c->wd_delta ? c->wd_delta : c->unstable;
	char when[64] = "an unknown time";
	if (e && e->ts >= 0)
		cd_fmt_duration_s(when, sizeof when, e->ts);
	const char *wd = c->wd_skew && c->wd_skew->name2[0] ? c->wd_skew->name2 : NULL;
	/* RHEL 6 fails over only with clocksource_failover: without it the
	 * line is a report, and the kernel keeps the clocksource it had. */
	bool failover_hint = c->wd_delta && strstr(c->wd_delta->line, "clocksource_failover");
	bool kept = failover_hint && !f->kernel.cmd_clocksource_failover && !c->wd_skew;
	struct cd_finding *x;
	if (kept)
		x = cd_add_finding(c, "tsc-unstable-watchdog", CD_SEV_WARNING,
		        "The clocksource watchdog found the TSC unstable after %s of uptime (without "
		        "clocksource_failover this kernel only reports it)", when);
	else if (wd)
		x = cd_add_finding(c, "tsc-unstable-watchdog", CD_SEV_WARNING,
		        "The clocksource watchdog rejected the TSC after %s of uptime, against %s", when, wd);
	else
		x = cd_add_finding(c, "tsc-unstable-watchdog", CD_SEV_WARNING,
		        "The clocksource watchdog rejected the TSC after %s of uptime", when);
	watchdog_evidence(c, x, failover_hint);
	if (kept || cd_paravirt_current(c) || (c->cur_known && !cd_current_slow(c))) {
		watchdog_not_slowing(c, x, failover_hint);
		return;
	}
	fix_now_after_rejection(c, x);
	cd_lasting_fix(c, x);
	watchdog_self_off_note(c, x);
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
	if (!x->risk[0] && cd_tsc_params(c)[0])
		cd_tsc_risk(c, x);
}

void cd_rule_tsc_not_invariant(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	if (!f->cpu.have_cpuinfo || !(f->cpu.flags & CD_CPU_TSC))
		return;
	bool constant = f->cpu.flags & CD_CPU_CONSTANT_TSC, nonstop = f->cpu.flags & CD_CPU_NONSTOP_TSC;
	if (constant && nonstop)
		return;
	/* Trusting such a TSC is a real risk only where this report is about to
	 * advise it: the current clocksource is slow.  A machine that already
	 * runs happily on it only learns a fact. */
	enum cd_severity sev = (!constant && cd_current_slow(c)) ? CD_SEV_WARNING : CD_SEV_INFO;
	struct cd_finding *x = cd_add_finding(c, "tsc-not-invariant", sev,
	                           "The CPU does not promise an invariant TSC (%s%s%s)",
	                           constant ? "" : "no constant_tsc", !constant && !nonstop ? ", " : "",
	                           nonstop ? "" : "no nonstop_tsc");
	cd_evidence(x, "cpuinfo flags: tsc%s%s%s", constant ? " constant_tsc" : "", nonstop ? " nonstop_tsc" : "",
	         f->cpu.flags & CD_CPU_HYPERVISOR ? " hypervisor" : "");
	if (f->cpu.flags != f->cpu.flags_all)
		cd_evidence(x, "the CPUs do not all list the same TSC flags");
	if (f->cpuid.has_invariant)
		cd_evidence(x, "CPUID 0x80000007 EDX[8] (invariant TSC): %d", f->cpuid.invariant_tsc ? 1 : 0);
	if (!constant)
		cd_appendf(x->risk, sizeof x->risk,
		           "Without constant_tsc the TSC may tick at the CPU's current frequency, so "
		           "forcing the kernel to trust it (tsc=reliable) can make time run at the wrong "
		           "rate.\n");
	if (!nonstop)
		cd_appendf(x->risk, sizeof x->risk,
		           "Without nonstop_tsc the TSC may stop in deep C-states%s.\n",
		           (f->cpu.flags & CD_CPU_HYPERVISOR) || (f->hv.kind != CD_HV_NONE && f->hv.kind != CD_HV_UNKNOWN)
		               ? " (hypervisors often hide this flag even when the host has it: the "
		                 "host's CPU is what counts)"
		               : "");
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
}

void cd_rule_tsc_reliable(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	const struct cd_event *skipped = NULL;
	for (int i = 0; i < f->klog.n_events; i++)
		if (f->klog.events[i].kind == CD_EV_TSC_SYNC_SKIPPED && !skipped)
			skipped = &f->klog.events[i];
	struct cd_finding *x;
	if (f->kernel.cmd_tsc_reliable) {
		x = cd_add_finding(c, "tsc-reliable-set", CD_SEV_INFO,
		        "tsc=reliable is in force: the kernel does not check the TSC");
		cd_evidence(x, "/proc/cmdline: %s", f->kernel.cmdline);
	} else if ((f->cpu.flags & CD_CPU_TSC_RELIABLE) || skipped) {
		x = cd_add_finding(c, "tsc-reliable-set", CD_SEV_INFO,
		        "The hypervisor marks the TSC reliable: the kernel does not check it");
		if (f->cpu.flags & CD_CPU_TSC_RELIABLE)
			cd_evidence(x, "cpuinfo flags: tsc_reliable");
	} else {
		return;
	}
	if (skipped)
		cd_evidence_event(x, skipped);
	cd_appendf(x->risk, sizeof x->risk,
	           "With the TSC marked reliable the kernel skips the boot-time sync test between "
	           "CPUs and the run-time watchdog: a TSC that drifts or differs between CPUs will "
	           "not be caught, and time can go backwards between CPUs. Keep NTP or chrony "
	           "running; it is the only check left.\n");
}

/* The boot-time sync test rejected the TSC, and this kernel is known to
 * ignore tsc=reliable in it.  When the kernel's check was right, no kernel
 * that can be told to skip it is a fix (see tsc_unsafe in context.c). */
static bool sync_check_needs_newer_kernel(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	const struct cd_kernel *k = &f->kernel;
	if (!c->rejected_sync || cd_kernel_compare(k, FC_KV_TSC_RELIABLE_SKIPS_SYNC) != FC_KVER_OLDER ||
	    c->tsc_unsafe)
		return false;
	struct cd_finding *x = cd_add_finding(c, "fix-needs-newer-kernel", CD_SEV_WARNING,
	                           "tsc=reliable cannot help on kernel %s: the boot-time sync check "
	                           "ignores it before " FC_KV_STR(FC_KV_TSC_RELIABLE_SKIPS_SYNC), k->release);
	cd_evidence(x, "kernel %s (older than " FC_KV_STR(FC_KV_TSC_RELIABLE_SKIPS_SYNC) ")", k->release);
	cd_evidence(x, "before " FC_KV_STR(FC_KV_TSC_RELIABLE_SKIPS_SYNC) ", check_tsc_sync_source() "
	            "skips the test only for CPUs flagged X86_FEATURE_TSC_RELIABLE (set by VMware's "
	            "platform code), not for tsc=reliable; " FC_KV_STR(FC_KV_TSC_RELIABLE_SKIPS_SYNC)
	            " and later test tsc_clocksource_reliable, which it sets");
	if (k->cmd_tsc_reliable)
		cd_evidence(x, "tsc=reliable is already on the command line, and the TSC was still rejected");
	if (c->no_vdso_time) {
		cd_evidence(x, "and this 32-bit kernel's vDSO has no clock_gettime before "
		            FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME) ": even on tsc every time call stays a "
		            "system call below " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME));
		cd_fix_newer_kernel(x->fix_lasting, sizeof x->fix_lasting, f, FC_KV_X86_32_VDSO_GETTIME, c->bit32);
	} else {
		cd_fix_newer_kernel(x->fix_lasting, sizeof x->fix_lasting, f, FC_KV_TSC_RELIABLE_SKIPS_SYNC, c->bit32);
	}
	cd_advise_trust_tsc(c, x, "tsc=reliable", "a newer kernel");
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
	return true;
}

/* See cd_kernel_no_vdso_time(): before FC_KV_X86_32_VDSO_GETTIME every call
 * is a system call, even on tsc (the kernel then shows read_tsc under
 * clock_gettime).  A system call for every time call, 150-300 ns instead
 * of 20-50, is the cost slow-clocksource warns of: a warning, whatever the
 * clocksource. */
static bool no_vdso_time_needs_newer_kernel(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	if (!c->no_vdso_time)
		return false;
	struct cd_finding *x = cd_add_finding(c, "fix-needs-newer-kernel", CD_SEV_WARNING,
	                           "This 32-bit kernel's vDSO has no clock_gettime: time calls are "
	                           "system calls even on %s",
	                           f->cs.have_current ? f->cs.current : "a fast clocksource");
	cd_evidence(x, "kernel %s: a 32-bit x86 kernel older than " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME),
	            f->kernel.release);
	for (int i = 0; i < f->klog.n_events; i++)
		if (f->klog.events[i].kind == CD_EV_X86_32BIT) {
			cd_evidence_event(x, &f->klog.events[i]);
			break;
		}
	cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
	           "A 64-bit kernel, or a 32-bit kernel " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME) " or later, serves clock_gettime in "
	           "the vDSO (about 20-50 ns instead of 150-250 ns on tsc).\n");
	cd_fix_newer_kernel(x->fix_lasting, sizeof x->fix_lasting, f, FC_KV_X86_32_VDSO_GETTIME, c->bit32);
	return true;
}

/* A 64-bit x86 kernel before 3.15: its own programs are served, but its
 * compat vDSO for 32-bit programs gained clock_gettime only with the same
 * 3.15 work; x32 programs use the 64-bit vDSO code (since x32 came, in
 * 3.4). */
static bool compat_vdso_needs_newer_kernel(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	if (c->bit32 || strcmp(f->cpu.arch, "x86_64") != 0 ||
	    cd_kernel_compare(&f->kernel, FC_KV_X86_32_VDSO_GETTIME) != FC_KVER_OLDER)
		return false;
	struct cd_finding *x = cd_add_finding(c, "fix-needs-newer-kernel", CD_SEV_INFO,
	                           "32-bit programs on this kernel make a system call for every "
	                           "clock_gettime: its compat vDSO has none before " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME));
	cd_evidence(x, "kernel %s: a 64-bit x86 kernel older than " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME),
	            f->kernel.release);
	cd_evidence(x, "64-bit and x32 programs use the 64-bit vDSO, which serves clock_gettime "
	            "when the clocksource allows (see the findings above)");
	cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
	           "Rebuild 32-bit programs that read the time often as 64-bit programs, or run a "
	           "kernel " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME) " or later.\n");
	cd_fix_newer_kernel(x->fix_lasting, sizeof x->fix_lasting, f, FC_KV_X86_32_VDSO_GETTIME, false);
	return true;
}

/* kvm-clock: until "x86/vdso: Enable vdso pvclock access on all vdso
 * variants" (Andy Lutomirski, December 2015, about 4.5) only the 64-bit
 * vDSO read the pvclock page (since about 3.8; before, none did: see
 * slow-clocksource); the compat (32-bit) and x32 vDSOs made the system
 * call. */
static bool kvmclock_compat_needs_newer_kernel(struct cd_ctx *c)
{
	const struct cd_kernel *k = &c->f->kernel;
	if (c->bit32 || !cd_current_is(c, "kvm-clock") ||
	    cd_kernel_compare(k, FC_KV_KVMCLOCK_VDSO) != FC_KVER_SAME_OR_NEWER ||
	    cd_kernel_compare(k, FC_KV_PVCLOCK_COMPAT_VDSO) != FC_KVER_OLDER)
		return false;
	struct cd_finding *x = cd_add_finding(c, "fix-needs-newer-kernel", CD_SEV_INFO,
	                           "32-bit and x32 programs on kvm-clock make a system call for every "
	                           "clock_gettime before about " FC_KV_STR(FC_KV_PVCLOCK_COMPAT_VDSO));
	cd_evidence(x, "kernel %s, clocksource kvm-clock: only the 64-bit vDSO reads the pvclock page "
	            "before about " FC_KV_STR(FC_KV_PVCLOCK_COMPAT_VDSO), k->release);
	cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
	           "64-bit programs are not affected. For 32-bit or x32 programs that read the time "
	           "often, run a kernel of about " FC_KV_STR(FC_KV_PVCLOCK_COMPAT_VDSO) " or later.\n");
	cd_fix_newer_kernel(x->fix_lasting, sizeof x->fix_lasting, c->f, FC_KV_PVCLOCK_COMPAT_VDSO, false);
	return true;
}

/* The first of the cases where only a newer kernel helps.  Each is for a
 * kernel known to be older than the version it names: one of unknown
 * version is taken as a current one. */
void cd_rule_needs_newer_kernel(struct cd_ctx *c)
{
	if (!sync_check_needs_newer_kernel(c) && !no_vdso_time_needs_newer_kernel(c) &&
	    !compat_vdso_needs_newer_kernel(c))
		kvmclock_compat_needs_newer_kernel(c);
}

void cd_rule_tsc_adjust(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	struct cd_finding *x = NULL;
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind != CD_EV_TSC_ADJUST)
			continue;
		if (!x)
			x = cd_add_finding(c, "tsc-adjust-firmware", CD_SEV_INFO,
			        "The firmware wrote TSC_ADJUST; the kernel set it back");
		cd_evidence_event(x, e);
	}
	if (x)
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "Nothing to do while the kernel corrects it; a firmware update usually stops "
		           "it. If the TSC is later rejected, this is the first suspect.\n");
}

/* A listed clocksource other than the TSC, the fastest; NULL if none. */
static const char *non_tsc_alternative(const struct cd_ctx *c)
{
	const char *alt = NULL;
	int rank = 0;
	for (int i = 0; i < c->f->cs.n_available; i++) {
		const char *name = c->f->cs.available[i];
		struct cd_cs_state v;
		if (strncmp(name, "tsc", 3) == 0)
			continue;
		cd_clocksource_state(name, c->f, &v);
		if (v.rank > 0 && (!alt || v.rank < rank)) {
			alt = name;
			rank = v.rank;
		}
	}
	return alt;
}

/* check --deep measured the TSC (measure/tsc.h) and a test failed. */
void cd_rule_tsc_unsound(struct cd_ctx *c)
{
	const struct cd_tsc_report *t = c->tsc;
	if (!t || t->verdict != CD_TSC_UNSOUND)
		return;
	bool on_tsc = c->cur_known && strncmp(c->f->cs.current, "tsc", 3) == 0;
	struct cd_finding *x = cd_add_finding(c, "tsc-unsound", on_tsc ? CD_SEV_CRITICAL : CD_SEV_WARNING,
	                           "Measured: the TSC cannot be trusted%s",
	                           on_tsc ? ", and the kernel's clocks run on it" : "");
	for (int i = 0; i < CD_TSC_N_TESTS; i++)
		if (t->test[i].status == CD_TSC_FAIL)
			cd_evidence(x, "%s test: %s", cd_tsc_test_name((enum cd_tsc_test_id)i), t->test[i].detail);
	if (t->n_pairs)
		cd_evidence(x, "cross-CPU warp test: %d of %d CPU pairs run, %d with a warp; largest backward "
		         "step %llu cycles", t->pairs_run, t->n_pairs, t->pairs_failed,
		         (unsigned long long)t->worst_back);
	if (t->src[CD_SRC_MEASURED].have && t->ref_name)
		cd_evidence(x, "frequency measured %.4f MHz +-%.2g ppm; the kernel's (%s) %.3f MHz, %+.1f ppm",
		         t->src[CD_SRC_MEASURED].hz / 1e6, t->src[CD_SRC_MEASURED].precision_ppm, t->ref_name,
		         t->ref_hz / 1e6, t->drift_raw_ppm);
	for (int i = 0; i < t->n_kernel_notes; i++)
		cd_evidence(x, "%s", t->kernel_notes[i]);
	const char *alt = non_tsc_alternative(c);
	if (on_tsc && alt) {
		cd_act_switch_now(x, alt);
		cd_act_add_clocksource_param(x, c->f, alt);
		cd_appendf(x->risk, sizeof x->risk,
		           "%s may make every time call a system call (see slow-clocksource): slower, "
		           "but it never goes backwards between CPUs.\n", alt);
	} else if (on_tsc) {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "No other clocksource is listed: the guest cannot switch away. Run `clockdoctor "
		           "tsc` for the full measurement, and fix it on the host.\n");
	} else {
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "Do not add tsc=reliable or clocksource=tsc, and do not use a user-space TSC "
		           "clock here: `clockdoctor tsc` shows the full measurement.\n");
	}
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, c->f);
}
