/* SPDX-License-Identifier: MIT */
/*
 * lastingfix.c: the lasting fixes several findings share: for a slow
 * clocksource (undo what the command line forced, a newer kernel, make the
 * kernel keep the TSC, or say why the TSC is out), the risk of every fix
 * that forces the TSC, and the cure when the evidence says the kernel was
 * right to drop it.  Each fix is the text fixes.c writes and the action
 * `clockdoctor fix` carries out (finding.c).
 */
#include "diagnose/fixes.h"
#include "diagnose/rules.h"
#include "probe/probe.h"
#include "probe/tsc_reasons.h"

#include "clockfacts.h"

#include <stdio.h>
#include <string.h>

/* What forcing the TSC trades away, in this machine's numbers; notes that
 * this report advised it (the NTP rule's severity depends on that). */
void cd_tsc_risk(struct cd_ctx *c, struct cd_finding *x)
{
	if (c->tsc_unsafe) {
		if (!strstr(x->risk, c->unsafe_risk))
			cd_appendf(x->risk, sizeof x->risk, "%s%s", x->risk[0] ? " " : "", c->unsafe_risk);
		return;
	}
	if (c->rejected_sync || c->rejected_watchdog)
		cd_appendf(x->risk, sizeof x->risk,
		           "The kernel stopped trusting the TSC for a reason. With %s it stops checking: "
		           "if the TSCs really disagree between CPUs, or drift, time can go backwards "
		           "between CPUs or run at the wrong rate, and nothing will say so.",
		           cd_tsc_params(c)[0] ? cd_tsc_params(c) : "the TSC forced");
	else
		cd_appendf(x->risk, sizeof x->risk,
		           "clocksource=tsc only changes the kernel's choice: its checks stay on, and the "
		           "watchdog still drops a TSC that drifts. The kernel preferred %s by rating; in a "
		           "VM a paravirtual clock also follows the host across live migration, where the "
		           "TSC may jump unless the hypervisor scales it.",
		           c->cur_known ? c->f->cs.current : "another clocksource");
	if (c->warp)
		cd_appendf(x->risk, sizeof x->risk, " Here the CPUs disagreed by %lld cycles at boot.",
		           (long long)c->warp->value);
	if (!(c->f->cpu.flags & CD_CPU_CONSTANT_TSC) && c->f->cpu.have_cpuinfo)
		cd_appendf(x->risk, sizeof x->risk,
		           " This CPU has no constant_tsc: its TSC rate may follow the CPU frequency.");
	if (c->tsc && c->tsc->verdict == CD_TSC_UNSOUND)
		cd_appendf(x->risk, sizeof x->risk,
		           " Here check --deep measured the TSC unsound (see tsc-unsound): do not force it.");
	else if (c->tsc && c->tsc->verdict == CD_TSC_SOUND)
		cd_appendf(x->risk, sizeof x->risk,
		           " check --deep measured it sound just now (%s), which a short test cannot "
		           "promise for later.", c->tsc->summary);
	cd_appendf(x->risk, sizeof x->risk,
	           " Keep NTP or chrony running, so that any drift is corrected and shows in "
	           "its statistics.");
	c->advised_tsc = true;
}

/* The TSC rejected for a reason other than the sync test or the watchdog
 * (mark_tsc_unstable's other callers): say which, and what it means
 * (probe/tsc_reasons.c holds every reason the kernel has given). */
static bool other_rejection(struct cd_ctx *c, struct cd_finding *x)
{
	for (int i = 0; i < c->f->klog.n_events; i++) {
		const struct cd_event *e = &c->f->klog.events[i];
		if (e->kind != CD_EV_TSC_UNSTABLE || cd_reason_is_sync(e->name) || strstr(e->name, "watchdog"))
			continue;
		cd_evidence_event(x, e);
		const struct cd_tsc_reason *r = cd_tsc_reason_find(e->name);
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting, "The kernel rejected the TSC because of %s: %s\n",
		           e->name, r ? r->meaning :
		           "a reason no Linux release this tool knows gives (a patched kernel's, or a "
		           "newer one's). Until it is explained, take the kernel to be right: keep the "
		           "current clocksource, and measure the TSC with `clockdoctor tsc`.");
		return true;
	}
	return false;
}

/* The command line chose a slower clocksource, or took the faster ones
 * away: the lasting fix is to undo that.  False when it did neither. */
static bool undo_command_line(struct cd_ctx *c, struct cd_finding *x)
{
	const struct cd_facts *f = c->f;
	const struct cd_kernel *k = &f->kernel;
	if (k->cmd_clocksource[0] && strcmp(k->cmd_clocksource, "tsc") != 0) {
		cd_act_remove_clocksource_param(x, f);
		return true;
	}
	if (k->cmd_notsc || k->cmd_tsc_unstable) {
		cd_act_remove_param(x, f, k->cmd_notsc ? "notsc" : "tsc=unstable");
		return true;
	}
	if (k->cmd_no_kvmclock_vsyscall && cd_current_is(c, "kvm-clock")) {
		cd_act_remove_param(x, f, "no-kvmclock-vsyscall");
		return true;
	}
	/* acpi=off takes away the HPET and the ACPI PM timer, the references
	 * the kernel calibrates and watches the TSC against, and the only
	 * clocksources left after it: from a tick-based one, undo it first. */
	if (k->cmd_acpi_off && (c->tick_left || (c->cur_known && c->cur.rank >= 4))) {
		cd_act_remove_param(x, f, "acpi=off");
		cd_appendf(x->risk, sizeof x->risk,
		           "acpi=off is usually there to get past broken ACPI firmware: try the machine "
		           "without it once (from the boot menu) before removing it for good.\n");
		return true;
	}
	return false;
}

/* kvm-clock read by the kernel because of the kernel itself: a 32-bit one,
 * or one older than its vDSO read.  False when neither is known. */
static bool kvmclock_kernel(struct cd_ctx *c, struct cd_finding *x)
{
	const struct cd_facts *f = c->f;
	if (!cd_current_is(c, "kvm-clock"))
		return false;
	/* kvm-clock's vDSO mode is set for x86-64 only (clocksources.c), so no
	 * newer 32-bit kernel helps; the 32-bit vDSO reads the TSC from
	 * FC_KV_X86_32_VDSO_GETTIME on. */
	if (c->bit32) {
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "No 32-bit kernel reads kvm-clock in its vDSO. A 64-bit x86 kernel does (from "
		           FC_KV_STR(FC_KV_KVMCLOCK_VDSO) ", while the host gives a stable TSC); it also runs "
		           "32-bit programs. On a 32-bit kernel " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME)
		           " or later, the vDSO reads the TSC, where the kernel keeps it.\n");
		return true;
	}
	/* A kernel of unknown version is taken as a current one (clocksources.c). */
	if (cd_kernel_compare(&f->kernel, FC_KV_KVMCLOCK_VDSO) == FC_KVER_OLDER) {
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "A kernel " FC_KV_STR(FC_KV_KVMCLOCK_VDSO) " or later reads kvm-clock in the vDSO when "
		           "the host gives a stable TSC (a distribution kernel may have that backported). First "
		           "measure this one: run `clockdoctor check` on the machine.\n");
		cd_fix_newer_kernel(x->fix_lasting, sizeof x->fix_lasting, f, FC_KV_KVMCLOCK_VDSO, c->bit32);
		return true;
	}
	return false;
}

/* The parameter that keeps the TSC is already on the command line, and the
 * kernel rejected it all the same: why, when this kernel is known to be one
 * whose tsc-early ignored it. */
static void keep_tsc_already_asked(struct cd_ctx *c, struct cd_finding *x)
{
	const struct cd_kernel *k = &c->f->kernel;
	cd_appendf(x->fix_lasting, sizeof x->fix_lasting, "%s is already on the command line, and "
	           "the kernel still rejected the TSC.",
	           k->cmd_tsc_reliable ? "tsc=reliable" : "tsc=nowatchdog");
	if (c->rejected_watchdog && cd_kernel_compare(k, FC_KV_TSC_EARLY) == FC_KVER_SAME_OR_NEWER &&
	    cd_kernel_compare(k, FC_KV_TSC_EARLY_HONOURS_PARAMS) == FC_KVER_OLDER)
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           " Kernels from " FC_KV_STR(FC_KV_TSC_EARLY) " until "
		           FC_KV_STR(FC_KV_TSC_EARLY_HONOURS_PARAMS) " did not apply it to "
		           "tsc-early, the TSC's first clocksource (fixed in "
		           FC_KV_STR(FC_KV_TSC_EARLY_HONOURS_PARAMS) ": \"x86/tsc: Respect tsc "
		           "command line parameter for clocksource_tsc_early\"): a "
		           FC_KV_STR(FC_KV_TSC_EARLY_HONOURS_PARAMS) " or later kernel honours "
		           "it.\n");
	else
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           " Forcing harder will not help: find the cause (the hypervisor's side "
		           "below) or measure the TSC with `clockdoctor tsc`.\n");
}

/* The kernel rejected the TSC (the sync test or the watchdog): the
 * parameter that makes it keep the TSC, unless the evidence says the
 * kernel was right, or no parameter can on this kernel. */
static void keep_tsc(struct cd_ctx *c, struct cd_finding *x)
{
	const struct cd_kernel *k = &c->f->kernel;
	if (c->tsc_unsafe) {
		cd_unsafe_tsc_fix(c, x);
		return;
	}
	const char *p = cd_tsc_params(c);
	bool already = k->cmd_tsc_reliable || (strcmp(p, "tsc=nowatchdog") == 0 && k->cmd_tsc_nowatchdog);
	if (p[0] && already) {
		keep_tsc_already_asked(c, x);
		return;
	}
	if (k->cmd_tsc_ignored[0])
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "The command line has tsc=%s, which the kernel ignores: tsc= takes one "
		           "option, so each option needs a tsc= word of its own.\n",
		           k->cmd_tsc_ignored);
	if (!p[0]) {
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "No kernel parameter helps on this kernel (see fix-needs-newer-kernel): "
		           "install a kernel " FC_KV_STR(FC_KV_TSC_RELIABLE_SKIPS_SYNC) " or later.\n");
		cd_advise_trust_tsc(c, x, "tsc=reliable", "a newer kernel");
		return;
	}
	cd_advise_trust_tsc(c, x, p, NULL);
}

/* Not an x86 machine: no TSC, and the vDSO reads only the CPU's own
 * counter (arch_sys_counter on arm and arm64): why that counter is not in
 * use, from the log when it says. */
static void cpu_counter_out(const struct cd_ctx *c, struct cd_finding *x)
{
	const struct cd_event *refused = NULL;
	for (int i = 0; i < c->f->klog.n_events && i < CD_MAX_EVENTS; i++)
		if (c->f->klog.events[i].kind == CD_EV_ARM_TIMER && strcmp(c->f->klog.events[i].name, "refused") == 0)
			refused = &c->f->klog.events[i];
	if (refused) {
		cd_evidence_event(x, refused);
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "The kernel could not use the arm generic timer (arch_timer), the only counter the vDSO "
		           "reads here, and fell back to a slower clocksource. The cure is in the firmware or the "
		           "device tree: the timer's node, its interrupts and CNTFRQ must describe a timer the "
		           "kernel can use (on a simulator or a VM, the platform's timer model).\n");
		return;
	}
	cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
	           "This is not an x86 machine: it has no TSC, and the vDSO reads only the CPU's own counter "
	           "(arch_sys_counter on arm and arm64). Look in the kernel log since boot for why that "
	           "counter is not the clocksource (\"arch_timer\" lines; journalctl -k -b).\n");
}

/* Nothing here says why the TSC is not in use: where to look. */
static void tsc_out_unexplained(const struct cd_ctx *c, struct cd_finding *x)
{
	const struct cd_klog *log = &c->f->klog;
	if (cd_platform_is_x86(c->f) == 0) {
		cpu_counter_out(c, x);
		return;
	}
	if (!log->readable)
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "Why the TSC is not in use is not known: the kernel log could not be read (%s). "
		           "Read it as root and look for \"Marking TSC unstable\" since boot "
		           "(journalctl -k -b).\n", log->why_not[0] ? log->why_not : "no source");
	else
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "The kernel log does not say why the TSC is not in use%s. Look for "
		           "\"Marking TSC unstable\" in the kernel log since boot (journalctl -k -b).\n",
		           log->reaches_boot ? "" : " (it no longer reaches back to boot)");
}

/* The lasting fix for a slow clocksource, shared by several findings: the
 * first cause that applies, in this order. */
void cd_lasting_fix(struct cd_ctx *c, struct cd_finding *x)
{
	/* An arm64 counter erratum: the workaround is what keeps time right on
	 * this chip, and no TSC exists to fall back to. */
	if (cd_current_is(c, "arch_sys_counter")) {
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "Nothing to change in the kernel: this SoC's counter needs the workaround, or "
		           "time reads can jump. Programs that read the time often can use "
		           "CLOCK_MONOTONIC_COARSE or CLOCK_REALTIME_COARSE, which stay in the vDSO.\n");
		return;
	}
	if (undo_command_line(c, x) || kvmclock_kernel(c, x))
		return;
	if (cd_paravirt_current(c)) {
		if (cd_tsc_listed(c) && !(c->rejected_sync || c->rejected_watchdog) && !c->tsc_unsafe) {
			cd_advise_trust_tsc(c, x, "clocksource=tsc", NULL);
		} else {
			cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
			           "The guest cannot fix its paravirtual clock alone: see the hypervisor's "
			           "side below.\n");
		}
		return;
	}
	if (c->rejected_sync || c->rejected_watchdog)
		keep_tsc(c, x);
	else if (cd_better_listed(c) && strncmp(c->best, "tsc", 3) == 0)
		cd_advise_trust_tsc(c, x, "clocksource=tsc", NULL);
	else if (cd_better_listed(c))
		cd_act_add_clocksource_param(x, c->f, c->best);
	else if (!other_rejection(c, x))
		tsc_out_unexplained(c, x);
}
