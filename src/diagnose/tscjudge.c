/* SPDX-License-Identifier: MIT */
/*
 * tscjudge.c: from the facts and the numbers of tscmeasure.c to the four
 * tests and the verdict (tsc.h, tscjudge.h); the frequency sources they
 * rest on are tscsources.c.
 *
 * A pure function, so that unit tests can judge a machine without a TSC, a
 * single CPU, a warp or an arm64 timer from numbers made by hand.  The rules
 * (docs/tsc.md): a failed test makes the counter unsound; a test that could
 * not be run or did not conclude makes it unknown, and says why; the kernel's
 * own measured rejections (a warp at boot, the watchdog) keep a counter that
 * passed everything here from being called sound, since a short test cannot
 * see what happens once an hour or after a migration.
 */
#include "diagnose/tscjudge.h"
#include "util/table.h"
#include "util/lines.h"

#include "clockfacts.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[] = {
	[CD_TSC_SOUND] = "sound", [CD_TSC_UNKNOWN] = "unknown", [CD_TSC_UNSOUND] = "unsound",
};
static const char *const status_names[] = { [CD_TSC_PASS] = "pass", [CD_TSC_UNTESTED] = "untested", [CD_TSC_FAIL] = "fail" };
static const char *const test_names[] = {
	[CD_TSC_T_FLAGS] = "flags", [CD_TSC_T_FREQ] = "frequency", [CD_TSC_T_SYNC] = "sync", [CD_TSC_T_DRIFT] = "drift",
};

/* snprintf, for texts that may be cut on purpose (a reason quoted into the
 * summary): the compiler's truncation warning does not apply. */
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

/* ---- the tests ---- */

static void test_flags(const struct cd_facts *f, struct cd_tsc_report *t)
{
	if (t->counter.kind == FC_COUNTER_ARM64_CNTVCT) {
		const struct cd_event *trap = NULL;
		for (int i = 0; i < f->klog.n_events; i++)
			if (f->klog.events[i].kind == CD_EV_ARCH_TIMER_TRAP)
				trap = &f->klog.events[i];
		for (int i = 0; i < f->klog.n_events; i++)
			if (f->klog.events[i].kind == CD_EV_ARCH_TIMER_WORKAROUND) {
				/* the trap first: the summary line carries the start */
				char cost[96] = "";
				if (t->read_cost.measured)
					setf(cost, sizeof cost, "; one read %.0f ns, the kernel's clock %.0f ns",
					     t->read_cost.counter_ns, t->read_cost.kernel_ns);
				if (trap)
					TEST(t, CD_TSC_T_FLAGS, CD_TSC_FAIL,
					     "user-space reads of cntvct_el0 trap into the kernel (\"%s\"), which works "
					     "around %s: direct reads can be wrong%s", trap->line, f->klog.events[i].name, cost);
				else
					TEST(t, CD_TSC_T_FLAGS, CD_TSC_FAIL,
					     "the kernel works around an erratum of this timer (%s): direct reads of "
					     "cntvct_el0 can be wrong%s", f->klog.events[i].name, cost);
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
		if (p->err == -EINTR) {
			t->pairs_interrupted++;
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
	} else if (t->pairs_interrupted) {
		TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED, "no warp in %d pair%s, but %d pair%s untested: the run "
		     "was interrupted%s", t->pairs_run, t->pairs_run == 1 ? "" : "s", t->pairs_interrupted,
		     t->pairs_interrupted == 1 ? "" : "s", bound);
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
		if (t->pairs_interrupted)
			TEST(t, CD_TSC_T_SYNC, CD_TSC_UNTESTED, "the run was interrupted before any pair ran");
		else if (t->pairs_timed_out && !err)
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
		if (cd_tsc_on_x86(t) && !f->klog.readable)
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
	if (cd_tsc_on_x86(t) && f->cpu.have_cpuinfo && !(f->cpu.flags & CD_CPU_TSC)) {
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

/* The verdict from the tests and the kernel's own evidence; the failed
 * tests, or else the untested ones, are the reasons it gives. */
static enum cd_tsc_verdict verdict_of(const struct cd_facts *f, struct cd_tsc_report *t)
{
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
		return CD_TSC_UNSOUND;
	if (any_untested || kernel_rejected)
		return CD_TSC_UNKNOWN;
	return CD_TSC_SOUND;
}

/* One line: the verdict and its main reason.  A sound one fits on the
 * report's first line whole, its figures unbroken (the frequency test's
 * detail says when the frequency is only the kernel's calibration). */
static void summarise(struct cd_tsc_report *t)
{
	if (t->verdict == CD_TSC_SOUND)
		setf(t->summary, sizeof t->summary, "sound: invariant, in sync within +-%.0f ns, %.4f MHz +-%.2g ppm",
		     cd_tsc_cycles_ns(t, (double)t->bound_cycles), t->src[CD_SRC_MEASURED].hz / 1e6,
		     t->src[CD_SRC_MEASURED].precision_ppm);
	else if (t->n_reasons)
		setf(t->summary, sizeof t->summary, "%s: %s", cd_tsc_verdict_name(t->verdict), t->reasons[0]);
	else
		setf(t->summary, sizeof t->summary, "%s", cd_tsc_verdict_name(t->verdict));
	/* A counter no cheaper to read than the kernel's clock traps (a
	 * hypervisor's TSC exiting, an erratum's workaround): sound or not,
	 * a program reading it pays about a system call. */
	const struct fc_read_cost *c = &t->read_cost;
	if (c->measured && !fc_read_cost_counter_cheaper(c) && !strstr(t->summary, " trap")) {
		size_t n = strlen(t->summary);
		setf(t->summary + n, sizeof t->summary - n, "; user-space reads of the counter trap: one costs %.0f ns, "
		     "the kernel's clock %.0f ns", c->counter_ns, c->kernel_ns);
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
	t->pairs_interrupted = 0;
	cd_tsc_sources(f, t);
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
	t->verdict = verdict_of(f, t);
	summarise(t);
}

const char *cd_tsc_verdict_name(enum cd_tsc_verdict v)
{
	return CD_NAME_OF(verdict_names, v, "unknown");
}

const char *cd_tsc_status_name(enum cd_tsc_status s)
{
	return CD_NAME_OF(status_names, s, "untested");
}

const char *cd_tsc_test_name(enum cd_tsc_test_id id)
{
	return CD_NAME_OF(test_names, id, "?");
}
