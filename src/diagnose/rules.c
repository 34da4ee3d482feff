/*
 * rules.c: facts and measurements in, findings out.
 *
 * First a context is derived once (what the kernel log says about the TSC,
 * which clocksource would be better, what was measured), then each rule is a
 * small function that reads the context and adds at most one finding.  Rules
 * that advise trusting the TSC say so in the context, because the NTP rule's
 * severity depends on it (seed 004: every TSC fix assumes a disciplined
 * clock).  docs/findings.md documents every code; a code is never renamed.
 */
#include "diagnose/diagnose.h"
#include "diagnose/fixes.h"
#include "probe/probe.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CS_PATH "/sys/devices/system/clocksource/clocksource0/"

struct ctx {
	const struct cd_facts *f;
	const struct cd_measurements *m;  /* NULL: not measured */
	struct cd_report *r;

	bool cur_known;
	struct cd_cs_verdict cur;
	const char *best;                 /* fastest listed clocksource, NULL if none */
	struct cd_cs_verdict best_v;

	const struct cd_event *warp;      /* "Measured N cycles TSC warp" */
	const struct cd_event *unstable;  /* the first "Marking TSC unstable due to" */
	bool rejected_sync, rejected_watchdog, rejected_other;
	const struct cd_event *wd_skew, *wd_delta, *wd_readback;
	double tsc_mhz;                   /* from the log or the hypervisor leaf; 0 unknown */

	int n_fallback;                   /* high-resolution ids measured as system calls */
	const struct cd_clock_cost *mono; /* CLOCK_MONOTONIC's measurement */
	bool advised_tsc;                 /* some finding advises trusting the TSC */
	bool bit32;                       /* a 32-bit x86 kernel */
};

/* ---- building findings ---- */

static struct cd_finding *add(struct ctx *c, const char *code, enum cd_severity sev, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static struct cd_finding *add(struct ctx *c, const char *code, enum cd_severity sev, const char *fmt, ...)
{
	static struct cd_finding overflow;
	if (c->r->n >= CD_MAX_FINDINGS) {
		memset(&overflow, 0, sizeof overflow);
		return &overflow;
	}
	struct cd_finding *x = &c->r->f[c->r->n++];
	memset(x, 0, sizeof *x);
	x->code = code;
	x->severity = sev;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->title, sizeof x->title, fmt, ap);
	va_end(ap);
	return x;
}

static void evidence(struct cd_finding *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void evidence(struct cd_finding *x, const char *fmt, ...)
{
	if (x->n_evidence >= CD_MAX_EVIDENCE)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->evidence[x->n_evidence++], CD_EVIDENCE_MAX, fmt, ap);
	va_end(ap);
}

/* A log line as evidence: "kernel log [3007.005852]: msg". */
static void evidence_event(struct cd_finding *x, const struct cd_event *e)
{
	if (e->ts >= 0)
		evidence(x, "kernel log [%.6f]: %s", e->ts, e->line);
	else
		evidence(x, "kernel log: %s", e->line);
}

static void fmt_duration(char *buf, size_t cap, double s)
{
	if (s < 120)
		snprintf(buf, cap, "%.0f s", s);
	else if (s < 7200)
		snprintf(buf, cap, "%.0f s (%.0f min)", s, s / 60);
	else if (s < 172800)
		snprintf(buf, cap, "%.0f s (%.1f h)", s, s / 3600);
	else
		snprintf(buf, cap, "%.0f s (%.1f days)", s, s / 86400);
}

/* ---- context ---- */

static bool reason_is_sync(const char *reason)
{
	return strstr(reason, "sync") != NULL || strstr(reason, "unsynchronized") != NULL;
}

static void derive_log(struct ctx *c)
{
	const struct cd_klog *log = &c->f->klog;
	double refined = 0, detected = 0, hyper = 0;
	for (int i = 0; i < log->n_events; i++) {
		const struct cd_event *e = &log->events[i];
		switch (e->kind) {
		case CD_EV_TSC_WARP:
			if (!c->warp)
				c->warp = e;
			c->rejected_sync = true;
			break;
		case CD_EV_TSC_UNSTABLE:
			if (!c->unstable)
				c->unstable = e;
			if (reason_is_sync(e->name))
				c->rejected_sync = true;
			else if (strstr(e->name, "watchdog"))
				c->rejected_watchdog = true;
			else
				c->rejected_other = true;
			break;
		case CD_EV_WATCHDOG_SKEW:
			if (strncmp(e->name, "tsc", 3) == 0) {
				if (!c->wd_skew)
					c->wd_skew = e;
				c->rejected_watchdog = true;
			}
			break;
		case CD_EV_CS_UNSTABLE_DELTA:
			if (strncmp(e->name, "tsc", 3) == 0) {
				if (!c->wd_delta)
					c->wd_delta = e;
				c->rejected_watchdog = true;
			}
			break;
		case CD_EV_WD_READBACK_EXCESSIVE:
			if (!c->wd_readback)
				c->wd_readback = e;
			break;
		case CD_EV_TSC_FREQ:
			if (strcmp(e->name, "refined") == 0)
				refined = e->khz / 1000.0;
			else if (strcmp(e->name, "hypervisor") == 0)
				hyper = e->khz / 1000.0;
			else if (strcmp(e->name, "detected") == 0)
				detected = e->khz / 1000.0;
			break;
		default:
			break;
		}
	}
	c->tsc_mhz = refined ? refined : hyper ? hyper : detected;
	if (!c->tsc_mhz && c->f->cpuid.hv_tsc_khz)
		c->tsc_mhz = c->f->cpuid.hv_tsc_khz / 1000.0;
}

static void derive(struct ctx *c)
{
	const struct cd_facts *f = c->f;
	if (f->cs.have_current) {
		c->cur_known = true;
		cd_clocksource_verdict(f->cs.current, f, &c->cur);
	}
	derive_log(c);
	for (int i = 0; i < f->cs.n_available; i++) {
		struct cd_cs_verdict v;
		/* The kernel refuses to switch to a clocksource it marked unstable,
		 * so a rejected TSC still listed is no candidate. */
		if ((c->rejected_sync || c->rejected_watchdog || c->rejected_other) &&
		    strncmp(f->cs.available[i], "tsc", 3) == 0)
			continue;
		cd_clocksource_verdict(f->cs.available[i], f, &v);
		if (v.rank > 0 && (!c->best || v.rank < c->best_v.rank)) {
			c->best = f->cs.available[i];
			c->best_v = v;
		}
	}
	if (c->m && c->m->done) {
		for (int i = 0; i < c->m->n; i++) {
			const struct cd_clock_cost *k = &c->m->c[i];
			if (k->measured && k->spec->high_res && k->syscall)
				c->n_fallback++;
			if (strcmp(k->spec->name, "CLOCK_MONOTONIC") == 0 && k->measured)
				c->mono = k;
		}
	}
	const char *rel = f->kernel.release;
	c->bit32 = strcmp(f->cpu.arch, "i686") == 0 || strcmp(f->cpu.arch, "i386") == 0 ||
	           strstr(rel, "-686") || strstr(rel, "-486") || strstr(rel, ".i686") || strstr(rel, "-pae");
}

static bool current_is(const struct ctx *c, const char *name)
{
	return c->cur_known && strcmp(c->f->cs.current, name) == 0;
}

static bool current_slow(const struct ctx *c)
{
	return c->cur_known && c->cur.vdso == CD_VDSO_NO;
}

/* A faster clocksource than the current one is listed. */
static bool better_listed(const struct ctx *c)
{
	return c->best && c->cur_known && c->best_v.rank > 0 &&
	       (c->cur.rank == 0 || c->best_v.rank < c->cur.rank) && strcmp(c->best, c->f->cs.current) != 0;
}

static bool tsc_listed(const struct ctx *c)
{
	return cd_clocksource_available(&c->f->cs, "tsc");
}

/* The kernel parameters that make the kernel keep the TSC, for this kernel
 * and this cause; "" when no parameter can (sync failure before 3.3). */
static const char *tsc_params(const struct ctx *c)
{
	const struct cd_kernel *k = &c->f->kernel;
	if (c->rejected_sync || !c->rejected_watchdog)
		return cd_kernel_at_least(k, 3, 3, 0) == 0 ? "" : "tsc=reliable";
	/* Watchdog only: tsc=nowatchdog keeps the boot-time sync test (5.2+). */
	return cd_kernel_at_least(k, 5, 2, 0) == 1 ? "tsc=nowatchdog" : "tsc=reliable";
}

static void tsc_risk(struct ctx *c, struct cd_finding *x)
{
	cd_appendf(x->risk, sizeof x->risk,
	           "The kernel stopped trusting the TSC for a reason. With %s it stops checking: "
	           "if the TSCs really disagree between CPUs, or drift, time can go backwards "
	           "between CPUs or run at the wrong rate, and nothing will say so.",
	           tsc_params(c)[0] ? tsc_params(c) : "the TSC forced");
	if (c->warp)
		cd_appendf(x->risk, sizeof x->risk, " Here the CPUs disagreed by %lld cycles at boot.",
		           (long long)c->warp->value);
	if (!(c->f->cpu.flags & CD_CPU_CONSTANT_TSC) && c->f->cpu.have_cpuinfo)
		cd_appendf(x->risk, sizeof x->risk,
		           " This CPU has no constant_tsc: its TSC rate may follow the CPU frequency.");
	cd_appendf(x->risk, sizeof x->risk,
	           " Keep NTP or chrony running, so that any drift is corrected and shows in "
	           "its statistics.");
	c->advised_tsc = true;
}

/* Paravirtual clocks outrank the TSC by rating: when one is current, a TSC
 * rejection is not why time is slow. */
static bool paravirt_current(const struct ctx *c)
{
	return current_is(c, "kvm-clock") || current_is(c, "xen") ||
	       (c->cur_known && strncmp(c->f->cs.current, "hyperv_", 7) == 0);
}

/* The lasting fix for a slow clocksource, shared by several findings. */
static void lasting_fix(struct ctx *c, struct cd_finding *x)
{
	const struct cd_facts *f = c->f;
	const struct cd_kernel *k = &f->kernel;
	if (k->cmd_clocksource[0] && strcmp(k->cmd_clocksource, "tsc") != 0) {
		cd_fix_remove_kernel_param(x->fix_lasting, sizeof x->fix_lasting, f, "clocksource");
		return;
	}
	if (k->cmd_notsc || k->cmd_tsc_unstable) {
		cd_fix_remove_kernel_param(x->fix_lasting, sizeof x->fix_lasting, f,
		                           k->cmd_notsc ? "notsc" : "tsc");
		return;
	}
	if (k->cmd_no_kvmclock_vsyscall && current_is(c, "kvm-clock")) {
		cd_fix_remove_kernel_param(x->fix_lasting, sizeof x->fix_lasting, f, "no-kvmclock-vsyscall");
		return;
	}
	if (current_is(c, "kvm-clock") && cd_kernel_at_least(k, 3, 8, 0) == 0) {
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "A kernel 3.8 or later (RHEL 7 and later) reads kvm-clock in the vDSO when the "
		           "host gives a stable TSC. First measure this one: run `clockdoctor check` on "
		           "the machine.\n");
		return;
	}
	if (paravirt_current(c)) {
		if (tsc_listed(c) && !(c->rejected_sync || c->rejected_watchdog)) {
			cd_fix_add_kernel_params(x->fix_lasting, sizeof x->fix_lasting, f, "clocksource=tsc");
			tsc_risk(c, x);
		} else {
			cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
			           "The guest cannot fix its paravirtual clock alone: see the hypervisor's "
			           "side below.\n");
		}
		return;
	}
	if (c->rejected_sync || c->rejected_watchdog) {
		const char *p = tsc_params(c);
		if (!p[0]) {
			cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
			           "No kernel parameter helps on this kernel (see fix-needs-newer-kernel): "
			           "install a kernel 3.3 or later, then add tsc=reliable.\n");
			c->advised_tsc = true;
			return;
		}
		cd_fix_add_kernel_params(x->fix_lasting, sizeof x->fix_lasting, f, p);
		tsc_risk(c, x);
		return;
	}
	if (better_listed(c)) {
		char p[CD_NAME_MAX + 16];
		snprintf(p, sizeof p, "clocksource=%s", c->best);
		cd_fix_add_kernel_params(x->fix_lasting, sizeof x->fix_lasting, f, p);
		return;
	}
	cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
	           "The kernel log does not say why the TSC is not in use%s. Look for "
	           "\"Marking TSC unstable\" in the kernel log since boot (journalctl -k -b).\n",
	           f->klog.reaches_boot ? "" : " (it no longer reaches back to boot)");
}

static void measured_evidence(const struct ctx *c, struct cd_finding *x, bool only_fallback)
{
	if (!c->m || !c->m->done)
		return;
	for (int i = 0; i < c->m->n; i++) {
		const struct cd_clock_cost *k = &c->m->c[i];
		if (!k->measured || (only_fallback && !(k->spec->high_res && k->syscall)))
			continue;
		char share[32] = "";
		if (k->sys_share >= 0)
			snprintf(share, sizeof share, ", %.0f%% system time", k->sys_share * 100);
		evidence(x, "measured %s: %.0f ns a call, forced system call %.0f ns (ratio %.2f%s)",
		         k->spec->name, k->ns_per_call, k->syscall_ns, k->ratio, share);
	}
}

/* ---- the rules ---- */

static void rule_slow_clocksource(struct ctx *c)
{
	if (!current_slow(c))
		return;
	const struct cd_facts *f = c->f;
	enum cd_severity sev = CD_SEV_CRITICAL;
	bool measured = c->m && c->m->done;
	/* A rule that rests on a guessed version, or that measurement contradicts,
	 * is only a warning. */
	if (measured && c->n_fallback == 0)
		sev = CD_SEV_WARNING;
	if (!measured && strcmp(f->cs.current, "kvm-clock") == 0 && !f->kernel.cmd_no_kvmclock_vsyscall)
		sev = CD_SEV_WARNING;
	struct cd_finding *x = add(c, "slow-clocksource", sev,
	                           "Time calls are system calls: the clocksource %s cannot be read by the vDSO",
	                           f->cs.current);
	evidence(x, "current_clocksource: %s (" CS_PATH "current_clocksource)", f->cs.current);
	if (f->cs.have_available) {
		char list[CD_EVIDENCE_MAX] = "";
		for (int i = 0; i < f->cs.n_available; i++)
			cd_appendf(list, sizeof list, "%s%s", i ? " " : "", f->cs.available[i]);
		evidence(x, "available_clocksource: %s", list);
	}
	evidence(x, "kernel %s: %s; typical cost %s a call",
	         f->kernel.have_release ? f->kernel.release : "(version unknown)", c->cur.why, c->cur.typical);
	if (measured && c->mono)
		evidence(x, "measured CLOCK_MONOTONIC: %.0f ns a call, %.2f times a forced system call",
		         c->mono->ns_per_call, c->mono->ratio);
	if (measured && c->n_fallback == 0)
		evidence(x, "but no high-resolution clock id was measured as a system call: the rule "
		            "above may not fit this kernel");
	if (better_listed(c))
		cd_fix_switch_now(x->fix_now, sizeof x->fix_now, c->best);
	else
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "Nothing can be switched now: no faster clocksource is listed in "
		           "available_clocksource. Programs that can live with 1-4 ms resolution can use "
		           "CLOCK_MONOTONIC_COARSE or CLOCK_REALTIME_COARSE, which stay in the vDSO.\n");
	lasting_fix(c, x);
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
	if (better_listed(c) && strcmp(c->best, "tsc") == 0 && !x->risk[0])
		tsc_risk(c, x);
}

static void rule_vdso_fallback(struct ctx *c)
{
	if (c->n_fallback == 0)
		return;
	const struct cd_clock_cost *k = c->mono;
	struct cd_finding *x;
	if (k && k->syscall)
		x = add(c, "vdso-fallback", CD_SEV_CRITICAL,
		        "Measured: %d high-resolution clock ids go through the kernel "
		        "(CLOCK_MONOTONIC: %.0f ns a call)",
		        c->n_fallback, k->ns_per_call);
	else
		x = add(c, "vdso-fallback", CD_SEV_CRITICAL,
		        "Measured: %d high-resolution clock ids go through the kernel", c->n_fallback);
	measured_evidence(c, x, true);
	for (int i = 0; c->m && i < c->m->n; i++) {
		const struct cd_clock_cost *q = &c->m->c[i];
		if (q->measured && !q->spec->high_res && !q->syscall) {
			evidence(x, "%s: %.0f ns a call, served without a system call", q->spec->name, q->ns_per_call);
			break;
		}
	}
	if (current_slow(c)) {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The cause is the clocksource: see slow-clocksource. Until it is fixed, "
		           "programs that can live with 1-4 ms resolution can read "
		           "CLOCK_MONOTONIC_COARSE or CLOCK_REALTIME_COARSE, which stay in the vDSO.\n");
	} else if (current_is(c, "kvm-clock") || current_is(c, "xen")) {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The cause is the host: see kvmclock-no-vdso or xen-clocksource.\n");
	} else {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The clocksource%s%s should be served by the vDSO, yet the calls reach the "
		           "kernel: look for vdso=0 on the kernel command line, a sandbox that "
		           "intercepts system calls (gVisor, ptrace, seccomp tracing), or a 32-bit "
		           "kernel older than about 3.15, whose vDSO has no clock_gettime.\n",
		           c->cur_known ? " " : "", c->cur_known ? c->f->cs.current : "");
	}
}

static void rule_kvmclock(struct ctx *c)
{
	if (!current_is(c, "kvm-clock"))
		return;
	const struct cd_facts *f = c->f;
	if (c->n_fallback > 0) {
		struct cd_finding *x = add(c, "kvmclock-no-vdso", CD_SEV_CRITICAL,
		                           "kvm-clock goes through the kernel: the host does not give "
		                           "a stable TSC");
		measured_evidence(c, x, true);
		evidence(x, "kernel %s: %s", f->kernel.have_release ? f->kernel.release : "(version unknown)",
		         c->cur.why);
		bool invariant = (f->cpu.flags & CD_CPU_CONSTANT_TSC) && (f->cpu.flags & CD_CPU_NONSTOP_TSC);
		if (tsc_listed(c) && invariant) {
			cd_fix_switch_now(x->fix_now, sizeof x->fix_now, "tsc");
			cd_fix_add_kernel_params(x->fix_lasting, sizeof x->fix_lasting, f, "clocksource=tsc");
			tsc_risk(c, x);
			cd_appendf(x->risk, sizeof x->risk,
			           " In a VM, the TSC can jump on live migration to a host with another "
			           "TSC rate unless the hypervisor scales it.");
		} else {
			cd_appendf(x->fix_now, sizeof x->fix_now,
			           "The guest cannot fix this alone%s.\n",
			           tsc_listed(c) ? ": tsc is listed, but this CPU does not show an invariant TSC"
			                         : ": no tsc clocksource is listed");
		}
		cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
	} else if (c->cur.vdso == CD_VDSO_DEPENDS && !(c->m && c->m->done)) {
		struct cd_finding *x = add(c, "clocksource-unverified", CD_SEV_INFO,
		                           "kvm-clock is fast only while the host keeps a stable TSC; "
		                           "nothing was measured");
		evidence(x, "current_clocksource: kvm-clock; %s", c->cur.why);
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "Run `clockdoctor check` on the machine itself: it measures whether "
		           "kvm-clock is served by the vDSO.\n");
	}
}

static void rule_xen(struct ctx *c)
{
	if (!current_is(c, "xen"))
		return;
	const struct cd_facts *f = c->f;
	bool measured = c->m && c->m->done;
	enum cd_severity sev = measured && c->n_fallback == 0 ? CD_SEV_INFO : CD_SEV_WARNING;
	struct cd_finding *x = add(c, "xen-clocksource", sev, "A Xen guest on the xen clocksource%s",
	                           measured ? (c->n_fallback ? ", measured as system calls"
	                                                     : ", served by the vDSO")
	                                    : ": often a system call");
	evidence(x, "current_clocksource: xen; %s", c->cur.why);
	for (int i = 0; i < f->klog.n_events; i++)
		if (f->klog.events[i].kind == CD_EV_XEN_NO_VDSO)
			evidence_event(x, &f->klog.events[i]);
	measured_evidence(c, x, true);
	if (sev == CD_SEV_INFO)
		return;
	if (tsc_listed(c)) {
		cd_fix_switch_now(x->fix_now, sizeof x->fix_now, "tsc");
		cd_fix_add_kernel_params(x->fix_lasting, sizeof x->fix_lasting, f, "clocksource=tsc");
		tsc_risk(c, x);
	}
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
}

static void rule_unverified_other(struct ctx *c)
{
	if (!c->cur_known || c->cur.vdso != CD_VDSO_UNKNOWN || (c->m && c->m->done))
		return;
	struct cd_finding *x = add(c, "clocksource-unverified", CD_SEV_INFO,
	                           "The clocksource %s is not one this tool knows; nothing was measured",
	                           c->f->cs.current);
	evidence(x, "current_clocksource: %s", c->f->cs.current);
	cd_appendf(x->fix_now, sizeof x->fix_now,
	           "Run `clockdoctor check` on the machine itself: it measures whether time calls "
	           "reach the kernel.\n");
}

static void rule_tsc_unstable_sync(struct ctx *c)
{
	if (!c->rejected_sync)
		return;
	const struct cd_facts *f = c->f;
	struct cd_finding *x;
	if (c->warp)
		x = add(c, "tsc-unstable-sync", CD_SEV_WARNING,
		        "The kernel rejected the TSC at boot: a warp of %lld cycles between CPU#%d and CPU#%d",
		        (long long)c->warp->value, c->warp->cpu_a, c->warp->cpu_b);
	else
		x = add(c, "tsc-unstable-sync", CD_SEV_WARNING, "The kernel rejected the TSC at boot: %s",
		        c->unstable ? c->unstable->name : "the TSCs are not synchronized");
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind == CD_EV_TSC_SYNC_HEADER || e->kind == CD_EV_TSC_WARP ||
		    (e->kind == CD_EV_TSC_UNSTABLE && reason_is_sync(e->name)))
			evidence_event(x, e);
	}
	if (c->warp && c->tsc_mhz > 0)
		evidence(x, "%lld cycles at %.3f MHz is about %.1f us", (long long)c->warp->value, c->tsc_mhz,
		         (double)c->warp->value / c->tsc_mhz);
	if (c->unstable && strstr(c->unstable->name, "unsynchronized") && f->cpu.have_cpuinfo &&
	    !(f->cpu.flags & CD_CPU_CONSTANT_TSC) && f->cpu.count > 1)
		evidence(x, "the CPU (%s) has no constant_tsc and there are %d CPUs: the kernel then "
		            "assumes the TSCs are unsynchronized (unsynchronized_tsc() in "
		            "arch/x86/kernel/tsc.c)",
		         f->cpu.vendor[0] ? f->cpu.vendor : "vendor unknown", f->cpu.count);
	if (f->kernel.cmd_tsc_reliable)
		evidence(x, "tsc=reliable is on the command line, yet the TSC was rejected");
	if (better_listed(c))
		cd_fix_switch_now(x->fix_now, sizeof x->fix_now, c->best);
	else
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The TSC cannot be switched back on without a reboot: the kernel removed it "
		           "from the list.\n");
	lasting_fix(c, x);
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
	if (!x->risk[0] && tsc_params(c)[0])
		tsc_risk(c, x);
}

/* The watchdog's counters as evidence: how long its interval was, and how
 * far the TSC ran in it.  acpi_pm ticks at exactly 3.579545 MHz, so its
 * interval can be computed; other watchdogs only when the kernel printed
 * wd_nsec. */
static void watchdog_numbers(const struct ctx *c, struct cd_finding *x, const struct cd_event *e)
{
	double wd_s = 0;
	if (e->value > 0)
		wd_s = (double)e->value / 1e9;
	else if (strcmp(e->name2, "acpi_pm") == 0 && e->wd_cycles)
		wd_s = (double)e->wd_cycles / 3579545.0;
	if (wd_s > 0) {
		evidence(x, "the watchdog %s measured an interval of %.1f ms", e->name2, wd_s * 1e3);
		if (e->value2 > 0)
			evidence(x, "the TSC measured %.1f ms over the same interval: a skew of %.1f ms",
			         (double)e->value2 / 1e6, ((double)e->value2 - wd_s * 1e9) / 1e6);
		else if (e->cs_cycles && c->tsc_mhz > 0) {
			double tsc_s = (double)e->cs_cycles / (c->tsc_mhz * 1e6);
			evidence(x, "the TSC advanced %llu cycles, %.1f ms at %.3f MHz: a skew of %.1f ms",
			         (unsigned long long)e->cs_cycles, tsc_s * 1e3, c->tsc_mhz, (tsc_s - wd_s) * 1e3);
		} else if (e->cs_cycles) {
			evidence(x, "the TSC advanced %llu cycles over it, which would be a TSC of %.1f MHz; "
			            "compare with the CPU's real TSC frequency",
			         (unsigned long long)e->cs_cycles, (double)e->cs_cycles / wd_s / 1e6);
		}
	}
}

static void rule_tsc_unstable_watchdog(struct ctx *c)
{
	if (!c->rejected_watchdog)
		return;
	const struct cd_facts *f = c->f;
	const struct cd_event *e = c->wd_skew ? c->wd_skew : c->wd_delta ? c->wd_delta : c->unstable;
	char when[64] = "an unknown time";
	if (e && e->ts >= 0)
		fmt_duration(when, sizeof when, e->ts);
	const char *wd = c->wd_skew && c->wd_skew->name2[0] ? c->wd_skew->name2 : NULL;
	struct cd_finding *x;
	if (wd)
		x = add(c, "tsc-unstable-watchdog", CD_SEV_WARNING,
		        "The clocksource watchdog rejected the TSC after %s of uptime, against %s", when, wd);
	else
		x = add(c, "tsc-unstable-watchdog", CD_SEV_WARNING,
		        "The clocksource watchdog rejected the TSC after %s of uptime", when);
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *q = &f->klog.events[i];
		if ((q->kind == CD_EV_WATCHDOG_SKEW && strncmp(q->name, "tsc", 3) == 0) ||
		    (q->kind == CD_EV_CS_UNSTABLE_DELTA && strncmp(q->name, "tsc", 3) == 0) ||
		    (q->kind == CD_EV_TSC_UNSTABLE && strstr(q->name, "watchdog")) ||
		    q->kind == CD_EV_WD_READBACK_EXCESSIVE || q->kind == CD_EV_CS_SWITCHED)
			evidence_event(x, q);
	}
	if (c->wd_skew)
		watchdog_numbers(c, x, c->wd_skew);
	if (c->wd_delta) {
		long long d = (long long)c->wd_delta->value;
		evidence(x, "the TSC and the watchdog disagreed by %lld ns (%.2f s)", d, (double)d / 1e9);
	}
	if (c->wd_readback)
		evidence(x, "the watchdog blamed read-back delay (%lld ns against a limit of %lld ns): "
		            "a sign of SMIs, NMIs or an overloaded host rather than of a bad TSC",
		         (long long)c->wd_readback->value, (long long)c->wd_readback->value2);
	bool failover_hint = c->wd_delta && strstr(c->wd_delta->line, "clocksource_failover");
	if (failover_hint)
		evidence(x, "this is a RHEL 6 kernel, which does not fail over by default: the current "
		            "clocksource stays %s", f->cs.have_current ? f->cs.current : "as it was");

	if (paravirt_current(c) || (c->cur_known && !current_slow(c))) {
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "This rejection does not slow time calls: the current clocksource is %s. The TSC "
		           "was still seen disagreeing with the watchdog%s: find the cause on the host "
		           "(seed 004: a host reloading a passthrough NIC's VF driver made its guests' "
		           "clocks jump) and keep NTP or chrony running.\n",
		           f->cs.current, c->wd_delta ? ", by seconds" : "");
		if (failover_hint)
			cd_appendf(x->fix_now, sizeof x->fix_now,
			           "Do not follow the advice to add clocksource_failover=acpi_pm: acpi_pm "
			           "costs about 2 us a call, the slowest clocksource there is.\n");
		return;
	}
	if (better_listed(c))
		cd_fix_switch_now(x->fix_now, sizeof x->fix_now, c->best);
	else
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "The TSC cannot be switched back on without a reboot: the kernel removed it "
		           "from the list.\n");
	lasting_fix(c, x);
	if (cd_kernel_at_least(&f->kernel, 5, 16, 0) == 1) {
		static const struct { unsigned flag; const char *name; } need[] = {
			{ CD_CPU_CONSTANT_TSC, "constant_tsc" },
			{ CD_CPU_NONSTOP_TSC, "nonstop_tsc" },
			{ CD_CPU_TSC_ADJUST, "tsc_adjust" },
		};
		char missing[64] = "";
		for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
			if (!(f->cpu.flags & need[i].flag))
				cd_appendf(missing, sizeof missing, "%s%s", missing[0] ? ", " : "", need[i].name);
		if (f->cpu.have_cpuinfo && missing[0])
			cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
			           "(Since about 5.16 the kernel turns the watchdog off by itself on CPUs with "
			           "constant_tsc, nonstop_tsc and tsc_adjust; this CPU lacks %s.)\n", missing);
	}
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
	if (!x->risk[0] && tsc_params(c)[0])
		tsc_risk(c, x);
}

static void rule_tsc_not_invariant(struct ctx *c)
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
	enum cd_severity sev = (!constant && current_slow(c)) ? CD_SEV_WARNING : CD_SEV_INFO;
	struct cd_finding *x = add(c, "tsc-not-invariant", sev,
	                           "The CPU does not promise an invariant TSC (%s%s%s)",
	                           constant ? "" : "no constant_tsc", !constant && !nonstop ? ", " : "",
	                           nonstop ? "" : "no nonstop_tsc");
	evidence(x, "cpuinfo flags: tsc%s%s%s", constant ? " constant_tsc" : "", nonstop ? " nonstop_tsc" : "",
	         f->cpu.flags & CD_CPU_HYPERVISOR ? " hypervisor" : "");
	if (f->cpu.flags != f->cpu.flags_all)
		evidence(x, "the CPUs do not all list the same TSC flags");
	if (f->cpuid.has_invariant)
		evidence(x, "CPUID 0x80000007 EDX[8] (invariant TSC): %d", f->cpuid.invariant_tsc ? 1 : 0);
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

static void rule_clocksource_forced(struct ctx *c)
{
	const struct cd_kernel *k = &c->f->kernel;
	char what[160] = "";
	bool slow = false;
	if (k->cmd_clocksource[0]) {
		struct cd_cs_verdict v;
		cd_clocksource_verdict(k->cmd_clocksource, c->f, &v);
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
	struct cd_finding *x = add(c, "clocksource-forced", slow ? CD_SEV_WARNING : CD_SEV_INFO,
	                           "The kernel command line %s the clocksource: %s",
	                           slow ? "forces a slow choice of" : "sets", what);
	evidence(x, "/proc/cmdline: %s", k->cmdline);
	for (int i = 0; i < c->f->klog.n_events; i++)
		if (c->f->klog.events[i].kind == CD_EV_CS_SWITCHED)
			evidence_event(x, &c->f->klog.events[i]);
	if (!slow)
		return;
	if (better_listed(c))
		cd_fix_switch_now(x->fix_now, sizeof x->fix_now, c->best);
	if (k->cmd_clocksource[0])
		cd_fix_remove_kernel_param(x->fix_lasting, sizeof x->fix_lasting, c->f, "clocksource");
	else if (k->cmd_notsc)
		cd_fix_remove_kernel_param(x->fix_lasting, sizeof x->fix_lasting, c->f, "notsc");
	else if (k->cmd_tsc_unstable)
		cd_fix_remove_kernel_param(x->fix_lasting, sizeof x->fix_lasting, c->f, "tsc");
	else
		cd_fix_remove_kernel_param(x->fix_lasting, sizeof x->fix_lasting, c->f, "no-kvmclock-vsyscall");
	cd_appendf(x->risk, sizeof x->risk,
	           "Someone chose this on purpose, perhaps because the TSC misbehaved on this "
	           "machine: find out why before removing it.\n");
}

static void rule_tsc_reliable(struct ctx *c)
{
	const struct cd_facts *f = c->f;
	const struct cd_event *skipped = NULL;
	for (int i = 0; i < f->klog.n_events; i++)
		if (f->klog.events[i].kind == CD_EV_TSC_SYNC_SKIPPED && !skipped)
			skipped = &f->klog.events[i];
	struct cd_finding *x;
	if (f->kernel.cmd_tsc_reliable) {
		x = add(c, "tsc-reliable-set", CD_SEV_INFO,
		        "tsc=reliable is in force: the kernel does not check the TSC");
		evidence(x, "/proc/cmdline: %s", f->kernel.cmdline);
	} else if ((f->cpu.flags & CD_CPU_TSC_RELIABLE) || skipped) {
		x = add(c, "tsc-reliable-set", CD_SEV_INFO,
		        "The hypervisor marks the TSC reliable: the kernel does not check it");
		if (f->cpu.flags & CD_CPU_TSC_RELIABLE)
			evidence(x, "cpuinfo flags: tsc_reliable");
	} else {
		return;
	}
	if (skipped)
		evidence_event(x, skipped);
	cd_appendf(x->risk, sizeof x->risk,
	           "With the TSC marked reliable the kernel skips the boot-time sync test between "
	           "CPUs and the run-time watchdog: a TSC that drifts or differs between CPUs will "
	           "not be caught, and time can go backwards between CPUs. Keep NTP or chrony "
	           "running; it is the only check left.\n");
}

static void rule_needs_newer_kernel(struct ctx *c)
{
	const struct cd_facts *f = c->f;
	const struct cd_kernel *k = &f->kernel;
	if (c->rejected_sync && cd_kernel_at_least(k, 3, 3, 0) == 0) {
		struct cd_finding *x = add(c, "fix-needs-newer-kernel", CD_SEV_WARNING,
		                           "tsc=reliable cannot help on kernel %s: the boot-time sync check "
		                           "ignores it before 3.3", k->release);
		evidence(x, "kernel %s (older than 3.3)", k->release);
		evidence(x, "before 3.3, check_tsc_sync_source() skips the test only for CPUs flagged "
		            "X86_FEATURE_TSC_RELIABLE (set by VMware's platform code), not for "
		            "tsc=reliable; 3.3 and later test tsc_clocksource_reliable, which it sets");
		if (k->cmd_tsc_reliable)
			evidence(x, "tsc=reliable is already on the command line, and the TSC was still rejected");
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "Install a kernel 3.3 or later, then add tsc=reliable to its command line.%s\n",
		           f->os.family == CD_OS_DEBIAN
		               ? " On Debian 7 (wheezy), seed 000 did it with the backports kernel: add "
		                 "'deb http://deb.debian.org/debian wheezy-backports main' (today: "
		                 "archive.debian.org) to /etc/apt/sources.list, then"
		               : "");
		if (f->os.family == CD_OS_DEBIAN)
			cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
			           "$ apt-get update && apt-get -t wheezy-backports install linux-image-%s\n",
			           c->bit32 ? "686-pae" : "amd64");
		cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
		c->advised_tsc = true;
		return;
	}
	/* The 32-bit vDSO gained clock_gettime in about 3.15: before that, every
	 * call is a system call even on tsc (seed 000's 3.11 kernel still showed
	 * read_tsc in the kernel under clock_gettime). */
	if (c->bit32 && cd_kernel_at_least(k, 3, 15, 0) == 0) {
		struct cd_finding *x = add(c, "fix-needs-newer-kernel", CD_SEV_INFO,
		                           "This 32-bit kernel's vDSO has no clock_gettime: time calls are "
		                           "system calls even on %s",
		                           f->cs.have_current ? f->cs.current : "a fast clocksource");
		evidence(x, "kernel %s: a 32-bit x86 kernel older than about 3.15", k->release);
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "A 64-bit kernel, or a 32-bit kernel 3.15 or later, serves clock_gettime in "
		           "the vDSO (about 20-50 ns instead of 150-250 ns on tsc).\n");
	}
}

static void rule_better_clocksource(struct ctx *c)
{
	if (!better_listed(c) || !(current_slow(c) || c->n_fallback > 0))
		return;
	const struct cd_facts *f = c->f;
	struct cd_finding *x = add(c, "better-clocksource-available", CD_SEV_WARNING,
	                           "A faster clocksource is listed: %s (%s a call) instead of %s (%s)",
	                           c->best, c->best_v.typical, f->cs.current, c->cur.typical);
	evidence(x, "available_clocksource lists %s; %s", c->best, c->best_v.why);
	cd_fix_switch_now(x->fix_now, sizeof x->fix_now, c->best);
	if (!f->kernel.cmd_clocksource[0]) {
		char p[CD_NAME_MAX + 16];
		snprintf(p, sizeof p, "clocksource=%s", c->best);
		cd_fix_add_kernel_params(x->fix_lasting, sizeof x->fix_lasting, f, p);
	} else {
		cd_fix_remove_kernel_param(x->fix_lasting, sizeof x->fix_lasting, f, "clocksource");
	}
	if (strcmp(c->best, "tsc") == 0)
		tsc_risk(c, x);
}

static void rule_tsc_adjust(struct ctx *c)
{
	const struct cd_facts *f = c->f;
	struct cd_finding *x = NULL;
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind != CD_EV_TSC_ADJUST)
			continue;
		if (!x)
			x = add(c, "tsc-adjust-firmware", CD_SEV_INFO,
			        "The firmware wrote TSC_ADJUST; the kernel set it back");
		evidence_event(x, e);
	}
	if (x)
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "Nothing to do while the kernel corrects it; a firmware update usually stops "
		           "it. If the TSC is later rejected, this is the first suspect.\n");
}

static void rule_ntp(struct ctx *c)
{
	const struct cd_facts *f = c->f;
	if (!f->ntp.have || f->ntp.synchronized)
		return;
	const struct cd_kernel *k = &f->kernel;
	bool in_force = k->cmd_tsc_reliable || k->cmd_tsc_nowatchdog || strcmp(k->cmd_clocksource, "tsc") == 0;
	enum cd_severity sev = (in_force || c->advised_tsc) ? CD_SEV_WARNING : CD_SEV_INFO;
	struct cd_finding *x = add(c, "ntp-unsynchronized", sev,
	                           "The kernel's clock is not disciplined by NTP or chrony%s",
	                           in_force ? ", and a TSC fix is in force"
	                                    : c->advised_tsc ? ", and this report advises a TSC fix" : "");
	evidence(x, "adjtimex: state %d%s, status 0x%lx%s", f->ntp.state,
	         f->ntp.state == 5 ? " (TIME_ERROR)" : "", f->ntp.status,
	         (f->ntp.status & 0x40) ? " (STA_UNSYNC)" : "");
	cd_fix_ntp(x->fix_now, sizeof x->fix_now, f);
}

/* ---- the report ---- */

static int by_severity(const void *a, const void *b)
{
	const struct cd_finding *x = a, *y = b;
	return (int)y->severity - (int)x->severity;
}

static void verdict_line(struct ctx *c)
{
	struct cd_report *r = c->r;
	const struct cd_facts *f = c->f;
	char *v = r->verdict;
	size_t cap = sizeof r->verdict;
	const char *cs = f->cs.have_current ? f->cs.current : "unknown";
	switch (r->status) {
	case CD_STATUS_CRITICAL:
		if (c->mono && c->mono->syscall)
			snprintf(v, cap, "time calls are system calls (clocksource %s, CLOCK_MONOTONIC %.0f ns)",
			         cs, c->mono->ns_per_call);
		else
			snprintf(v, cap, "time calls are system calls (clocksource %s, %s)", cs,
			         c->cur_known ? c->cur.typical : "cost unknown");
		break;
	case CD_STATUS_WARNING:
		snprintf(v, cap, "clocksource %s; %s needs attention", cs, r->f[0].code);
		break;
	case CD_STATUS_OK:
		if (c->mono)
			snprintf(v, cap, "time is cheap here: clocksource %s, CLOCK_MONOTONIC %.0f ns", cs,
			         c->mono->ns_per_call);
		else
			snprintf(v, cap, "clocksource %s%s (not measured)", cs,
			         c->cur.vdso == CD_VDSO_YES ? ", read by the vDSO" : "");
		break;
	case CD_STATUS_UNKNOWN:
		snprintf(v, cap, "could not tell: neither the clocksource nor a measurement is available");
		break;
	}
}

void cd_diagnose(const struct cd_facts *facts, const struct cd_measurements *m, struct cd_report *r)
{
	memset(r, 0, sizeof *r);
	struct ctx c = { .f = facts, .m = (m && m->done) ? m : NULL, .r = r };
	r->measured = c.m != NULL;
	derive(&c);

	rule_slow_clocksource(&c);
	rule_vdso_fallback(&c);
	rule_kvmclock(&c);
	rule_xen(&c);
	rule_unverified_other(&c);
	rule_tsc_unstable_sync(&c);
	rule_tsc_unstable_watchdog(&c);
	rule_needs_newer_kernel(&c);
	rule_clocksource_forced(&c);
	rule_better_clocksource(&c);
	rule_tsc_not_invariant(&c);
	rule_tsc_reliable(&c);
	rule_tsc_adjust(&c);
	rule_ntp(&c);  /* last: its severity depends on what the others advised */

	/* Stable sort by severity: insertion order within a severity is the
	 * order above, which reads as cause after effect. */
	for (int i = 1; i < r->n; i++)
		for (int j = i; j > 0 && by_severity(&r->f[j - 1], &r->f[j]) > 0; j--) {
			struct cd_finding t = r->f[j];
			r->f[j] = r->f[j - 1];
			r->f[j - 1] = t;
		}

	enum cd_severity worst = CD_SEV_INFO;
	bool any = false;
	for (int i = 0; i < r->n; i++)
		if (r->f[i].severity > CD_SEV_INFO) {
			any = true;
			if (r->f[i].severity > worst)
				worst = r->f[i].severity;
		}
	if (!any && !c.cur_known && !c.m)
		r->status = CD_STATUS_UNKNOWN;
	else
		r->status = any ? (worst == CD_SEV_CRITICAL ? CD_STATUS_CRITICAL : CD_STATUS_WARNING) : CD_STATUS_OK;
	verdict_line(&c);
}

const char *cd_severity_name(enum cd_severity s)
{
	switch (s) {
	case CD_SEV_INFO: return "info";
	case CD_SEV_WARNING: return "warning";
	case CD_SEV_CRITICAL: return "critical";
	}
	return "unknown";
}

const char *cd_status_name(enum cd_status s)
{
	switch (s) {
	case CD_STATUS_OK: return "ok";
	case CD_STATUS_WARNING: return "warning";
	case CD_STATUS_CRITICAL: return "critical";
	case CD_STATUS_UNKNOWN: return "unknown";
	}
	return "unknown";
}

const struct cd_finding *cd_report_find(const struct cd_report *r, const char *code)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->f[i].code, code) == 0)
			return &r->f[i];
	return NULL;
}
