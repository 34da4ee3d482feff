/*
 * tscverdict.c: from the facts and the numbers of tscmeasure.c to the list
 * of frequency sources, the four tests and the verdict (tsc.h).
 *
 * A pure function, so that unit tests can judge a machine without a TSC, a
 * single CPU, a warp or an arm64 timer from numbers made by hand.  The rules
 * (docs/tsc.md): a failed test makes the counter unsound; a test that could
 * not be run or did not conclude makes it unknown, and says why; the kernel's
 * own measured rejections (a warp at boot, the watchdog) keep a counter that
 * passed everything here from being called sound, since a short test cannot
 * see what happens once an hour or after a migration.
 */
#include "measure/tsc.h"
#include "probe/probe.h"
#include "util/lines.h"

#include "clockfacts.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void setf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setf(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
}

#define TEST(t, id, st, ...) \
	do { (t)->test[id].status = (st); setf((t)->test[id].detail, sizeof (t)->test[id].detail, __VA_ARGS__); } while (0)

/* A reason the verdict rests on, printf-style. */
#define reason(t, ...) CD_LINES_ADD((t)->reasons, (t)->n_reasons, __VA_ARGS__)

/* A kernel note is also a reason: the verdict may rest on it. */
static void kernel_note(struct cd_tsc_report *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void kernel_note(struct cd_tsc_report *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *n = CD_LINES_VADD(t->kernel_notes, t->n_kernel_notes, fmt, ap);
	va_end(ap);
	if (n)
		reason(t, "%s", n);
}

double cd_tsc_cycles_ns(const struct cd_tsc_report *t, double cycles)
{
	double hz = t->src[CD_SRC_MEASURED].have ? t->src[CD_SRC_MEASURED].hz : t->ref_hz;
	return hz > 0 ? cycles / hz * 1e9 : 0;
}

static bool is_x86(const struct cd_tsc_report *t)
{
	return t->counter.kind == FC_COUNTER_X86_TSC;
}

/* ---- frequency sources ---- */

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
		setf(s->note, sizeof s->note, "not measured");
	else if (t->freq_err)
		setf(s->note, sizeof s->note, "could not be measured (%s)", strerror(-t->freq_err));
	else {
		src_hz(s, t->raw.hz, 0);
		s->precision_ppm = t->raw.err_ppm;
		setf(s->note, sizeof s->note, "+-%.2g ppm over %.2f s%s", t->raw.err_ppm, t->raw.interval_s,
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
		if (!is_x86(t)) {  /* arch/x86 lines: on arm64 they could only be a foreign log */
			setf(s->note, sizeof s->note, "x86 only");
			continue;
		}
		for (int j = 0; j < f->klog.n_events; j++) {
			const struct cd_event *e = &f->klog.events[j];
			if (e->kind == CD_EV_TSC_FREQ && strcmp(e->name, k[i].tag) == 0 && e->khz)
				src_hz(s, e->khz * 1000.0, 1000);  /* the last one wins */
		}
		if (s->have)
			setf(s->note, sizeof s->note, "as logged, to 1 kHz");
		if (!s->have)
			setf(s->note, sizeof s->note, "%s", !f->klog.readable ? "kernel log not readable"
			     : f->klog.reaches_boot ? "not in the kernel log" : "not in the log (it no longer reaches boot)");
	}
}

static void src_cpuid15(const struct cd_facts *f, struct cd_tsc_report *t)
{
	struct cd_tsc_freq *s = src(t, CD_SRC_CPUID_15, "cpuid-0x15", "CPUID 0x15 crystal");
	const struct cd_cpuid *c = &f->cpuid;
	if (!is_x86(t) || !c->have) {
		setf(s->note, sizeof s->note, "%s", is_x86(t) ? "CPUID not read" : "x86 only");
		return;
	}
	if (!cd_cpuid_find(c, 0x15, 0)) {
		setf(s->note, sizeof s->note, "leaf 0x15 not offered");
		return;
	}
	double hz;
	int e = fc_freq_cpuid15(c->l15_denominator, c->l15_numerator, c->l15_crystal_hz, &hz);
	if (e == -ENODATA) {
		setf(s->note, sizeof s->note, "no ratio (EAX %u, EBX %u)", c->l15_denominator,
		     c->l15_numerator);
		return;
	}
	if (e == -ENOENT) {
		const struct cd_cpuid_leaf *l1 = cd_cpuid_find(c, 1, 0);
		const char *cite = NULL;
		uint32_t crystal = fc_freq_known_crystal(f->cpu.vendor, l1 ? l1->eax : 0, &cite);
		if (!crystal) {
			setf(s->note, sizeof s->note, "crystal unknown (ECX=0), ratio %u/%u", c->l15_numerator,
			     c->l15_denominator);
			return;
		}
		fc_freq_cpuid15(c->l15_denominator, c->l15_numerator, crystal, &hz);
		src_hz(s, hz, 0);
		setf(s->note, sizeof s->note, "%.1f MHz x %u/%u; crystal: %s", crystal / 1e6, c->l15_numerator,
		     c->l15_denominator, cite);
		return;
	}
	src_hz(s, hz, 0);
	setf(s->note, sizeof s->note, "%.4g MHz x %u/%u (exact)", c->l15_crystal_hz / 1e6, c->l15_numerator,
	     c->l15_denominator);
}

static void src_cpuid16_hv(const struct cd_facts *f, struct cd_tsc_report *t)
{
	struct cd_tsc_freq *s = src(t, CD_SRC_CPUID_16, "cpuid-0x16", "CPUID 0x16 base");
	const struct cd_cpuid *c = &f->cpuid;
	if (!is_x86(t) || !c->have)
		setf(s->note, sizeof s->note, "%s", is_x86(t) ? "CPUID not read" : "x86 only");
	else if (!c->l16_base_mhz)
		setf(s->note, sizeof s->note, "%s", cd_cpuid_find(c, 0x16, 0) ? "leaf 0x16 is zero" : "leaf 0x16 not offered");
	else {
		src_hz(s, c->l16_base_mhz * 1e6, 1e6);
		setf(s->note, sizeof s->note, "coarse: whole MHz, and the base clock, often not the TSC's");
	}

	s = src(t, CD_SRC_HV_LEAF, "hypervisor-leaf", "CPUID 0x40000010");
	if (!is_x86(t) || !c->have)
		setf(s->note, sizeof s->note, "%s", is_x86(t) ? "CPUID not read" : "x86 only");
	else if (!c->hv_signature[0])
		setf(s->note, sizeof s->note, "no hypervisor leaves");
	else if (!c->hv_tsc_khz)
		setf(s->note, sizeof s->note, "not offered by %s", c->hv_signature);
	else {
		src_hz(s, c->hv_tsc_khz * 1000.0, 1000);
		setf(s->note, sizeof s->note, "hypervisor leaf, kHz, from %s", c->hv_signature);
	}
}

static void src_perf_cntfrq(struct cd_tsc_report *t)
{
	struct cd_tsc_freq *s = src(t, CD_SRC_PERF, "perf-mmap", "perf mmap page");
	if (!t->measured)
		setf(s->note, sizeof s->note, "not measured");
	else if (t->perf_err == -EACCES || t->perf_err == -EPERM) {
		if (t->perf_paranoid != -99)
			setf(s->note, sizeof s->note, "perf_event_open refused (perf_event_paranoid %d)", t->perf_paranoid);
		else
			setf(s->note, sizeof s->note, "perf_event_open refused (%s)", strerror(-t->perf_err));
	} else if (t->perf_err == -ENODATA)
		setf(s->note, sizeof s->note, "not offered (cap_user_time 0: sched_clock is not this counter)");
	else if (t->perf_err == -ENOSYS || t->perf_err == -ENOENT)
		setf(s->note, sizeof s->note, "no perf events in this kernel");
	else if (t->perf_err)
		setf(s->note, sizeof s->note, "%s", strerror(-t->perf_err));
	else {
		src_hz(s, t->perf.hz, 0);
		setf(s->note, sizeof s->note, "1e9 * 2^%u / %u: the kernel's cycles to ns", t->perf.time_shift,
		     t->perf.time_mult);
	}

	s = src(t, CD_SRC_CNTFRQ, "cntfrq", "cntfrq_el0");
	if (t->counter.kind != FC_COUNTER_ARM64_CNTVCT)
		setf(s->note, sizeof s->note, "arm64 only");
	else if (!t->counter.freq_register_hz)
		setf(s->note, sizeof s->note, "%s", t->measured ? "zero: the firmware did not set it" : "not read");
	else {
		src_hz(s, (double)t->counter.freq_register_hz, 0);
		setf(s->note, sizeof s->note, "the architectural frequency register");
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

static void sources(const struct cd_facts *f, struct cd_tsc_report *t)
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

/* ---- the tests ---- */

static void test_flags(const struct cd_facts *f, struct cd_tsc_report *t)
{
	if (t->counter.kind == FC_COUNTER_ARM64_CNTVCT) {
		for (int i = 0; i < f->klog.n_events; i++)
			if (f->klog.events[i].kind == CD_EV_ARCH_TIMER_WORKAROUND) {
				TEST(t, CD_TSC_T_FLAGS, CD_TSC_FAIL,
				     "the kernel works around an erratum of this timer (%s): direct reads of "
				     "cntvct_el0 can be wrong", f->klog.events[i].name);
				return;
			}
		TEST(t, CD_TSC_T_FLAGS, CD_TSC_PASS,
		     "the arm64 generic timer: one system counter, architecturally constant rate");
		return;
	}
	/* flags_all: a flag missing on any CPU is missing. */
	unsigned fl = f->cpu.flags_all;
	bool constant = fl & CD_CPU_CONSTANT_TSC, nonstop = fl & CD_CPU_NONSTOP_TSC;
	if (!f->cpu.have_cpuinfo) {
		if (f->cpuid.has_invariant && f->cpuid.invariant_tsc)
			TEST(t, CD_TSC_T_FLAGS, CD_TSC_PASS, "invariant TSC (CPUID 0x80000007 EDX[8]); no cpuinfo");
		else if (f->cpuid.has_invariant)
			TEST(t, CD_TSC_T_FLAGS, CD_TSC_FAIL, "no invariant TSC (CPUID 0x80000007 EDX[8] clear)");
		else
			TEST(t, CD_TSC_T_FLAGS, CD_TSC_UNTESTED, "neither /proc/cpuinfo nor CPUID 0x80000007 known");
		return;
	}
	if (!constant)
		TEST(t, CD_TSC_T_FLAGS, CD_TSC_FAIL,
		     "no constant_tsc%s: the TSC may tick at the CPU's current frequency",
		     nonstop ? "" : " (nor nonstop_tsc)");
	else if (!nonstop)
		TEST(t, CD_TSC_T_FLAGS, CD_TSC_UNTESTED,
		     "constant_tsc but no nonstop_tsc: the TSC may stop in deep C-states "
		     "(hypervisors often hide the flag; the host's CPU decides)");
	else
		TEST(t, CD_TSC_T_FLAGS, CD_TSC_PASS, "invariant TSC (constant_tsc, nonstop_tsc%s)",
		     f->cpuid.has_invariant && f->cpuid.invariant_tsc ? ", CPUID 0x80000007 EDX[8]" : "");
}

/* The kernel's clocks are themselves this counter times the kernel's
 * multiplier when the clocksource reads it (the table's cpu_counter,
 * lib/clockfacts.c): measuring the counter against them then shows only
 * that the kernel's calibration is consistent, not that it is right against
 * another oscillator. */
static bool reference_is_counter(const struct cd_facts *f)
{
	return f->cs.have_current && fc_cs_is_cpu_counter(f->cs.current);
}

static void test_freq(const struct cd_facts *f, struct cd_tsc_report *t)
{
	const struct cd_tsc_freq *m = &t->src[CD_SRC_MEASURED];
	t->freq_self_referenced = reference_is_counter(f);
	if (!m->have)
		TEST(t, CD_TSC_T_FREQ, CD_TSC_UNTESTED, "frequency %s", m->note);
	else if (m->precision_ppm > CD_TSC_FREQ_MAX_ERR_PPM)
		TEST(t, CD_TSC_T_FREQ, CD_TSC_UNTESTED, "measured %.4f MHz only to +-%.0f ppm (limit %.0f)",
		     m->hz / 1e6, m->precision_ppm, CD_TSC_FREQ_MAX_ERR_PPM);
	else if (t->freq_self_referenced)
		TEST(t, CD_TSC_T_FREQ, CD_TSC_PASS, "%.4f MHz +-%.2g ppm over %.2f s: consistent with the "
		     "kernel's calibration (its clocks read this counter here), not checked against another "
		     "oscillator", m->hz / 1e6, m->precision_ppm, t->raw.interval_s);
	else
		TEST(t, CD_TSC_T_FREQ, CD_TSC_PASS, "%.4f MHz +-%.2g ppm over %.2f s", m->hz / 1e6,
		     m->precision_ppm, t->raw.interval_s);
}

/* Sums the pairs: the worst backward step, moved offsets, refusals, and
 * the bound on every CPU's offset from the reference CPU. */
static void sum_pairs(struct cd_tsc_report *t, uint64_t *moved, int *moved_a, int *moved_b, int *first_err)
{
	*moved = 0;
	*first_err = 0;
	for (int i = 0; i < t->n_pairs; i++) {
		const struct cd_tsc_pair *p = &t->pairs[i];
		if (p->err == -ETIMEDOUT) {
			t->pairs_timed_out++;
			continue;
		}
		if (p->err) {
			t->pairs_refused++;
			if (!*first_err)
				*first_err = p->err;
			continue;
		}
		t->pairs_run++;
		uint64_t back = fc_sync_max_back(&p->r.acc), by = 0;
		bool mv = fc_sync_moved(&p->r.acc, &by);
		if (back || mv)
			t->pairs_failed++;
		else if (p->r.cut_short)
			t->pairs_short++;
		if (back > t->worst_back) {
			t->worst_back = back;
			t->worst_a = p->cpu_a;
			t->worst_b = p->cpu_b;
		}
		if (mv && by > *moved) {
			*moved = by;
			*moved_a = p->cpu_a;
			*moved_b = p->cpu_b;
		}
		int64_t mid;
		uint64_t half;
		if (p->cpu_a == t->ref_cpu && fc_sync_offset(&p->r.acc, &mid, &half)) {
			uint64_t b = (uint64_t)llabs(mid) + half;
			if (!t->have_bound || b > t->bound_cycles)
				t->bound_cycles = b;
			t->have_bound = true;
		}
	}
}

/* No warp in any pair run: pass, unless some CPUs went untested. */
static void sync_passed(struct cd_tsc_report *t, int online)
{
	char bound[64] = "";
	if (t->have_bound)
		setf(bound, sizeof bound, "; every CPU within +-%.0f ns of CPU %d",
		     cd_tsc_cycles_ns(t, (double)t->bound_cycles), t->ref_cpu);
	if (t->pairs_short) {
		const struct cd_tsc_pair *p = t->pairs;
		while (p->err || !p->r.cut_short)
			p++;
		TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED, "no warp, but %d pair%s cut short (CPU %d-%d: %llu "
		     "rounds in %.2f s): the two threads rarely ran at once, a busy machine", t->pairs_short,
		     t->pairs_short == 1 ? "" : "s", p->cpu_a, p->cpu_b, (unsigned long long)p->r.rounds,
		     p->r.elapsed_s);
	} else if (t->pairs_timed_out) {
		TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED, "no warp in %d pair%s, but %d pair%s untested: the "
		     "test's time ran out (a busy machine; --quick tests fewer pairs)%s", t->pairs_run,
		     t->pairs_run == 1 ? "" : "s", t->pairs_timed_out, t->pairs_timed_out == 1 ? "" : "s", bound);
	} else if (t->pairs_refused || t->cpus_allowed < online)
		TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED, "no warp in %d pair%s, but %s untested%s", t->pairs_run,
		     t->pairs_run == 1 ? "" : "s", t->pairs_refused ? "pairs refused pinning are" :
		     "CPUs outside this process's affinity are", bound);
	else
		TEST(t, CD_TSC_T_SYNC, CD_TSC_PASS, "no warp in %d pair%s%s%s", t->pairs_run,
		     t->pairs_run == 1 ? "" : "s", t->quick ? " (each CPU against the first)" : "", bound);
}

static void test_sync(const struct cd_facts *f, struct cd_tsc_report *t)
{
	int online = t->cpus_online ? t->cpus_online : f->cpu.count;
	uint64_t moved;
	int ma = -1, mb = -1, err;
	sum_pairs(t, &moved, &ma, &mb, &err);
	if (t->worst_back) {
		TEST(t, CD_TSC_T_SYNC, CD_TSC_FAIL, "time went backwards by %llu cycles (%.0f ns) between CPU %d "
		     "and CPU %d", (unsigned long long)t->worst_back, cd_tsc_cycles_ns(t, (double)t->worst_back),
		     t->worst_a, t->worst_b);
	} else if (moved) {
		TEST(t, CD_TSC_T_SYNC, CD_TSC_FAIL, "the offset between CPU %d and CPU %d moved by %llu cycles "
		     "during the test", ma, mb, (unsigned long long)moved);
	} else if (online == 1) {
		TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED, "one CPU: no cross-CPU test (nothing to compare with)");
	} else if (t->measured && t->cpus_allowed == 1) {
		TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED,
		     "one CPU allowed to this process (of %d online): no cross-CPU test", online);
	} else if (!t->measured) {
		TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED, "not measured");
	} else if (t->pairs_run == 0) {
		if (t->pairs_timed_out && !err)
			TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED, "the test's time ran out before any pair ran "
			     "(a busy machine)");
		else if (err)
			TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED, "pinning threads to CPUs refused (%s): no "
			     "cross-CPU test", strerror(-err));
		else
			TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED, "no CPU pair could be tested");
	} else {
		sync_passed(t, online);
	}
}

static void test_drift(const struct cd_facts *f, struct cd_tsc_report *t)
{
	const struct cd_tsc_freq *m = &t->src[CD_SRC_MEASURED];
	if (!m->have) {
		TEST(t, CD_TSC_T_DRIFT, CD_TSC_UNTESTED, "drift %s", m->note);
		return;
	}
	if (!t->ref_hz) {
		/* The kernel declares its TSC frequency only in its log: when the
		 * log cannot be read, that is the fact missing, not the frequency. */
		if (is_x86(t) && !f->klog.readable)
			TEST(t, CD_TSC_T_DRIFT, CD_TSC_UNTESTED, "the kernel's TSC frequency is unknown: the "
			     "kernel log, which declares it, cannot be read here; the CPU declares none");
		else
			TEST(t, CD_TSC_T_DRIFT, CD_TSC_UNTESTED, "no frequency declared by the kernel or the CPU "
			     "to compare with");
		return;
	}
	t->have_drift = true;
	t->drift_raw_ppm = fc_freq_ppm(t->raw.hz, t->ref_hz);
	t->drift_mono_ppm = fc_freq_ppm(t->mono.hz, t->ref_hz);
	t->drift_err_ppm = fmax(t->raw.err_ppm, t->mono.err_ppm);
	if (fabs(t->drift_raw_ppm) > CD_TSC_RATE_MAX_PPM + t->drift_err_ppm)
		TEST(t, CD_TSC_T_DRIFT, CD_TSC_FAIL, "the counter runs %+.0f ppm from the %.3f MHz the kernel "
		     "uses (%s): its rate changed, or was never that", t->drift_raw_ppm, t->ref_hz / 1e6,
		     t->ref_name);
	else
		TEST(t, CD_TSC_T_DRIFT, CD_TSC_PASS, "at %.3f MHz (%s): %+.2f ppm from MONOTONIC_RAW, %+.2f ppm "
		     "from MONOTONIC", t->ref_hz / 1e6, t->ref_name, t->drift_raw_ppm, t->drift_mono_ppm);
}

/* ---- the verdict ---- */

/* Why the counter cannot be tested at all, or NULL. */
static const char *no_counter(const struct cd_facts *f, const struct cd_tsc_report *t, char *buf, size_t cap)
{
	if (t->counter.kind == FC_COUNTER_NONE) {
		setf(buf, cap, "not x86 or arm64 (%s): no counter this tool can read", f->cpu.arch[0] ? f->cpu.arch : "?");
		return buf;
	}
	if (is_x86(t) && f->cpu.have_cpuinfo && !(f->cpu.flags & CD_CPU_TSC)) {
		setf(buf, cap, "this CPU has no TSC (no tsc flag in /proc/cpuinfo)");
		return buf;
	}
	if (t->counter.usable == -ENODEV)
		setf(buf, cap, "this CPU has no %s", t->counter.name ? t->counter.name : "counter");
	else if (t->counter.usable == -EPERM)
		setf(buf, cap, "reading the TSC is forbidden to this process (prctl PR_SET_TSC)");
	else if (t->counter.usable)
		setf(buf, cap, "the counter cannot be read (%s)", strerror(-t->counter.usable));
	else
		return NULL;
	return buf;
}

/* The kernel's own measured rejections, which a short test cannot overrule,
 * and its rule-based ones, which are only noted. */
static void kernel_evidence(const struct cd_facts *f, struct cd_tsc_report *t, bool *measured_rejection)
{
	*measured_rejection = false;
	if (!f->klog.readable)
		kernel_note(t, "log unreadable: %s", f->klog.why_not[0] ? f->klog.why_not : "no source");
	for (int i = 0; i < f->klog.n_events; i++) {
		const struct cd_event *e = &f->klog.events[i];
		if (e->kind == CD_EV_TSC_WARP) {
			*measured_rejection = true;
			kernel_note(t, "the kernel measured a %lld-cycle warp between CPU %d and CPU %d at boot",
			            (long long)e->value, e->cpu_a, e->cpu_b);
		} else if ((e->kind == CD_EV_WATCHDOG_SKEW || e->kind == CD_EV_CS_UNSTABLE_DELTA) &&
		           strncmp(e->name, "tsc", 3) == 0) {
			*measured_rejection = true;
			if (e->name2[0])
				kernel_note(t, "the kernel's watchdog rejected the TSC against %s, %.0f s after boot",
				            e->name2, e->ts);
			else
				kernel_note(t, "the kernel's watchdog rejected the TSC %.0f s after boot", e->ts);
		} else if (e->kind == CD_EV_TSC_UNSTABLE && !strstr(e->name, "watchdog") &&
		           !strstr(e->name, "check_tsc_sync_source")) {
			kernel_note(t, "the kernel marked the TSC unstable: %s (a rule, not a measurement)", e->name);
		}
	}
}

void cd_tsc_judge(const struct cd_facts *f, struct cd_tsc_report *t)
{
	t->n_reasons = t->n_kernel_notes = 0;
	t->worst_back = 0;
	t->worst_a = t->worst_b = -1;
	t->bound_cycles = 0;
	t->have_bound = t->have_drift = false;
	t->pairs_run = t->pairs_failed = t->pairs_refused = t->pairs_short = t->pairs_timed_out = 0;
	sources(f, t);
	char why[160];
	if (no_counter(f, t, why, sizeof why)) {
		for (int i = 0; i < CD_TSC_N_TESTS; i++)
			TEST(t, (enum cd_tsc_test_id)i, CD_TSC_UNTESTED, "%s", why);
		t->verdict = CD_TSC_UNKNOWN;
		setf(t->summary, sizeof t->summary, "unknown: %s", why);
		reason(t, "%s", why);
		return;
	}
	test_flags(f, t);
	test_freq(f, t);
	test_sync(f, t);
	test_drift(f, t);

	bool any_fail = false, any_untested = false;
	for (int i = 0; i < CD_TSC_N_TESTS; i++) {
		any_fail |= t->test[i].status == CD_TSC_FAIL;
		any_untested |= t->test[i].status == CD_TSC_UNTESTED;
	}
	enum cd_tsc_status want = any_fail ? CD_TSC_FAIL : CD_TSC_UNTESTED;
	for (int i = 0; i < CD_TSC_N_TESTS; i++)
		if (t->test[i].status == want)
			reason(t, "%s: %s", cd_tsc_test_name((enum cd_tsc_test_id)i), t->test[i].detail);
	bool kernel_rejected;
	kernel_evidence(f, t, &kernel_rejected);
	if (any_fail)
		t->verdict = CD_TSC_UNSOUND;
	else if (any_untested || kernel_rejected)
		t->verdict = CD_TSC_UNKNOWN;
	else
		t->verdict = CD_TSC_SOUND;

	if (t->verdict == CD_TSC_SOUND)
		setf(t->summary, sizeof t->summary, "sound: invariant, in sync within +-%.0f ns, %.4f MHz %s%.2g ppm",
		     cd_tsc_cycles_ns(t, (double)t->bound_cycles), t->src[CD_SRC_MEASURED].hz / 1e6,
		     t->freq_self_referenced ? "(as the kernel's) +-" : "+-", t->src[CD_SRC_MEASURED].precision_ppm);
	else if (t->n_reasons)
		setf(t->summary, sizeof t->summary, "%s: %s", cd_tsc_verdict_name(t->verdict), t->reasons[0]);
	else
		setf(t->summary, sizeof t->summary, "%s", cd_tsc_verdict_name(t->verdict));
}

const char *cd_tsc_verdict_name(enum cd_tsc_verdict v)
{
	switch (v) {
	case CD_TSC_SOUND: return "sound";
	case CD_TSC_UNSOUND: return "unsound";
	case CD_TSC_UNKNOWN: break;
	}
	return "unknown";
}

const char *cd_tsc_status_name(enum cd_tsc_status s)
{
	switch (s) {
	case CD_TSC_PASS: return "pass";
	case CD_TSC_FAIL: return "fail";
	case CD_TSC_UNTESTED: break;
	}
	return "untested";
}

const char *cd_tsc_test_name(enum cd_tsc_test_id id)
{
	switch (id) {
	case CD_TSC_T_FLAGS: return "flags";
	case CD_TSC_T_FREQ: return "frequency";
	case CD_TSC_T_SYNC: return "sync";
	case CD_TSC_T_DRIFT: return "drift";
	case CD_TSC_N_TESTS: break;
	}
	return "?";
}
