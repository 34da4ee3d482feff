/*
 * rules.c: facts and measurements in, findings out.
 *
 * First a context is derived once (what the kernel log says about the TSC,
 * which clocksource would be better, what was measured), then each rule is a
 * small function that reads the context and adds at most one finding.  Rules
 * that advise trusting the TSC say so in the context, because the NTP rule's
 * severity depends on it (every TSC fix assumes a clock disciplined by NTP
 * or chrony: Red Hat's KVM guest timing guide asks for NTP in every guest).  docs/findings.md documents every code; a code is never renamed.
 */
#include "diagnose/rules.h"
#include "diagnose/fixes.h"
#include "probe/probe.h"
#include "util/lines.h"

#include "clockfacts.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- building findings ---- */

struct cd_finding *cd_add_finding(struct cd_ctx *c, const char *code, enum cd_severity sev, const char *fmt, ...)
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

void cd_evidence(struct cd_finding *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	CD_LINES_VADD(x->evidence, x->n_evidence, fmt, ap);
	va_end(ap);
}

/* A log line as evidence: "kernel log [3007.005852]: msg". */
void cd_evidence_event(struct cd_finding *x, const struct cd_event *e)
{
	if (e->ts >= 0)
		cd_evidence(x, "kernel log [%.6f]: %s", e->ts, e->line);
	else
		cd_evidence(x, "kernel log: %s", e->line);
	/* The kernel's own numbers, as printed, beside whatever is derived
	 * from them: a user can search for these. */
	for (const char *d = e->detail; *d;) {
		int n = (int)strcspn(d, "\n");
		cd_evidence(x, "kernel log: %.*s", n, d);
		d += n + (d[n] == '\n');
	}
}

void cd_fmt_duration(char *buf, size_t cap, double s)
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

/* Each action is set once, by the first fix that names it: a finding's
 * texts may mention a second choice, but `fix` carries out the first. */
void cd_act_switch_now(struct cd_finding *x, const char *clocksource)
{
	cd_fix_switch_now(x->fix_now, sizeof x->fix_now, clocksource);
	if (!x->act_switch[0])
		snprintf(x->act_switch, sizeof x->act_switch, "%s", clocksource);
}

void cd_act_add_params(struct cd_finding *x, const struct cd_facts *f, const char *params)
{
	cd_fix_add_kernel_params(x->fix_lasting, sizeof x->fix_lasting, f, params);
	if (!x->act_add[0] && !x->act_remove[0])
		snprintf(x->act_add, sizeof x->act_add, "%s", params);
}

void cd_act_remove_param(struct cd_finding *x, const struct cd_facts *f, const char *param)
{
	cd_fix_remove_kernel_param(x->fix_lasting, sizeof x->fix_lasting, f, param);
	if (!x->act_add[0] && !x->act_remove[0])
		snprintf(x->act_remove, sizeof x->act_remove, "%s", param);
}

/* ---- context ---- */

bool cd_reason_is_sync(const char *reason)
{
	return strstr(reason, "sync") != NULL || strstr(reason, "unsynchronized") != NULL;
}

static void derive_log(struct cd_ctx *c)
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
		/* check_tsc_sync_source() (arch/x86/kernel/tsc_sync.c) prints
		 * this header only when it measured a warp (pr_warn; a pass is
		 * pr_debug, or ": passed." on the same line in 2.6.x, which
		 * klog.c drops): alone, with its Measured line cut off or
		 * grepped away, it is the failure all the same. */
		case CD_EV_TSC_SYNC_HEADER:
			if (!c->sync_header)
				c->sync_header = e;
			c->rejected_sync = true;
			break;
		case CD_EV_TSC_UNSTABLE:
			if (!c->unstable)
				c->unstable = e;
			if (cd_reason_is_sync(e->name))
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

/* The ids every x86 and arm64 vDSO has served since clock_gettime entered
 * it: a fallback of these is the clocksource's doing.  Others came later (on
 * x86 CLOCK_TAI with FC_KV_X86_VDSO_TAI, BOOTTIME and MONOTONIC_RAW with
 * FC_KV_X86_GENERIC_VDSO: lib/clockfacts.h), so on an older kernel their
 * system calls are normal. */
static bool core_clock(const struct cd_clock_spec *spec)
{
	return spec->kind == CD_CALL_GETTIMEOFDAY ||
	       (spec->kind == CD_CALL_CLOCK_GETTIME &&
	        (spec->clockid == CLOCK_REALTIME || spec->clockid == CLOCK_MONOTONIC));
}

/* With no clocksource known (no sysfs, no switch line in the log), the
 * kernel log and the command line may still leave only the tick-based
 * clocksources on x86: the TSC refused (rejected, or not calibrated), no
 * HPET and no ACPI PM timer (acpi=off takes both away: the HPET is found
 * through an ACPI table; or the kernel said it found neither while
 * calibrating), and no hypervisor's paravirtual clock.  jiffies,
 * refined-jiffies (arch/x86/kernel/setup.c) and the PIT are then all there
 * is, and none has a vDSO read. */
static void derive_tick_left(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	if (c->cur_known || (f->cpu.arch[0] && strcmp(f->cpu.arch, "x86_64") != 0 && !c->bit32))
		return;
	bool tsc_out = c->rejected_sync || c->rejected_watchdog || c->rejected_other || f->kernel.cmd_notsc ||
	               f->kernel.cmd_tsc_unstable;
	bool no_ref = f->kernel.cmd_acpi_off;
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind == CD_EV_TSC_CALIBRATION && strcmp(e->name, "no-reference") == 0)
			no_ref = true;
	}
	enum cd_hv hv = f->hv.kind;
	bool paravirt = hv == CD_HV_KVM || hv == CD_HV_XEN || hv == CD_HV_HYPERV || hv == CD_HV_OTHER ||
	                hv == CD_HV_UNKNOWN || f->hv.interface == CD_HV_KVM || f->hv.interface == CD_HV_HYPERV;
	/* Unknown is not bare metal, but a guest says so in its log: with the
	 * log read and no hypervisor in it, no paravirtual clock registered. */
	if (hv == CD_HV_UNKNOWN && f->klog.readable && f->klog.reaches_boot && !f->hv.klog_detected[0] &&
	    !(f->cpu.flags & CD_CPU_HYPERVISOR))
		paravirt = false;
	c->tick_left = tsc_out && no_ref && !paravirt;
}

static void derive(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	if (f->cs.have_current) {
		c->cur_known = true;
		cd_clocksource_verdict(f->cs.current, f, &c->cur);
	}
	derive_log(c);
	/* only_slow (rules.h): while every candidate is a system call.  A
	 * clocksource this tool does not know, or that the vDSO may read, ends
	 * it; so does rank 1 under a vDSO without clock_gettime, which is the
	 * kernel's doing, not the clocksource's (fix-needs-newer-kernel). */
	char slow[sizeof c->only_slow] = "";
	bool all_slow = !c->cur_known && f->cs.have_available;
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
		all_slow = all_slow && v.vdso == CD_VDSO_NO && v.rank > 1;
		cd_appendf(slow, sizeof slow, "%s%s", slow[0] ? " or " : "", f->cs.available[i]);
	}
	if (all_slow && slow[0])
		snprintf(c->only_slow, sizeof c->only_slow, "%s", slow);
	if (c->m && c->m->done) {
		for (int i = 0; i < c->m->n; i++) {
			const struct cd_clock_cost *k = &c->m->c[i];
			if (k->measured && k->syscall && core_clock(k->spec))
				c->n_fallback++;
			if (k->measured && k->syscall && !k->spec->high_res)
				c->n_coarse_fallback++;
			if (strcmp(k->spec->name, "CLOCK_MONOTONIC") == 0 && k->measured)
				c->mono = k;
		}
	}
	c->bit32 = cd_kernel_32bit(f);
	c->no_vdso_time = cd_kernel_no_vdso_time(f);
	cd_derive_tsc_unsafe(c);
	derive_tick_left(c);
}

const char *cd_cs_name(const struct cd_ctx *c)
{
	if (c->cur_known)
		return c->f->cs.current;
	return c->tick_left ? "jiffies, refined-jiffies or pit" : c->only_slow[0] ? c->only_slow : "unknown";
}

bool cd_current_is(const struct cd_ctx *c, const char *name)
{
	return c->cur_known && strcmp(c->f->cs.current, name) == 0;
}

/* On a kernel without vDSO time (cd_kernel_no_vdso_time) even the fastest
 * clocksource is a system call, but then the clocksource is not the cause:
 * fix-needs-newer-kernel says what is. */
bool cd_current_slow(const struct cd_ctx *c)
{
	if (c->no_vdso_time && c->cur.rank == 1)
		return false;
	return c->cur_known && (c->cur.vdso == CD_VDSO_NO || c->cur.vdso == CD_VDSO_SLOW);
}

/* A faster clocksource than the current one is listed. */
bool cd_better_listed(const struct cd_ctx *c)
{
	/* An unknown current clocksource is not known to be slower than anything. */
	return c->best && c->cur_known && c->best_v.rank > 0 && c->cur.rank > 0 &&
	       c->best_v.rank < c->cur.rank && strcmp(c->best, c->f->cs.current) != 0;
}

bool cd_tsc_listed(const struct cd_ctx *c)
{
	return cd_clocksource_available(&c->f->cs, "tsc");
}

/* The kernel parameters that make the kernel keep the TSC, for this kernel
 * and this cause; "" when no parameter can (a sync failure before
 * FC_KV_TSC_RELIABLE_SKIPS_SYNC). */
const char *cd_tsc_params(const struct cd_ctx *c)
{
	const struct cd_kernel *k = &c->f->kernel;
	if (c->rejected_sync || !c->rejected_watchdog)
		return cd_kernel_at_least(k, FC_KV_TSC_RELIABLE_SKIPS_SYNC) == 0 ? "" : "tsc=reliable";
	/* Watchdog only: tsc=nowatchdog keeps the boot-time sync test. */
	return cd_kernel_at_least(k, FC_KV_TSC_NOWATCHDOG) == 1 ? "tsc=nowatchdog" : "tsc=reliable";
}

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

/* The exact clocksource= token on the command line, to remove it by name. */
#define CS_TOKEN_MAX (CD_NAME_MAX + 16)
static const char *cs_token(const struct cd_facts *f, char tok[CS_TOKEN_MAX])
{
	snprintf(tok, CS_TOKEN_MAX, "clocksource=%s", f->kernel.cmd_clocksource);
	return tok;
}

/* Paravirtual clocks outrank the TSC by rating: when one is current, a TSC
 * rejection is not why time is slow. */
bool cd_paravirt_current(const struct cd_ctx *c)
{
	return c->cur_known && fc_cs_is_paravirt(c->f->cs.current);
}

/* The TSC rejected for a reason other than the sync test or the watchdog
 * (mark_tsc_unstable's other callers): say which, and what it means. */
static bool other_rejection(struct cd_ctx *c, struct cd_finding *x)
{
	static const struct { const char *reason, *meaning; } known[] = {
		{ "cpufreq", "the TSC's rate followed the CPU's frequency (no constant_tsc): it is not a "
		             "clock on this machine, and no parameter makes it one. Keep the current "
		             "clocksource; a CPU with constant_tsc is the cure." },
		{ "Hyper-V", "Hyper-V guests keep time with the Hyper-V TSC page "
		             "(hyperv_clocksource_tsc_page): see the hypervisor's side." },
		{ "khz", "the kernel could not measure the TSC's frequency: a firmware or hypervisor "
		         "problem, which no parameter fixes." },
		{ "boot parameter", "the command line rejects it: see clocksource-forced." },
	};
	for (int i = 0; i < c->f->klog.n_events; i++) {
		const struct cd_event *e = &c->f->klog.events[i];
		if (e->kind != CD_EV_TSC_UNSTABLE || cd_reason_is_sync(e->name) || strstr(e->name, "watchdog"))
			continue;
		cd_evidence_event(x, e);
		const char *meaning = "look up this reason in arch/x86/kernel/tsc.c for this kernel.";
		for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
			if (strstr(e->name, known[k].reason))
				meaning = known[k].meaning;
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting, "The kernel rejected the TSC because of %s: %s\n",
		           e->name, meaning);
		return true;
	}
	return false;
}

/* The lasting fix for a slow clocksource, shared by several findings. */
void cd_lasting_fix(struct cd_ctx *c, struct cd_finding *x)
{
	const struct cd_facts *f = c->f;
	const struct cd_kernel *k = &f->kernel;
	/* An arm64 counter erratum: the workaround is what keeps time right on
	 * this chip, and no TSC exists to fall back to. */
	if (cd_current_is(c, "arch_sys_counter")) {
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "Nothing to change in the kernel: this SoC's counter needs the workaround, or "
		           "time reads can jump. Programs that read the time often can use "
		           "CLOCK_MONOTONIC_COARSE or CLOCK_REALTIME_COARSE, which stay in the vDSO.\n");
		return;
	}
	if (k->cmd_clocksource[0] && strcmp(k->cmd_clocksource, "tsc") != 0) {
		cd_act_remove_param(x, f, cs_token(f, (char[CS_TOKEN_MAX]){ 0 }));
		return;
	}
	if (k->cmd_notsc || k->cmd_tsc_unstable) {
		cd_act_remove_param(x, f,
		                           k->cmd_notsc ? "notsc" : "tsc=unstable");
		return;
	}
	if (k->cmd_no_kvmclock_vsyscall && cd_current_is(c, "kvm-clock")) {
		cd_act_remove_param(x, f, "no-kvmclock-vsyscall");
		return;
	}
	/* acpi=off takes away the HPET and the ACPI PM timer, the references
	 * the kernel calibrates and watches the TSC against, and the only
	 * clocksources left after it: from a tick-based one, undo it first. */
	if (k->cmd_acpi_off && (c->tick_left || (c->cur_known && c->cur.rank >= 4))) {
		cd_act_remove_param(x, f, "acpi=off");
		cd_appendf(x->risk, sizeof x->risk,
		           "acpi=off is usually there to get past broken ACPI firmware: try the machine "
		           "without it once (from the boot menu) before removing it for good.\n");
		return;
	}
	/* kvm-clock's vDSO mode is set for x86-64 only (clocksources.c), so no
	 * newer 32-bit kernel helps; the 32-bit vDSO reads the TSC from
	 * FC_KV_X86_32_VDSO_GETTIME on. */
	if (c->bit32 && cd_current_is(c, "kvm-clock")) {
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "No 32-bit kernel reads kvm-clock in its vDSO. A 64-bit x86 kernel does (from "
		           FC_KV_STR(FC_KV_KVMCLOCK_VDSO) ", while the host gives a stable TSC); it also runs "
		           "32-bit programs. On a 32-bit kernel " FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME)
		           " or later, clocksource=tsc is read in the vDSO, if the TSC is stable.\n");
		return;
	}
	if (cd_current_is(c, "kvm-clock") && cd_kernel_at_least(k, FC_KV_KVMCLOCK_VDSO) == 0) {
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "A kernel " FC_KV_STR(FC_KV_KVMCLOCK_VDSO) " or later reads kvm-clock in the vDSO when "
		           "the host gives a stable TSC (a distribution kernel may have that backported). First "
		           "measure this one: run `clockdoctor check` on the machine.\n");
		cd_fix_newer_kernel(x->fix_lasting, sizeof x->fix_lasting, f, FC_KV_KVMCLOCK_VDSO, c->bit32);
		return;
	}
	if (cd_paravirt_current(c)) {
		if (cd_tsc_listed(c) && !(c->rejected_sync || c->rejected_watchdog) && !c->tsc_unsafe) {
			cd_act_add_params(x, f, "clocksource=tsc");
			cd_tsc_risk(c, x);
		} else {
			cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
			           "The guest cannot fix its paravirtual clock alone: see the hypervisor's "
			           "side below.\n");
		}
		return;
	}
	if (c->rejected_sync || c->rejected_watchdog) {
		if (c->tsc_unsafe) {
			cd_unsafe_tsc_fix(c, x);
			return;
		}
		const char *p = cd_tsc_params(c);
		bool already = k->cmd_tsc_reliable || (strcmp(p, "tsc=nowatchdog") == 0 && k->cmd_tsc_nowatchdog);
		if (p[0] && already) {
			cd_appendf(x->fix_lasting, sizeof x->fix_lasting, "%s is already on the command line, and "
			           "the kernel still rejected the TSC.",
			           k->cmd_tsc_reliable ? "tsc=reliable" : "tsc=nowatchdog");
			if (c->rejected_watchdog && cd_kernel_at_least(k, FC_KV_TSC_EARLY) == 1 &&
			    cd_kernel_at_least(k, FC_KV_TSC_EARLY_HONOURS_PARAMS) == 0)
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
			return;
		}
		if (k->cmd_tsc_ignored[0])
			cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
			           "The command line has tsc=%s, which the kernel ignores: tsc= takes one "
			           "option, so write each as its own tsc= (tsc=reliable tsc=noirqtime).\n",
			           k->cmd_tsc_ignored);
		if (!p[0]) {
			cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
			           "No kernel parameter helps on this kernel (see fix-needs-newer-kernel): "
			           "install a kernel " FC_KV_STR(FC_KV_TSC_RELIABLE_SKIPS_SYNC) " or later, "
			           "then add tsc=reliable.\n");
			c->advised_tsc = true;
			return;
		}
		cd_act_add_params(x, f, p);
		cd_tsc_risk(c, x);
		return;
	}
	if (cd_better_listed(c)) {
		char p[CD_NAME_MAX + 16];
		snprintf(p, sizeof p, "clocksource=%s", c->best);
		cd_act_add_params(x, f, p);
		return;
	}
	if (other_rejection(c, x))
		return;
	if (!f->klog.readable)
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "Why the TSC is not in use is not known: the kernel log could not be read (%s). "
		           "Read it as root and look for \"Marking TSC unstable\" since boot "
		           "(journalctl -k -b).\n", f->klog.why_not[0] ? f->klog.why_not : "no source");
	else
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "The kernel log does not say why the TSC is not in use%s. Look for "
		           "\"Marking TSC unstable\" in the kernel log since boot (journalctl -k -b).\n",
		           f->klog.reaches_boot ? "" : " (it no longer reaches back to boot)");
}

void cd_measured_evidence(const struct cd_ctx *c, struct cd_finding *x, bool only_fallback)
{
	if (!c->m || !c->m->done)
		return;
	for (int i = 0; i < c->m->n; i++) {
		const struct cd_clock_cost *k = &c->m->c[i];
		if (!k->measured || (only_fallback && !(k->spec->high_res && k->syscall)))
			continue;
		char share[32] = "", exact[64] = "";
		if (k->sys_share >= 0)
			snprintf(share, sizeof share, ", %.0f%% system time", k->sys_share * 100);
		if (k->exact)
			snprintf(exact, sizeof exact, "; %d of %d probe calls reached the kernel", k->kernel_calls,
			         CD_KERNEL_PATH_CALLS);
		cd_evidence(x, "measured %s: %.0f ns a call, forced system call %.0f ns (ratio %.2f%s)%s",
		            k->spec->name, k->ns_per_call, k->syscall_ns, k->ratio, share, exact);
	}
}

/* ---- the rules ---- */

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

static void rule_slow_clocksource(struct cd_ctx *c)
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
	if (f->cs.have_available) {
		char list[CD_EVIDENCE_MAX] = "";
		for (int i = 0; i < f->cs.n_available; i++)
			cd_appendf(list, sizeof list, "%s%s", i ? " " : "", f->cs.available[i]);
		cd_evidence(x, "available_clocksource: %s", list);
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
		cd_appendf(x->fix_now, sizeof x->fix_now,
		           "Nothing can be switched now: no faster clocksource is listed in "
		           "available_clocksource. Programs that can live with 1-4 ms resolution can use "
		           "CLOCK_MONOTONIC_COARSE or CLOCK_REALTIME_COARSE, which stay in the vDSO.\n");
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
 * leaves only tick-based ones (derive_tick_left). */
static void rule_tick_based_left(struct cd_ctx *c)
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
	cd_appendf(x->fix_now, sizeof x->fix_now,
	           "Nothing can be switched now: no faster clocksource exists on this boot. Programs that "
	           "can live with tick resolution can use CLOCK_MONOTONIC_COARSE or "
	           "CLOCK_REALTIME_COARSE, which stay in the vDSO.\n");
	cd_lasting_fix(c, x);
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
}

/* No current clocksource is known, and every listed one is a system call
 * (only_slow, set by derive()). */
static void rule_only_slow_listed(struct cd_ctx *c)
{
	if (!c->only_slow[0] || c->tick_left)
		return;
	const struct cd_facts *f = c->f;
	struct cd_finding *x = cd_add_finding(c, "slow-clocksource", CD_SEV_CRITICAL,
	                           "Time calls are system calls: every clocksource this kernel lists (%s) "
	                           "is one the vDSO cannot read", c->only_slow);
	char list[CD_EVIDENCE_MAX] = "";
	for (int i = 0; i < f->cs.n_available; i++)
		cd_appendf(list, sizeof list, "%s%s", i ? " " : "", f->cs.available[i]);
	cd_evidence(x, "available_clocksource: %s (" CS_PATH "available_clocksource)", list);
	cd_evidence(x, "current clocksource: not readable here (no current_clocksource), so it is one of these");
	for (int i = 0; i < f->cs.n_available; i++) {
		struct cd_cs_verdict v;
		cd_clocksource_verdict(f->cs.available[i], f, &v);
		if (v.rank > 1)
			cd_evidence(x, "%s: %s; typical cost %s a call", f->cs.available[i], v.why, v.typical);
	}
	if (c->rejected_sync || c->rejected_watchdog || c->rejected_other)
		cd_evidence(x, "the TSC, rejected by the kernel (see the findings below), cannot come back "
		            "before a reboot");
	cd_appendf(x->fix_now, sizeof x->fix_now,
	           "Nothing can be switched now: no faster clocksource is listed in available_clocksource. "
	           "Programs that can live with 1-4 ms resolution can use CLOCK_MONOTONIC_COARSE or "
	           "CLOCK_REALTIME_COARSE, which stay in the vDSO.\n");
	cd_lasting_fix(c, x);
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
}

static void rule_vdso_fallback(struct cd_ctx *c)
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

static void rule_kvmclock(struct cd_ctx *c)
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
			cd_act_add_params(x, f, "clocksource=tsc");
			cd_tsc_risk(c, x);
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

static void rule_xen(struct cd_ctx *c)
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
	if (cd_tsc_listed(c) && !c->tsc_unsafe) {
		cd_act_switch_now(x, "tsc");
		cd_act_add_params(x, f, "clocksource=tsc");
		cd_tsc_risk(c, x);
	}
	cd_fix_hypervisor(x->fix_hypervisor, sizeof x->fix_hypervisor, f);
}

static void rule_unverified_other(struct cd_ctx *c)
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

static void rule_clocksource_forced(struct cd_ctx *c)
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
		cd_act_remove_param(x, c->f, cs_token(c->f, (char[CS_TOKEN_MAX]){ 0 }));
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

static void rule_better_clocksource(struct cd_ctx *c)
{
	if (!cd_better_listed(c) || !(cd_current_slow(c) || c->n_fallback > 0))
		return;
	const struct cd_facts *f = c->f;
	struct cd_finding *x = cd_add_finding(c, "better-clocksource-available", CD_SEV_WARNING,
	                           "A faster clocksource is listed: %s (%s a call) instead of %s (%s)",
	                           c->best, c->best_v.typical, f->cs.current, c->cur.typical);
	cd_evidence(x, "available_clocksource lists %s; %s", c->best, c->best_v.why);
	cd_act_switch_now(x, c->best);
	if (!f->kernel.cmd_clocksource[0]) {
		char p[CD_NAME_MAX + 16];
		snprintf(p, sizeof p, "clocksource=%s", c->best);
		cd_act_add_params(x, f, p);
	} else {
		cd_act_remove_param(x, f, cs_token(f, (char[CS_TOKEN_MAX]){ 0 }));
	}
	if (strcmp(c->best, "tsc") == 0)
		cd_tsc_risk(c, x);
}

static void rule_ntp(struct cd_ctx *c)
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

/* ---- the report ---- */

static int by_severity(const void *a, const void *b)
{
	const struct cd_finding *x = a, *y = b;
	return (int)y->severity - (int)x->severity;
}

static void verdict_line(struct cd_ctx *c)
{
	struct cd_report *r = c->r;
	char *v = r->verdict;
	size_t cap = sizeof r->verdict;
	const char *cs = cd_cs_name(c);
	switch (r->status) {
	case CD_STATUS_CRITICAL:
		if (c->mono && c->mono->syscall)
			snprintf(v, cap, "time calls are system calls (clocksource %s, CLOCK_MONOTONIC %.0f ns)",
			         cs, c->mono->ns_per_call);
		else
			snprintf(v, cap, "time calls are system calls (clocksource %s, %s)", cs,
			         c->cur_known ? c->cur.typical : c->tick_left || c->only_slow[0] ? "a system call each" : "cost unknown");
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
	cd_diagnose_deep(facts, m, NULL, r);
}

void cd_diagnose_deep(const struct cd_facts *facts, const struct cd_measurements *m,
                      const struct cd_tsc_report *tsc, struct cd_report *r)
{
	memset(r, 0, sizeof *r);
	struct cd_ctx c = { .f = facts, .m = (m && m->done) ? m : NULL, .tsc = tsc, .r = r };
	r->measured = c.m != NULL;
	derive(&c);

	rule_slow_clocksource(&c);
	rule_tick_based_left(&c);
	rule_only_slow_listed(&c);
	rule_vdso_fallback(&c);
	rule_kvmclock(&c);
	rule_xen(&c);
	rule_unverified_other(&c);
	cd_rule_tsc_unstable_sync(&c);
	cd_rule_tsc_unstable_watchdog(&c);
	cd_rule_needs_newer_kernel(&c);
	rule_clocksource_forced(&c);
	rule_better_clocksource(&c);
	cd_rule_tsc_not_invariant(&c);
	cd_rule_tsc_reliable(&c);
	cd_rule_tsc_adjust(&c);
	cd_rule_tsc_unsound(&c);
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
