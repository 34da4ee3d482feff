/* SPDX-License-Identifier: MIT */
/*
 * rules.c: the rules about the clocksource and what was measured: a
 * clocksource the vDSO cannot read (current, or all that is left), time
 * calls measured as system calls, kvm-clock and xen, the command line's
 * choice, a faster clocksource listed, and the clock's discipline by NTP.
 * Each reads the context (context.c) and adds at most one finding; the
 * rules about the TSC itself are rules_tsc.c, their order report.c.
 * docs/findings.md documents every code; a code is never renamed.
 */
#include "diagnose/fixes.h"
#include "diagnose/rules.h"

#include "clockfacts.h"

#include <stdio.h>
#include <string.h>

/* No faster clocksource to switch to now (why): the coarse clocks stay in
 * the vDSO, for programs that can live with their resolution. */
static void nothing_to_switch(struct cd_finding *x, const char *why, const char *resolution)
{
	cd_appendf(x->fix_now, sizeof x->fix_now,
	           "Nothing can be switched now: %s. Programs that can live with %s can use "
	           "CLOCK_MONOTONIC_COARSE or CLOCK_REALTIME_COARSE, which stay in the vDSO.\n", why, resolution);
}

/* The fixes of a slow clocksource with nothing faster to switch to now:
 * the coarse clocks, the lasting fix, the hypervisor's side. */
static void fix_when_nothing_to_switch(struct cd_ctx *c, struct cd_finding *x, const char *why,
                                       const char *resolution)
{
	nothing_to_switch(x, why, resolution);
	cd_lasting_fix(c, x);
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, c->f);
}

/* The clocksources listed, where is where they were read (or ""). */
static void available_evidence(struct cd_finding *x, const struct cd_facts *f, const char *where)
{
	char list[CD_EVIDENCE_MAX] = "";
	for (int i = 0; i < f->cs.n_available; i++)
		cd_appendf(list, sizeof list, "%s%s", i ? " " : "", f->cs.available[i]);
	cd_evidence(x, "available_clocksource: %s%s", list, where);
}

/* Where the current clocksource was read: sysfs, or the log's last switch. */
static void current_evidence(const struct cd_ctx *c, struct cd_finding *x)
{
	const struct cd_facts *f = c->f;
	if (f->cs.from_log && f->cs.log_event >= 0 && f->cs.log_event < f->klog.n_events) {
		const struct cd_event *e = &f->klog.events[f->cs.log_event];
		if (e->kind == CD_EV_WATCHDOG_SKEW)
			cd_evidence(x, "current clocksource: %s, from the kernel log (no " CS_PATH "): the "
			            "watchdog that demoted the TSC, which the kernel then switches to as the "
			            "best-rated clocksource left", f->cs.current);
		else if (e->kind == CD_EV_ARCH_TIMER_WORKAROUND || e->kind == CD_EV_ARCH_TIMER_TRAP)
			cd_evidence(x, "current clocksource: %s, from the kernel log (no " CS_PATH ", no switch "
			            "line): the architected timer's driver printed this as it set up the counter it "
			            "registers, the best-rated clocksource an ARM kernel has", f->cs.current);
		else if (e->kind == CD_EV_CS_REGISTERED)
			cd_evidence(x, "current clocksource: %s, from the kernel log (no " CS_PATH ", no switch "
			            "line): registered, and the best-rated clocksource an ARM kernel has",
			            f->cs.current);
		else
			cd_evidence(x, "current clocksource: %s, from the kernel log's last switch (no " CS_PATH ")",
			            f->cs.current);
		cd_evidence_event(x, e);
	} else {
		cd_evidence(x, "current_clocksource: %s (" CS_PATH "current_clocksource)", f->cs.current);
	}
}

/* On arch_sys_counter, the kernel's log lines of an erratum workaround that
 * takes the counter out of the vDSO, and of the trap it sets on user-space
 * reads of the counter, quoted (a line current_evidence quoted already is
 * not repeated). */
static void arch_timer_evidence(const struct cd_ctx *c, struct cd_finding *x)
{
	const struct cd_facts *f = c->f;
	if (strcmp(f->cs.current, "arch_sys_counter") != 0)
		return;
	const struct cd_event *quoted = f->cs.from_log && f->cs.log_event >= 0 && f->cs.log_event < f->klog.n_events
	                                ? &f->klog.events[f->cs.log_event] : NULL;
	const struct cd_event *wa = cd_arch_timer_vdso_erratum(f);
	if (wa && wa != quoted)
		cd_evidence_event(x, wa);
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind != CD_EV_ARCH_TIMER_TRAP)
			continue;
		if (e != quoted)
			cd_evidence_event(x, e);
		cd_evidence(x, "user-space reads of cntvct_el0 trap into the kernel, which emulates each one: a "
		            "program or library that reads the counter itself pays about a system call too");
		break;
	}
}

/* Why this is a 32-bit x86 kernel, quoted. */
static void bit32_evidence(const struct cd_ctx *c, struct cd_finding *x)
{
	const struct cd_facts *f = c->f;
	for (int i = 0; i < f->klog.n_events; i++)
		if (f->klog.events[i].kind == CD_EV_X86_32BIT) {
			cd_evidence_event(x, &f->klog.events[i]);
			return;
		}
	if (f->cpu.arch[0] && strcmp(f->cpu.arch, "x86_64") != 0)
		cd_evidence(x, "machine (uname): %s", f->cpu.arch);
}

void cd_rule_slow_clocksource(struct cd_ctx *c)
{
	if (!cd_current_slow(c))
		return;
	const struct cd_facts *f = c->f;
	enum cd_severity sev = CD_SEV_CRITICAL;
	bool measured = c->m && c->m->done;
	/* A rule that rests on a guessed version, or that measurement contradicts,
	 * is only a warning. */
	if (measured && c->n_fallback == 0)
		sev = CD_SEV_WARNING;
	if (!measured && strcmp(f->cs.current, "kvm-clock") == 0 && !f->kernel.cmd_no_kvmclock_vsyscall &&
	    !c->bit32)
		sev = CD_SEV_WARNING;
	struct cd_finding *x;
	if (c->cur.vdso == CD_VDSO_SLOW)
		x = cd_add_finding(c, "slow-clocksource", CD_SEV_WARNING,
		                   "Time calls are slow: the vDSO reads %s itself on this kernel, but each "
		                   "read is a device access", f->cs.current);
	else if (c->no_vdso_time)
		x = cd_add_finding(c, "slow-clocksource", sev,
		                   "Time calls are system calls: this 32-bit kernel's vDSO has no "
		                   "clock_gettime (clocksource %s)", f->cs.current);
	else
		x = cd_add_finding(c, "slow-clocksource", sev,
		                   "Time calls are system calls: the clocksource %s cannot be read by the vDSO",
		                   f->cs.current);
	current_evidence(c, x);
	arch_timer_evidence(c, x);
	if (f->cs.have_available) {
		available_evidence(x, f, "");
	}
	cd_evidence(x, "kernel %s: %s; typical cost %s a call",
	         f->kernel.have_release ? f->kernel.release : "(version unknown)", c->cur.why, c->cur.typical);
	if (c->bit32)
		bit32_evidence(c, x);
	if (measured && c->mono)
		cd_evidence(x, "measured CLOCK_MONOTONIC: %.0f ns a call, %.2f times a forced system call",
		         c->mono->ns_per_call, c->mono->ratio);
	if (measured && c->n_fallback == 0 && c->cur.vdso == CD_VDSO_NO)
		cd_evidence(x, "but CLOCK_REALTIME and CLOCK_MONOTONIC were not measured as system calls: "
		            "the rule above may not fit this kernel");
	if (cd_better_listed(c))
		cd_act_switch_now(x, c->best);
	else
		nothing_to_switch(x, "no faster clocksource is listed in available_clocksource", "1-4 ms resolution");
	cd_lasting_fix(c, x);
	if (c->no_vdso_time)
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "Even on tsc, every time call stays a system call on this kernel: see "
		           "fix-needs-newer-kernel.\n");
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
	if (cd_better_listed(c) && strcmp(c->best, "tsc") == 0 && !x->risk[0])
		cd_tsc_risk(c, x);
}

/* No clocksource is known, and what the log and the command line say
 * leaves only tick-based ones (tick_left, context.c). */
void cd_rule_tick_based_left(struct cd_ctx *c)
{
	if (!c->tick_left)
		return;
	const struct cd_facts *f = c->f;
	struct cd_finding *x = cd_add_finding(c, "slow-clocksource", CD_SEV_CRITICAL,
	                           "Time calls are system calls: the kernel log leaves only a tick-based "
	                           "clocksource (jiffies, refined-jiffies or pit), which the vDSO cannot read");
	cd_evidence(x, "current clocksource: not readable here (%s), and no \"Switched to clocksource\" "
	            "line in the kernel log", f->cs.have_available ? "no current_clocksource" : "no " CS_PATH);
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind == CD_EV_TSC_UNSTABLE || e->kind == CD_EV_TSC_WARP || e->kind == CD_EV_TSC_CALIBRATION)
			cd_evidence_event(x, e);
	}
	if (f->kernel.cmd_acpi_off)
		cd_evidence(x, "kernel command line: acpi=off, which takes away the ACPI PM timer and the "
		            "HPET (found through an ACPI table)");
	if (f->kernel.cmd_notsc || f->kernel.cmd_tsc_unstable)
		cd_evidence(x, "kernel command line: %s", f->kernel.cmd_notsc ? "notsc" : "tsc=unstable");
	cd_evidence(x, "no hypervisor's paravirtual clock: %s",
	            f->hv.kind == CD_HV_NONE ? "bare metal" : "no hypervisor in the kernel log");
	cd_evidence(x, "jiffies and pit have no vDSO read: every clock_gettime is a system call, and "
	            "jiffies has only tick resolution (1-10 ms)");
	fix_when_nothing_to_switch(c, x, "no faster clocksource exists on this boot", "tick resolution");
}

/* No current clocksource is known, and every listed one is a system call
 * (only_slow, set by cd_derive()). */
void cd_rule_only_slow_listed(struct cd_ctx *c)
{
	if (!c->only_slow[0] || c->tick_left)
		return;
	const struct cd_facts *f = c->f;
	struct cd_finding *x = cd_add_finding(c, "slow-clocksource", CD_SEV_CRITICAL,
	                           "Time calls are system calls: every clocksource this kernel lists (%s) "
	                           "is one the vDSO cannot read", c->only_slow);
	available_evidence(x, f, " (" CS_PATH "available_clocksource)");
	cd_evidence(x, "current clocksource: not readable here (no current_clocksource), so it is one of these");
	for (int i = 0; i < f->cs.n_available; i++) {
		struct cd_cs_state v;
		cd_clocksource_state(f->cs.available[i], f, &v);
		if (v.rank > 1)
			cd_evidence(x, "%s: %s; typical cost %s a call", f->cs.available[i], v.why, v.typical);
	}
	if (c->rejected_sync || c->rejected_watchdog || c->rejected_other)
		cd_evidence(x, "the TSC, rejected by the kernel (see the findings below), cannot come back "
		            "before a reboot");
	fix_when_nothing_to_switch(c, x, "no faster clocksource is listed in available_clocksource",
	                           "1-4 ms resolution");
}

void cd_rule_vdso_fallback(struct cd_ctx *c)
{
	if (c->n_fallback == 0)
		return;
	const struct cd_clock_cost *k = c->mono;
	struct cd_finding *x;
	if (k && k->syscall)
		x = cd_add_finding(c, "vdso-fallback", CD_SEV_CRITICAL,
		        "Measured: %d high-resolution clock ids go through the kernel "
		        "(CLOCK_MONOTONIC: %.0f ns a call)",
		        c->n_fallback, k->ns_per_call);
	else
		x = cd_add_finding(c, "vdso-fallback", CD_SEV_CRITICAL,
		        "Measured: %d high-resolution clock ids go through the kernel", c->n_fallback);
	cd_measured_evidence(c, x, true);
	arch_timer_evidence(c, x);
	for (int i = 0; c->m && i < c->m->n; i++) {
		const struct cd_clock_cost *q = &c->m->c[i];
		if (q->measured && !q->spec->high_res && !q->syscall) {
			cd_evidence(x, "%s: %.0f ns a call, served without a system call", q->spec->name, q->ns_per_call);
			break;
		}
	}
	if (c->n_coarse_fallback > 0) {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "Even the coarse clocks reach the kernel, and they never read the "
		           "clocksource: this process has no vDSO at all. Look for vdso=0 on the kernel "
		           "command line, a sandbox that intercepts system calls (gVisor, ptrace, seccomp "
		           "tracing), or an old statically linked libc.\n");
	} else if (!c->cur_known) {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The clocksource cannot be read here (no /sys: a container?). Read the host's "
		           "/sys/devices/system/clocksource/clocksource0/current_clocksource, or run "
		           "clockdoctor check on the host: the host's clocksource decides.\n");
	} else if (cd_current_slow(c)) {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The cause is the clocksource: see slow-clocksource. Until it is fixed, "
		           "programs that can live with 1-4 ms resolution can read "
		           "CLOCK_MONOTONIC_COARSE or CLOCK_REALTIME_COARSE, which stay in the vDSO.\n");
	} else if (cd_current_is(c, "kvm-clock") || cd_current_is(c, "xen")) {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The cause is the host: see kvmclock-no-vdso or xen-clocksource.\n");
	} else {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The clocksource%s%s should be served by the vDSO, yet the calls reach the "
		           "kernel: look for vdso=0 on the kernel command line, a sandbox that "
		           "intercepts system calls (gVisor, ptrace, seccomp tracing), or a 32-bit "
		           "kernel older than about " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME) ", whose vDSO has "
		           "no clock_gettime.\n",
		           c->cur_known ? " " : "", c->cur_known ? c->f->cs.current : "");
	}
}

void cd_rule_kvmclock(struct cd_ctx *c)
{
	if (!cd_current_is(c, "kvm-clock"))
		return;
	const struct cd_facts *f = c->f;
	if (c->n_fallback > 0) {
		struct cd_finding *x = cd_add_finding(c, "kvmclock-no-vdso", CD_SEV_CRITICAL,
		                           "kvm-clock goes through the kernel: the host does not give "
		                           "a stable TSC");
		cd_measured_evidence(c, x, true);
		cd_evidence(x, "kernel %s: %s", f->kernel.have_release ? f->kernel.release : "(version unknown)",
		         c->cur.why);
		bool invariant = (f->cpu.flags & CD_CPU_CONSTANT_TSC) && (f->cpu.flags & CD_CPU_NONSTOP_TSC);
		if (cd_tsc_listed(c) && invariant && !c->tsc_unsafe) {
			cd_act_switch_now(x, "tsc");
			cd_advise_trust_tsc(c, x, "clocksource=tsc", NULL);
			cd_appendf(x->risk, sizeof x->risk,
			           " In a VM, the TSC can jump on live migration to a host with another "
			           "TSC rate unless the hypervisor scales it.");
		} else {
			cd_appendf(x->fix_now, sizeof x->fix_now,
			           "The guest cannot fix this alone%s.\n",
			           cd_tsc_listed(c) ? ": tsc is listed, but this CPU does not show an invariant TSC"
			                         : ": no tsc clocksource is listed");
		}
		cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
	} else if (c->cur.vdso == CD_VDSO_DEPENDS && !(c->m && c->m->done)) {
		struct cd_finding *x = cd_add_finding(c, "clocksource-unverified", CD_SEV_INFO,
		                           "kvm-clock is fast only while the host keeps a stable TSC; "
		                           "nothing was measured");
		cd_evidence(x, "current_clocksource: kvm-clock; %s", c->cur.why);
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "Run `clockdoctor check` on the machine itself: it measures whether "
		           "kvm-clock is served by the vDSO.\n");
	}
}

void cd_rule_xen(struct cd_ctx *c)
{
	if (!cd_current_is(c, "xen"))
		return;
	const struct cd_facts *f = c->f;
	bool measured = c->m && c->m->done;
	enum cd_severity sev = measured && c->n_fallback == 0 ? CD_SEV_INFO : CD_SEV_WARNING;
	struct cd_finding *x = cd_add_finding(c, "xen-clocksource", sev, "A Xen guest on the xen clocksource%s",
	                           measured ? (c->n_fallback ? ", measured as system calls"
	                                                     : ", served by the vDSO")
	                                    : ": often a system call");
	cd_evidence(x, "current_clocksource: xen; %s", c->cur.why);
	for (int i = 0; i < f->klog.n_events; i++)
		if (f->klog.events[i].kind == CD_EV_XEN_NO_VDSO)
			cd_evidence_event(x, &f->klog.events[i]);
	cd_measured_evidence(c, x, true);
	if (sev == CD_SEV_INFO)
		return;
	/* A list not read (a snapshot of the log alone) may well hold tsc:
	 * the measurement the gate asks for first says whether it is sound. */
	if (cd_tsc_listed(c) || !f->cs.have_available) {
		if (cd_tsc_listed(c) && !c->tsc_unsafe)
			cd_act_switch_now(x, "tsc");
		cd_advise_trust_tsc(c, x, "clocksource=tsc", NULL);
	}
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
}

void cd_rule_unverified_other(struct cd_ctx *c)
{
	if (!c->cur_known || c->cur.vdso != CD_VDSO_UNKNOWN || (c->m && c->m->done))
		return;
	struct cd_finding *x = cd_add_finding(c, "clocksource-unverified", CD_SEV_INFO,
	                           "The clocksource %s is not one this tool knows; nothing was measured",
	                           c->f->cs.current);
	cd_evidence(x, "current_clocksource: %s", c->f->cs.current);
	cd_appendf(x->fix_now, sizeof x->fix_now,
	           "Run `clockdoctor check` on the machine itself: it measures whether time calls "
	           "reach the kernel.\n");
}

void cd_rule_clocksource_forced(struct cd_ctx *c)
{
	const struct cd_kernel *k = &c->f->kernel;
	char what[160] = "";
	bool slow = false;
	if (k->cmd_clocksource[0]) {
		struct cd_cs_state v;
		cd_clocksource_state(k->cmd_clocksource, c->f, &v);
		if (k->cmd_clocksource_word[0])   /* as written: the deprecated clock= too */
			cd_appendf(what, sizeof what, "%s", k->cmd_clocksource_word);
		else
			cd_appendf(what, sizeof what, "clocksource=%s", k->cmd_clocksource);
		slow |= v.vdso == CD_VDSO_NO;
	}
	if (k->cmd_notsc) {
		cd_appendf(what, sizeof what, "%snotsc", what[0] ? " " : "");
		slow = true;
	}
	if (k->cmd_tsc_unstable) {
		cd_appendf(what, sizeof what, "%stsc=unstable", what[0] ? " " : "");
		slow = true;
	}
	if (k->cmd_no_kvmclock)
		cd_appendf(what, sizeof what, "%sno-kvmclock", what[0] ? " " : "");
	if (k->cmd_no_kvmclock_vsyscall) {
		cd_appendf(what, sizeof what, "%sno-kvmclock-vsyscall", what[0] ? " " : "");
		slow = true;
	}
	if (k->cmd_clocksource_failover)
		cd_appendf(what, sizeof what, "%sclocksource_failover", what[0] ? " " : "");
	if (!what[0])
		return;
	struct cd_finding *x = cd_add_finding(c, "clocksource-forced", slow ? CD_SEV_WARNING : CD_SEV_INFO,
	                           "The kernel command line %s the clocksource: %s",
	                           slow ? "forces a slow choice of" : "sets", what);
	cd_evidence(x, "/proc/cmdline: %s", k->cmdline);
	for (int i = 0; i < c->f->klog.n_events; i++)
		if (c->f->klog.events[i].kind == CD_EV_CS_SWITCHED)
			cd_evidence_event(x, &c->f->klog.events[i]);
	if (!slow)
		return;
	if (cd_better_listed(c))
		cd_act_switch_now(x, c->best);
	if (k->cmd_clocksource[0])
		cd_act_remove_clocksource_param(x, c->f);
	else if (k->cmd_notsc)
		cd_act_remove_param(x, c->f, "notsc");
	else if (k->cmd_tsc_unstable)
		cd_act_remove_param(x, c->f, "tsc=unstable");
	else
		cd_act_remove_param(x, c->f, "no-kvmclock-vsyscall");
	cd_appendf(x->risk, sizeof x->risk,
	           "Someone chose this on purpose, perhaps because the TSC misbehaved on this "
	           "machine: find out why before removing it.\n");
}

void cd_rule_better_clocksource(struct cd_ctx *c)
{
	if (!cd_better_listed(c) || !(cd_current_slow(c) || c->n_fallback > 0))
		return;
	const struct cd_facts *f = c->f;
	struct cd_finding *x = cd_add_finding(c, "better-clocksource-available", CD_SEV_WARNING,
	                           "A faster clocksource is listed: %s (%s a call) instead of %s (%s)",
	                           c->best, c->best_v.typical, f->cs.current, c->cur.typical);
	cd_evidence(x, "available_clocksource lists %s; %s", c->best, c->best_v.why);
	cd_act_switch_now(x, c->best);
	if (f->kernel.cmd_clocksource[0])
		cd_act_remove_clocksource_param(x, f);
	else if (strncmp(c->best, "tsc", 3) == 0)
		cd_advise_trust_tsc(c, x, "clocksource=tsc", NULL);
	else
		cd_act_add_clocksource_param(x, f, c->best);
	if (strcmp(c->best, "tsc") == 0 && !x->risk[0])
		cd_tsc_risk(c, x);
}

void cd_rule_ntp(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	if (!f->ntp.have || f->ntp.synchronized)
		return;
	const struct cd_kernel *k = &f->kernel;
	bool in_force = k->cmd_tsc_reliable || k->cmd_tsc_nowatchdog || strcmp(k->cmd_clocksource, "tsc") == 0;
	enum cd_severity sev = (in_force || c->advised_tsc) ? CD_SEV_WARNING : CD_SEV_INFO;
	struct cd_finding *x = cd_add_finding(c, "ntp-unsynchronized", sev,
	                           "The kernel's clock is not disciplined by NTP or chrony%s",
	                           in_force ? ", and a TSC fix is in force"
	                                    : c->advised_tsc ? ", and this report advises a TSC fix" : "");
	cd_evidence(x, "adjtimex: state %d%s, status 0x%lx%s", f->ntp.state,
	         f->ntp.state == 5 ? " (TIME_ERROR)" : "", f->ntp.status,
	         (f->ntp.status & 0x40) ? " (STA_UNSYNC)" : "");
	cd_fix_ntp(x->fix_now, sizeof x->fix_now, f);
}
