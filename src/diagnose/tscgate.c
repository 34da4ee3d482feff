/* SPDX-License-Identifier: MIT */
/*
 * tscgate.c: the one place that decides whether a finding may advise a
 * kernel parameter that switches the kernel's checks of the TSC off
 * (tsc=reliable, tsc=nowatchdog, nowatchdog) or overrides its choice of
 * clocksource for the TSC (clocksource=tsc), and writes that advice.
 *
 * A doctor can be wrong about a cause; it must not prescribe what breaks
 * the patient.  Such a parameter is advised outright only on positive
 * evidence: this boot's measured verdict (`clockdoctor tsc`, saved for the
 * boot: persist/verdictfile.h, or check --deep's own), or a platform that
 * documents its TSC.  Without evidence the advice is the measurement, and
 * the parameter only if it says sound.  Where the evidence says the TSC is
 * bad (a measured warp, a watchdog skew no read-back delay explains, a TSC
 * that went backwards, one that stops in idle or follows the frequency: see
 * also derive_tsc_unsafe in context.c), no parameter at all: the cure
 * (firmware, hypervisor, kernel, hardware) and the risk in numbers.
 *
 * Every rule that would advise such a parameter calls cd_advise_trust_tsc();
 * cd_act_add_params (finding.c) refuses them, and tests/cli/test_do_no_harm.py
 * checks that no other source file writes them as advice.
 */
#include "diagnose/fixes.h"
#include "diagnose/rules.h"
#include "output/duration.h"
#include "probe/probe.h"

#include "clockfacts.h"

#include <stdio.h>
#include <string.h>

/* No x86 TSC runs faster than this: with the frequency unknown, cycles /
 * this is the least time a warp can stand for (as context.c). */
#define MAX_TSC_GHZ 10.0

bool cd_param_trusts_tsc(const char *params)
{
	static const char *const trusting[] = {
		"tsc=reliable", "tsc=nowatchdog", "clocksource=tsc", "clock=tsc", "nowatchdog",
	};
	for (const char *p = params; *p;) {
		size_t n = strcspn(p, " ");
		for (size_t i = 0; i < sizeof trusting / sizeof trusting[0]; i++)
			if (n == strlen(trusting[i]) && strncmp(p, trusting[i], n) == 0)
				return true;
		p += n;
		p += strspn(p, " ");
	}
	return false;
}

/* ---- the evidence that the TSC is bad, beyond context.c's ---- */

static void set_bad(struct cd_ctx *c, const char *cure)
{
	c->tsc_unsafe = true;
	c->unsafe_cure = cure;
}

/* Where a disagreement between the TSCs comes from: the firmware on bare
 * metal, the hypervisor in a VM. */
static const char *warp_cure(const struct cd_ctx *c)
{
	enum cd_hv hv = c->f->hv.kind;
	return cd_bare_metal(c) ? "firmware" : hv == CD_HV_NONE || hv == CD_HV_UNKNOWN ? "firmware-or-hypervisor"
	                                                                               : "hypervisor";
}

/* clockdoctor's own measurement said unsound: check --deep, or the verdict
 * `clockdoctor tsc` saved for this boot. */
static bool measured_unsound(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	if (c->tsc && c->tsc->verdict == CD_TSC_UNSOUND)
		snprintf(c->unsafe_why, sizeof c->unsafe_why, "check --deep measured the TSC unsound just now (%s)",
		         c->tsc->summary);
	else if (f->saved_verdict == CD_SAVED_UNSOUND)
		snprintf(c->unsafe_why, sizeof c->unsafe_why, "`clockdoctor tsc` measured the TSC unsound on this "
		         "boot (%s)", f->saved_verdict_from);
	else
		return false;
	snprintf(c->unsafe_risk, sizeof c->unsafe_risk,
	         "With tsc=reliable the kernel would keep a TSC that failed the measurement: time could go "
	         "backwards between CPUs or run at the wrong rate, and nothing would say so.");
	set_bad(c, "measured");
	return true;
}

/* The kernel's boot-time test measured a warp, of any size: the TSCs
 * disagree (context.c already counts a large one, and any on bare metal). */
const struct cd_event *cd_largest_warp(const struct cd_facts *f)
{
	const struct cd_event *w = NULL;
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind == CD_EV_TSC_WARP && e->value > 0 && (!w || e->value > w->value))
			w = e;
	}
	return w;
}

static bool any_warp(struct cd_ctx *c)
{
	const struct cd_event *w = cd_largest_warp(c->f);
	if (!w && !c->sync_header)
		return false;
	if (!w) {
		snprintf(c->unsafe_why, sizeof c->unsafe_why,
		         "the kernel's boot-time test found the TSCs of two CPUs apart (\"%.*s\"; the size is not in "
		         "this log)", 150, c->sync_header->line);
		snprintf(c->unsafe_risk, sizeof c->unsafe_risk,
		         "With tsc=reliable the kernel would keep TSCs that disagree: time read on one CPU and "
		         "then on another could go backwards.");
		set_bad(c, warp_cure(c));
		return true;
	}
	double ns = c->tsc_mhz > 0 ? (double)w->value * 1e3 / c->tsc_mhz : (double)w->value / MAX_TSC_GHZ;
	char d[32];
	cd_fmt_duration_ns(d, sizeof d, ns);
	snprintf(c->unsafe_why, sizeof c->unsafe_why,
	         "the kernel measured the TSCs of CPU#%d and CPU#%d %lld cycles apart (%s%s)", w->cpu_a, w->cpu_b,
	         (long long)w->value, c->tsc_mhz > 0 ? "" : "at least ", d);
	snprintf(c->unsafe_risk, sizeof c->unsafe_risk,
	         "With tsc=reliable the kernel would keep this TSC, and time read on one CPU and then on "
	         "another could go back by up to %lld cycles: %s%s.", (long long)w->value,
	         c->tsc_mhz > 0 ? "" : "at least ", d);
	set_bad(c, warp_cure(c));
	return true;
}

/* The watchdog saw the TSC go backwards: cs_now below cs_last under a
 * 64-bit mask, which the masked advance shows as more than half the range. */
static bool went_backwards(struct cd_ctx *c)
{
	for (int i = 0; i < c->f->klog.n_events; i++) {
		const struct cd_event *e = &c->f->klog.events[i];
		if (e->kind != CD_EV_WATCHDOG_SKEW || strncmp(e->name, "tsc", 3) != 0 || e->cs_cycles <= (1ull << 63))
			continue;
		snprintf(c->unsafe_why, sizeof c->unsafe_why,
		         "the watchdog saw the TSC go backwards (its cs_now below its cs_last, by %llu cycles)",
		         (unsigned long long)(0 - e->cs_cycles));
		snprintf(c->unsafe_risk, sizeof c->unsafe_risk,
		         "With tsc=reliable, tsc=nowatchdog or clocksource=tsc the kernel would keep a clock "
		         "that went back by %llu cycles: time itself would go backwards.",
		         (unsigned long long)(0 - e->cs_cycles));
		set_bad(c, warp_cure(c));
		return true;
	}
	return false;
}

/* A skew the watchdog measured (wd_nsec and cs_nsec printed) on a kernel
 * that re-reads a slow watchdog and blames read-back delay instead
 * (FC_KV_WATCHDOG_READ_RETRY; its "skewed N ns" line says so too), with no
 * read-back complaint: the two clocks really ran apart. */
static bool watchdog_skew_real(struct cd_ctx *c)
{
	const struct cd_event *e = c->wd_skew;
	if (!e || c->wd_readback || e->value <= 0 || e->value2 <= 0 || e->value2 == e->value)
		return false;
	if (cd_kernel_compare(&c->f->kernel, FC_KV_WATCHDOG_READ_RETRY) != FC_KVER_SAME_OR_NEWER &&
	    !strstr(e->detail, " skewed "))
		return false;
	double skew = (double)(e->value2 > e->value ? e->value2 - e->value : e->value - e->value2);
	char d[32];
	cd_fmt_duration_ns(d, sizeof d, skew);
	double ppm = skew / (double)e->value * 1e6;
	snprintf(c->unsafe_why, sizeof c->unsafe_why,
	         "the watchdog measured the TSC %s %s %s over %.0f ms (%.0f ppm), beyond the read-back delay "
	         "the kernel checks for", d, e->value2 > e->value ? "ahead of" : "behind",
	         e->name2[0] ? e->name2 : "its watchdog", (double)e->value / 1e6, ppm);
	snprintf(c->unsafe_risk, sizeof c->unsafe_risk,
	         "With tsc=reliable or tsc=nowatchdog the kernel would keep it unchecked: time could drift by "
	         "%s every %.0f ms (%.0f ppm, %.1f s a day) until NTP steps it, and nothing would say which "
	         "clock was wrong.", d, (double)e->value / 1e6, ppm, ppm * 86400 / 1e6);
	set_bad(c, "watchdog");
	return true;
}

/* ---- positive evidence ---- */

/* This boot's verdict, measured sound. */
static bool measured_sound(struct cd_ctx *c)
{
	if (c->tsc && c->tsc->verdict == CD_TSC_SOUND)
		snprintf(c->gate_basis, sizeof c->gate_basis, "check --deep measured the TSC sound just now (%s)",
		         c->tsc->summary);
	else if (!c->tsc && c->f->saved_verdict == CD_SAVED_SOUND)
		snprintf(c->gate_basis, sizeof c->gate_basis, "`clockdoctor tsc` measured the TSC sound on this "
		         "boot (%s)", c->f->saved_verdict_from);
	else
		return false;
	return true;
}

/* A platform that documents its TSC as reliable: the kernel's own platform
 * code then sets X86_FEATURE_TSC_RELIABLE (cpuinfo tsc_reliable). */
static bool platform_guarantee(struct cd_ctx *c)
{
	const struct cd_facts *f = c->f;
	if (f->hv.kind == CD_HV_VMWARE)
		snprintf(c->gate_basis, sizeof c->gate_basis,
		         "VMware documents a virtual TSC that runs at a constant rate and in step on every vCPU "
		         "(\"Timekeeping in VMware Virtual Machines\", VMware), and Linux marks it reliable on "
		         "VMware for that reason (arch/x86/kernel/cpu/vmware.c)");
	else if (f->cpu.flags & CD_CPU_TSC_RELIABLE)
		snprintf(c->gate_basis, sizeof c->gate_basis,
		         "the platform marks the TSC reliable (cpuinfo flag tsc_reliable, which the kernel sets "
		         "only from the hypervisor's documented interface: VMware's, or Hyper-V's invariant TSC "
		         "in Microsoft's Hypervisor Top-Level Functional Specification)");
	else
		return false;
	return true;
}

void cd_gate_derive(struct cd_ctx *c)
{
	if (!c->tsc_unsafe)
		(void)(measured_unsound(c) || any_warp(c) || went_backwards(c) || watchdog_skew_real(c));
	if (c->tsc_unsafe)
		c->gate = CD_GATE_BAD;
	else if (measured_sound(c))
		c->gate = CD_GATE_MEASURED_SOUND;
	else if (platform_guarantee(c))
		c->gate = CD_GATE_PLATFORM;
	else
		c->gate = CD_GATE_MEASURE_FIRST;
}

/* ---- the advice ---- */

/* The measurement, before any parameter: where it can be taken. */
static void measure_first(const struct cd_ctx *c, struct cd_finding *x, const char *when)
{
	if (c->f->live)
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "First measure whether the TSC can be trusted%s, as root (a few seconds: the warp "
		           "between every pair of CPUs and its rate against the kernel's clock; the verdict "
		           "is saved for this boot):\n$ clockdoctor tsc\n", when);
	else
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "A snapshot carries no measurement of the TSC. First measure it on the machine "
		           "itself%s, as root (a few seconds: the warp between every pair of CPUs and its "
		           "rate against the kernel's clock; the verdict is saved for the boot, and a "
		           "snapshot taken after carries it):\n$ clockdoctor tsc\n", when);
	if (c->f->saved_verdict == CD_SAVED_UNKNOWN)
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "(Its verdict for this boot was unknown: %s.)\n", c->f->saved_verdict_from);
}

void cd_advise_trust_tsc(struct cd_ctx *c, struct cd_finding *x, const char *params, const char *first)
{
	if (c->gate == CD_GATE_BAD) {
		cd_unsafe_tsc_fix(c, x);
		return;
	}
	if (first) {
		/* A parameter the kernel in use cannot honour: the newer kernel
		 * must be measured before it is told to trust the TSC. */
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "On that kernel, measure the TSC as root before trusting it:\n$ clockdoctor tsc\n"
		           "Only if it says sound, add %s to that kernel's command line.\n", params);
		c->advised_tsc = true;
		return;
	}
	if (c->gate == CD_GATE_MEASURE_FIRST) {
		measure_first(c, x, "");
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "Only if it says sound, make the kernel keep the TSC:\n");
		cd_fix_add_kernel_params(x->fix_lasting, sizeof x->fix_lasting, c->f, params);
		cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
		           "If it says unsound or unknown, do not add it: `clockdoctor tsc` says what failed or "
		           "could not be tested.\n");
		/* Nothing for `fix` to carry out until the verdict is sound. */
		if (!x->act_after_tsc[0])
			snprintf(x->act_after_tsc, sizeof x->act_after_tsc, "%s", params);
		cd_tsc_risk(c, x);
		return;
	}
	cd_appendf(x->fix_lasting, sizeof x->fix_lasting, "The evidence for trusting the TSC: %s.\n", c->gate_basis);
	cd_fix_add_kernel_params(x->fix_lasting, sizeof x->fix_lasting, c->f, params);
	if (!x->act_add[0] && !x->act_remove[0])
		snprintf(x->act_add, sizeof x->act_add, "%s", params);
	cd_tsc_risk(c, x);
}

/* Where the cure lies, by the kind of evidence (unsafe_cure, rules.h). */
static const struct { const char *cure, *text; } cures[] = {
	{ "hypervisor", "The vCPUs' TSCs are set apart by the hypervisor: the cure is on the host (see the "
	                "hypervisor's side)." },
	{ "idle", "The cure is to keep the CPUs out of the idle states where the TSC stops: a firmware "
	          "(BIOS) setting that limits C-states, or the kernel parameters processor.max_cstate=1 "
	          "intel_idle.max_cstate=0, which cost power and heat; or a CPU with nonstop_tsc." },
	{ "frequency", "No setting makes this TSC a clock: keep the current clocksource, or move the work to "
	               "a machine whose CPU has constant_tsc and nonstop_tsc." },
	{ "firmware", "The TSCs are set apart by the firmware or the hardware: update the BIOS/UEFI firmware, "
	              "look for a firmware setting that affects the TSC or CPU power states (C-states), and "
	              "ask the vendor. Kernels from about " FC_KV_STR(FC_KV_TSC_ADJUST_RESTORE) " also undo "
	              "firmware that writes TSC_ADJUST differently on each CPU (tsc_sync.c), on CPUs that "
	              "have it." },
	{ "firmware-or-hypervisor", "On bare metal the TSCs are set apart by the firmware or the hardware: "
	                            "update the BIOS/UEFI firmware and look for a setting that affects the "
	                            "TSC or CPU power states (C-states, TSC_ADJUST). In a VM the hypervisor "
	                            "sets them apart: the cure is on the host (see the hypervisor's side)." },
	{ "watchdog", "The TSC and the watchdog's clocksource ran apart by more than the kernel allows: one of "
	              "them is wrong, and silencing the check does not say which. Look for the cause: the "
	              "firmware (update the BIOS/UEFI; C-state and spread-spectrum settings), a driver or "
	              "module that stalls the CPUs (one loaded before it happened), the kernel (a newer one), "
	              "or the hardware; in a VM, the host (see the hypervisor's side)." },
	{ "measured", "`clockdoctor tsc` shows which test failed. The cure is in the firmware (update the "
	              "BIOS/UEFI; C-state and TSC settings) or, in a VM, on the host (see the hypervisor's "
	              "side)." },
};

/* The lasting fix when the evidence says the kernel was right to drop the
 * TSC: no parameter that silences the check, but the cause. */
void cd_unsafe_tsc_fix(struct cd_ctx *c, struct cd_finding *x)
{
	if (strstr(x->fix_lasting, "Do not add tsc=reliable"))
		return;
	cd_appendf(x->fix_lasting, sizeof x->fix_lasting,
	           "Do not add tsc=reliable, tsc=nowatchdog or clocksource=tsc here: %s. The kernel's check "
	           "was right.\n", c->unsafe_why);
	const char *cure = c->unsafe_cure ? c->unsafe_cure : "";
	const char *text = cures[0].text;  /* the hypervisor's, when none is named */
	for (size_t k = 0; k < sizeof cures / sizeof cures[0]; k++)
		if (strcmp(cure, cures[k].cure) == 0)
			text = cures[k].text;
	cd_appendf(x->fix_lasting, sizeof x->fix_lasting, "%s\n", text);
	if (!strstr(x->risk, c->unsafe_risk))
		cd_appendf(x->risk, sizeof x->risk, "%s%s", x->risk[0] ? " " : "", c->unsafe_risk);
}
