/* SPDX-License-Identifier: MIT */
/*
 * context.c: what every rule reads, derived once from the facts and the
 * measurements (struct cd_ctx, rules.h): what the kernel log says about the
 * TSC, the current clocksource and the fastest one listed, what was
 * measured, whether the evidence says the TSCs really disagree (then no
 * finding proposes forcing the TSC), and the questions rules ask of it.
 */
#include "diagnose/fixes.h"
#include "diagnose/rules.h"
#include "output/duration.h"
#include "probe/probe.h"
#include "probe/tsc_reasons.h"

#include "clockfacts.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* A reason the kernel's table (probe/tsc_reasons.c) calls a sync failure;
 * one it does not know, by its words. */
bool cd_reason_is_sync(const char *reason)
{
	const struct cd_tsc_reason *r = cd_tsc_reason_find(reason);
	if (r)
		return r->cls == CD_REASON_SYNC;
	return strstr(reason, "sync") != NULL;
}

/* The first event of its kind is the one the findings quote. */
static void keep_first(const struct cd_event **slot, const struct cd_event *e)
{
	if (!*slot)
		*slot = e;
}

static void derive_log(struct cd_ctx *c)
{
	const struct cd_klog *log = &c->f->klog;
	double refined = 0, detected = 0, hyper = 0;
	for (int i = 0; i < log->n_events; i++) {
		const struct cd_event *e = &log->events[i];
		switch (e->kind) {
		case CD_EV_TSC_WARP:
			keep_first(&c->warp, e);
			c->rejected_sync = true;
			break;
		/* check_tsc_sync_source() (arch/x86/kernel/tsc_sync.c) prints
		 * this header only when it measured a warp (pr_warn; a pass is
		 * pr_debug, or ": passed." on the same line in 2.6.x, which
		 * klog.c drops): alone, with its Measured line cut off or
		 * grepped away, it is the failure all the same. */
		case CD_EV_TSC_SYNC_HEADER:
			keep_first(&c->sync_header, e);
			c->rejected_sync = true;
			break;
		case CD_EV_TSC_UNSTABLE:
			keep_first(&c->unstable, e);
			if (cd_reason_is_sync(e->name))
				c->rejected_sync = true;
			else if (strstr(e->name, "watchdog"))
				c->rejected_watchdog = true;
			else
				c->rejected_other = true;
			break;
		/* The watchdog's report (4.1+) or the older delta line, about the TSC. */
		case CD_EV_WATCHDOG_SKEW:
		case CD_EV_CS_UNSTABLE_DELTA:
			if (strncmp(e->name, "tsc", 3) == 0) {
				keep_first(e->kind == CD_EV_WATCHDOG_SKEW ? &c->wd_skew : &c->wd_delta, e);
				c->rejected_watchdog = true;
			}
			break;
		case CD_EV_WD_READBACK_EXCESSIVE:
			keep_first(&c->wd_readback, e);
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

/* ---- evidence that the kernel's check was right: tsc_unsafe ---- */

/* A step back in time this large is seen by ordinary programs (timeouts,
 * log order, durations that come out negative): a warp at least this large
 * is a real disagreement on any platform, not the noise of a vCPU preempted
 * during the kernel's test. */
#define UNSAFE_WARP_NS 1e6
/* No x86 TSC runs faster than this: with the frequency unknown, cycles /
 * this is the least time a warp can stand for. */
#define MAX_TSC_GHZ 10.0

/* Bare metal, as far as the evidence goes: from CPUID leaf 1, or from a
 * cpuinfo without the "hypervisor" flag on a kernel that shows that flag
 * (with its hypervisor detection, arch/x86/kernel/cpu/hypervisor.c, from
 * about 2.6.30; a kernel of unknown version is taken as such a one): an
 * older guest kernel's cpuinfo lacks it too. */
bool cd_bare_metal(const struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	return f->hv.kind == CD_HV_NONE &&
	       (strcmp(f->hv.from, "cpuid") == 0 || cd_kernel_compare(&f->kernel, FC_KV_CPUINFO_HYPERVISOR_FLAG) != FC_KVER_OLDER);
}

/* The largest warp the kernel measured, in cycles and (at the frequency the
 * kernel logged, else a lower bound) in ns. */
static void unsafe_warp(struct cd_ctx *c)
{
	const struct cd_event *w = cd_largest_warp(c->f);
	if (!w)
		return;
	double ns = c->tsc_mhz > 0 ? (double)w->value * 1e3 / c->tsc_mhz : (double)w->value / MAX_TSC_GHZ;
	/* On bare metal nothing preempts the kernel's test: any warp is the
	 * hardware's (or the firmware's). */
	if (ns < UNSAFE_WARP_NS && !cd_bare_metal(c))
		return;
	char d[32];
	cd_fmt_duration_ns(d, sizeof d, ns);
	c->tsc_unsafe = true;
	c->unsafe_cure = cd_bare_metal(c) ? "firmware" : "hypervisor";
	snprintf(c->unsafe_why, sizeof c->unsafe_why,
	         "the kernel measured the TSCs of CPU#%d and CPU#%d %lld cycles apart (%s%s)%s", w->cpu_a,
	         w->cpu_b, (long long)w->value, c->tsc_mhz > 0 ? "" : "at least ", d,
	         cd_bare_metal(c) ? " on bare metal, where nothing preempts its test" : "");
	if (c->tsc_mhz > 0)
		snprintf(c->unsafe_risk, sizeof c->unsafe_risk,
		         "With tsc=reliable the kernel would keep this TSC, and time read on one CPU and then "
		         "on another could go back by up to %lld cycles: %s at %.3f MHz.", (long long)w->value, d,
		         c->tsc_mhz);
	else
		snprintf(c->unsafe_risk, sizeof c->unsafe_risk,
		         "With tsc=reliable the kernel would keep this TSC, and time read on one CPU and then "
		         "on another could go back by up to %lld cycles: at least %s (at %.0f GHz; the TSC's "
		         "frequency is not in the log).", (long long)w->value, d, MAX_TSC_GHZ);
}

/* tsc_unsafe (rules.h): the kernel measured a warp no preemption explains,
 * or the TSC stops in idle or follows the CPU's frequency. */
static void derive_tsc_unsafe(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	bool rejected = c->rejected_sync || c->rejected_watchdog || c->rejected_other;
	unsafe_warp(c);
	if (c->tsc_unsafe)
		return;
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind != CD_EV_TSC_UNSTABLE)
			continue;
		/* drivers/acpi/processor_idle.c and drivers/idle/intel_idle.c:
		 * a C-state in which this CPU's TSC stops (probe/tsc_reasons.c). */
		const struct cd_tsc_reason *r = cd_tsc_reason_find(e->name);
		if (r && r->cls == CD_REASON_IDLE) {
			c->tsc_unsafe = true;
			c->unsafe_cure = "idle";
			snprintf(c->unsafe_why, sizeof c->unsafe_why,
			         "the kernel found that this CPU's TSC stops in idle states deeper than C1 "
			         "(\"%s\")", e->line);
			snprintf(c->unsafe_risk, sizeof c->unsafe_risk,
			         "With tsc=reliable the kernel would keep a TSC that stops while a CPU sleeps: "
			         "time would fall behind by the length of every deep idle period, on each CPU "
			         "differently.");
			return;
		}
		/* arch/x86/kernel/tsc.c time_cpufreq_notifier(): the TSC's rate
		 * changed with the CPU's frequency. */
		if (r && r->cls == CD_REASON_CPUFREQ) {
			c->tsc_unsafe = true;
			c->unsafe_cure = "frequency";
			snprintf(c->unsafe_why, sizeof c->unsafe_why,
			         "the kernel saw the TSC's rate change with the CPU's frequency (\"%s\")", e->line);
		}
	}
	/* A CPU without constant_tsc, on bare metal: its TSC follows the clock
	 * of the core.  (In a VM the missing flag is the vCPU model's choice,
	 * not evidence about the host's TSC.) */
	if (!c->tsc_unsafe && rejected && cd_bare_metal(c) && f->cpu.have_cpuinfo && (f->cpu.flags & CD_CPU_TSC) &&
	    !(f->cpu.flags_all & CD_CPU_CONSTANT_TSC)) {
		c->tsc_unsafe = true;
		c->unsafe_cure = "frequency";
		snprintf(c->unsafe_why, sizeof c->unsafe_why,
		         "this CPU (%s) has no constant_tsc: its TSC ticks at the core's current frequency",
		         f->cpu.model[0] ? f->cpu.model : f->cpu.vendor);
	}
	if (c->tsc_unsafe && !c->unsafe_risk[0])
		snprintf(c->unsafe_risk, sizeof c->unsafe_risk,
		         "With tsc=reliable the kernel would keep a TSC whose rate follows the CPU's "
		         "frequency: at half the frequency time would run at half speed, and each CPU "
		         "would drift from the others.");
	if (c->tsc_unsafe)
		return;
	/* The watchdog on bare metal saw the TSC fall behind, and the CPU does
	 * not promise a TSC that runs through deep C-states. */
	const struct cd_event *wd = c->wd_skew;
	if (wd && cd_bare_metal(c) && f->cpu.have_cpuinfo && !(f->cpu.flags_all & CD_CPU_NONSTOP_TSC) &&
	    wd->value > 0 && wd->value2 > 0 && wd->value2 < wd->value) {
		char d[32];
		cd_fmt_duration_ns(d, sizeof d, (double)(wd->value - wd->value2));
		c->tsc_unsafe = true;
		c->unsafe_cure = "idle";
		snprintf(c->unsafe_why, sizeof c->unsafe_why,
		         "the watchdog saw the TSC fall %s behind %s in %.0f ms, on a CPU without nonstop_tsc: "
		         "a TSC that stops in deep C-states", d, wd->name2[0] ? wd->name2 : "the watchdog",
		         (double)wd->value / 1e6);
		snprintf(c->unsafe_risk, sizeof c->unsafe_risk,
		         "With tsc=reliable or tsc=nowatchdog the kernel would keep it, and time would fall "
		         "behind by up to %s every %.0f ms the CPU sleeps deeply.", d, (double)wd->value / 1e6);
	}
}

/* The fastest clocksource listed (best), and only_slow (rules.h): while
 * every candidate is a system call.  A clocksource this tool does not know,
 * or that the vDSO may read, ends it; so does rank 1 under a vDSO without
 * clock_gettime, which is the kernel's doing, not the clocksource's
 * (fix-needs-newer-kernel). */
static void derive_candidates(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	char slow[sizeof c->only_slow] = "";
	bool all_slow = !c->cur_known && f->cs.have_available;
	for (int i = 0; i < f->cs.n_available; i++) {
		struct cd_cs_state v;
		/* The kernel refuses to switch to a clocksource it marked unstable,
		 * so a rejected TSC still listed is no candidate. */
		if ((c->rejected_sync || c->rejected_watchdog || c->rejected_other) &&
		    strncmp(f->cs.available[i], "tsc", 3) == 0)
			continue;
		cd_clocksource_state(f->cs.available[i], f, &v);
		if (v.rank > 0 && (!c->best || v.rank < c->best_v.rank)) {
			c->best = f->cs.available[i];
			c->best_v = v;
		}
		all_slow = all_slow && v.vdso == CD_VDSO_NO && v.rank > 1;
		cd_appendf(slow, sizeof slow, "%s%s", slow[0] ? " or " : "", f->cs.available[i]);
	}
	if (all_slow && slow[0])
		snprintf(c->only_slow, sizeof c->only_slow, "%s", slow);
}

/* What was measured: the ids that fell back to system calls, and
 * CLOCK_MONOTONIC's cost. */
static void derive_measured(struct cd_ctx *c)
{
	if (!c->m || !c->m->done)
		return;
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

void cd_derive(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	if (f->cs.have_current) {
		c->cur_known = true;
		cd_clocksource_state(f->cs.current, f, &c->cur);
	}
	derive_log(c);
	derive_candidates(c);
	derive_measured(c);
	c->bit32 = cd_kernel_32bit(f);
	c->no_vdso_time = cd_kernel_no_vdso_time(f);
	derive_tsc_unsafe(c);
	derive_tick_left(c);
	cd_gate_derive(c);
}

/* ---- the questions rules ask of it ---- */

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
	/* A kernel of unknown version is taken as a current one, which skips
	 * the sync test for tsc=reliable; tsc=nowatchdog is advised only to a
	 * kernel known to have it, since an older one ignores it. */
	if (c->rejected_sync || !c->rejected_watchdog)
		return cd_kernel_compare(k, FC_KV_TSC_RELIABLE_SKIPS_SYNC) == FC_KVER_OLDER ? "" : "tsc=reliable";
	/* Watchdog only: tsc=nowatchdog keeps the boot-time sync test. */
	return cd_kernel_compare(k, FC_KV_TSC_NOWATCHDOG) == FC_KVER_SAME_OR_NEWER ? "tsc=nowatchdog" : "tsc=reliable";
}


/* Paravirtual clocks outrank the TSC by rating: when one is current, a TSC
 * rejection is not why time is slow. */
bool cd_paravirt_current(const struct cd_ctx *c)
{
	return c->cur_known && fc_cs_is_paravirt(c->f->cs.current);
}
