/* SPDX-License-Identifier: MIT */
/*
 * tscsources.c: every source of the counter's frequency (tsc.h's
 * cd_tsc_src), each with its value and precision or the reason it is
 * absent, how far each is from the measured frequency, and the reference a
 * clock built on the counter would be told: the kernel's own.  Part of the
 * judgement (tscjudge.c), which tests the drift against that reference.
 */
#include "diagnose/tscjudge.h"
#include "probe/probe.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct cd_tsc_freq *src(struct cd_tsc_report *t, enum cd_tsc_src id, const char *name, const char *label)
{
	struct cd_tsc_freq *s = &t->src[id];
	memset(s, 0, sizeof *s);
	s->name = name;
	s->label = label;
	return s;
}

static void src_hz(struct cd_tsc_freq *s, double hz, double resolution_hz)
{
	s->have = hz > 0;
	s->hz = hz;
	s->precision_ppm = hz > 0 ? resolution_hz / hz * 1e6 : 0;
}

static void src_measured(struct cd_tsc_report *t)
{
	struct cd_tsc_freq *s = src(t, CD_SRC_MEASURED, "measured", "measured (vs RAW)");
	if (!t->measured)
		snprintf(s->note, sizeof s->note, "not measured");
	else if (t->freq_err)
		snprintf(s->note, sizeof s->note, "could not be measured (%s)", strerror(-t->freq_err));
	else {
		src_hz(s, t->raw.hz, 0);
		s->precision_ppm = t->raw.err_ppm;
		snprintf(s->note, sizeof s->note, "+-%.2g ppm over %.2f s%s", t->raw.err_ppm, t->raw.interval_s,
		     t->migrated ? ", moved CPU" : "");
	}
}

static void src_klog(const struct cd_facts *f, struct cd_tsc_report *t)
{
	static const struct { enum cd_tsc_src id; const char *tag, *name, *label; } k[] = {
		{ CD_SRC_KLOG_REFINED, "refined", "kernel-refined", "kernel: refined" },
		{ CD_SRC_KLOG_DETECTED, "detected", "kernel-detected", "kernel: detected" },
		{ CD_SRC_KLOG_HV, "hypervisor", "kernel-hypervisor", "kernel: hypervisor" },
	};
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
		struct cd_tsc_freq *s = src(t, k[i].id, k[i].name, k[i].label);
		if (!cd_tsc_on_x86(t)) {  /* arch/x86 lines: on arm64 they could only be a foreign log */
			snprintf(s->note, sizeof s->note, "x86 only");
			continue;
		}
		for (int j = 0; j < f->klog.n_events; j++) {
			const struct cd_event *e = &f->klog.events[j];
			if (e->kind == CD_EV_TSC_FREQ && strcmp(e->name, k[i].tag) == 0 && e->khz)
				src_hz(s, e->khz * 1000.0, 1000);  /* the last one wins */
		}
		if (s->have)
			snprintf(s->note, sizeof s->note, "as logged, to 1 kHz");
		if (!s->have)
			snprintf(s->note, sizeof s->note, "%s", !f->klog.readable ? "kernel log not readable"
			     : f->klog.reaches_boot ? "not in the kernel log" : "not in the log (it no longer reaches boot)");
	}
}

static void src_cpuid15(const struct cd_facts *f, struct cd_tsc_report *t)
{
	struct cd_tsc_freq *s = src(t, CD_SRC_CPUID_15, "cpuid-0x15", "CPUID 0x15 crystal");
	const struct cd_cpuid *c = &f->cpuid;
	if (!cd_tsc_on_x86(t) || !c->have) {
		snprintf(s->note, sizeof s->note, "%s", cd_tsc_on_x86(t) ? "CPUID not read" : "x86 only");
		return;
	}
	if (!cd_cpuid_find(c, 0x15, 0)) {
		snprintf(s->note, sizeof s->note, "leaf 0x15 not offered");
		return;
	}
	double hz;
	int e = fc_freq_cpuid15(c->l15_denominator, c->l15_numerator, c->l15_crystal_hz, &hz);
	if (e == -ENODATA) {
		snprintf(s->note, sizeof s->note, "no ratio (EAX %u, EBX %u)", c->l15_denominator,
		     c->l15_numerator);
		return;
	}
	if (e == -ENOENT) {
		const struct cd_cpuid_leaf *l1 = cd_cpuid_find(c, 1, 0);
		const char *cite = NULL;
		uint32_t crystal = fc_freq_known_crystal(f->cpu.vendor, l1 ? l1->eax : 0, &cite);
		if (!crystal) {
			snprintf(s->note, sizeof s->note, "crystal unknown (ECX=0), ratio %u/%u", c->l15_numerator,
			     c->l15_denominator);
			return;
		}
		fc_freq_cpuid15(c->l15_denominator, c->l15_numerator, crystal, &hz);
		src_hz(s, hz, 0);
		snprintf(s->note, sizeof s->note, "%.1f MHz x %u/%u; crystal: %s", crystal / 1e6, c->l15_numerator,
		     c->l15_denominator, cite);
		return;
	}
	src_hz(s, hz, 0);
	snprintf(s->note, sizeof s->note, "%.4g MHz x %u/%u (exact)", c->l15_crystal_hz / 1e6, c->l15_numerator,
	     c->l15_denominator);
}

static void src_cpuid16_hv(const struct cd_facts *f, struct cd_tsc_report *t)
{
	struct cd_tsc_freq *s = src(t, CD_SRC_CPUID_16, "cpuid-0x16", "CPUID 0x16 base");
	const struct cd_cpuid *c = &f->cpuid;
	if (!cd_tsc_on_x86(t) || !c->have)
		snprintf(s->note, sizeof s->note, "%s", cd_tsc_on_x86(t) ? "CPUID not read" : "x86 only");
	else if (!c->l16_base_mhz)
		snprintf(s->note, sizeof s->note, "%s", cd_cpuid_find(c, 0x16, 0) ? "leaf 0x16 is zero" : "leaf 0x16 not offered");
	else {
		src_hz(s, c->l16_base_mhz * 1e6, 1e6);
		snprintf(s->note, sizeof s->note, "coarse: whole MHz, and the base clock, often not the TSC's");
	}

	s = src(t, CD_SRC_HV_LEAF, "hypervisor-leaf", "CPUID 0x40000010");
	if (!cd_tsc_on_x86(t) || !c->have)
		snprintf(s->note, sizeof s->note, "%s", cd_tsc_on_x86(t) ? "CPUID not read" : "x86 only");
	else if (!c->hv_signature[0])
		snprintf(s->note, sizeof s->note, "no hypervisor leaves");
	else if (!c->hv_tsc_khz)
		snprintf(s->note, sizeof s->note, "not offered by %s", c->hv_signature);
	else {
		src_hz(s, c->hv_tsc_khz * 1000.0, 1000);
		snprintf(s->note, sizeof s->note, "hypervisor leaf, kHz, from %s", c->hv_signature);
	}
}

static void src_perf_cntfrq(struct cd_tsc_report *t)
{
	struct cd_tsc_freq *s = src(t, CD_SRC_PERF, "perf-mmap", "perf mmap page");
	if (!t->measured)
		snprintf(s->note, sizeof s->note, "not measured");
	else if (t->perf_err == -EACCES || t->perf_err == -EPERM) {
		if (t->perf_paranoid != -99)
			snprintf(s->note, sizeof s->note, "perf_event_open refused (perf_event_paranoid %d)", t->perf_paranoid);
		else
			snprintf(s->note, sizeof s->note, "perf_event_open refused (%s)", strerror(-t->perf_err));
	} else if (t->perf_err == -ENODATA)
		snprintf(s->note, sizeof s->note, "not offered (cap_user_time 0: sched_clock is not this counter)");
	else if (t->perf_err == -ENOSYS || t->perf_err == -ENOENT)
		snprintf(s->note, sizeof s->note, "no perf events in this kernel");
	else if (t->perf_err)
		snprintf(s->note, sizeof s->note, "%s", strerror(-t->perf_err));
	else {
		src_hz(s, t->perf.hz, 0);
		snprintf(s->note, sizeof s->note, "1e9 * 2^%u / %u: the kernel's cycles to ns", t->perf.time_shift,
		     t->perf.time_mult);
	}

	s = src(t, CD_SRC_CNTFRQ, "cntfrq", "cntfrq_el0");
	if (t->counter.kind != FC_COUNTER_ARM64_CNTVCT)
		snprintf(s->note, sizeof s->note, "arm64 only");
	else if (!t->counter.freq_register_hz)
		snprintf(s->note, sizeof s->note, "%s", t->measured ? "zero: the firmware did not set it" : "not read");
	else {
		src_hz(s, (double)t->counter.freq_register_hz, 0);
		snprintf(s->note, sizeof s->note, "the architectural frequency register");
	}
}

/* The frequency a clock built on the counter would be told: the kernel's
 * own, best first.  The drift is measured against it. */
static void pick_reference(struct cd_tsc_report *t)
{
	static const enum cd_tsc_src order[] = {
		CD_SRC_CNTFRQ, CD_SRC_KLOG_REFINED, CD_SRC_KLOG_HV, CD_SRC_KLOG_DETECTED,
		CD_SRC_HV_LEAF, CD_SRC_CPUID_15, CD_SRC_PERF,
	};
	t->ref_hz = 0;
	t->ref_name = NULL;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		if (t->src[order[i]].have) {
			t->ref_hz = t->src[order[i]].hz;
			t->ref_name = t->src[order[i]].name;
			return;
		}
}

void cd_tsc_sources(const struct cd_facts *f, struct cd_tsc_report *t)
{
	src_measured(t);
	src_klog(f, t);
	src_cpuid15(f, t);
	src_cpuid16_hv(f, t);
	src_perf_cntfrq(t);
	const struct cd_tsc_freq *m = &t->src[CD_SRC_MEASURED];
	for (int i = 1; i < CD_N_SRC; i++)
		if (m->have && t->src[i].have) {
			t->src[i].have_diff = true;
			t->src[i].diff_ppm = fc_freq_ppm(t->src[i].hz, m->hz);
		}
	pick_reference(t);
}
