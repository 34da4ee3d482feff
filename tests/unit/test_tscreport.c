/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of tsc's report (src/output/tscreport.c): a report filled by
 * hand, as cd_tsc_measure and cd_tsc_judge would leave it, rendered as text
 * and as JSON.  The counter runs at 1 GHz, so cycles and ns read the same.
 */
#include "output/tscreport.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>

#define HZ 1e9

/* A pair of CPUs whose warp test bounded the offset to [lo, hi] cycles and
 * saw at most back cycles going backwards. */
static struct cd_tsc_pair pair(int a, int b, int64_t lo, int64_t hi, uint64_t back)
{
	struct cd_tsc_pair p = { .cpu_a = a, .cpu_b = b };
	p.r.rounds = 1000;
	p.r.elapsed_s = 0.02;
	p.r.acc.have_lo = p.r.acc.have_hi = true;
	p.r.acc.off_lo = lo;
	p.r.acc.off_hi = hi;
	p.r.acc.max_back[0] = back;
	p.r.acc.back_steps = back ? 3 : 0;
	return p;
}

static void source(struct cd_tsc_report *t, enum cd_tsc_src i, const char *name, const char *label, double hz,
                   const char *note)
{
	struct cd_tsc_freq *s = &t->src[i];
	s->name = name;
	s->label = label;
	s->have = hz > 0;
	s->hz = hz;
	s->have_diff = hz > 0 && i != CD_SRC_MEASURED;
	s->diff_ppm = s->have_diff ? (hz - HZ) / HZ * 1e6 : 0;
	snprintf(s->note, sizeof s->note, "%s", note);
}

/* The facts every report here is rendered with (sound_x86 fills them). */
static struct cd_facts facts;

/* A sound two-CPU x86 machine at 1 GHz: pairs 0-1 (offset 20 +-11 cycles,
 * no warp) and, with extra, as many more. */
static void sound_x86(struct cd_tsc_report *t, int extra)
{
	struct cd_facts *f = &facts;
	memset(f, 0, sizeof *f);
	memset(t, 0, sizeof *t);
	f->cpu.have_cpuinfo = true;
	f->cpu.flags = f->cpu.flags_all = CD_CPU_TSC | CD_CPU_CONSTANT_TSC | CD_CPU_NONSTOP_TSC;
	f->hv.kind = CD_HV_NONE;
	f->cs.have_current = true;
	snprintf(f->cs.current, sizeof f->cs.current, "tsc");
	t->counter.kind = FC_COUNTER_X86_TSC;
	t->counter.name = "TSC";
	t->cpus_online = t->cpus_allowed = 2 + extra;
	t->pair_s = 0.02;
	t->raw.interval_s = 1.0;
	t->raw.err_ppm = 0.05;
	t->mono.err_ppm = 0.05;
	for (int i = 0; i < CD_N_SRC; i++)
		source(t, (enum cd_tsc_src)i, "other", "other", 0, "not read");
	source(t, CD_SRC_MEASURED, "measured", "measured (vs RAW)", HZ, "+-0.05 ppm over 1.00 s");
	source(t, CD_SRC_KLOG_DETECTED, "kernel-detected", "kernel: detected", 1.000002e9, "as logged, to 1 kHz");
	t->n_pairs = 1 + extra;
	t->pairs = calloc((size_t)t->n_pairs, sizeof *t->pairs);
	t->pairs[0] = pair(0, 1, 10, 30, 0);
	for (int i = 1; i <= extra; i++)
		t->pairs[i] = pair(0, i + 1, 10, 30, 0);
	t->pairs_run = t->n_pairs;
	t->have_bound = true;
	t->bound_cycles = 31;
	t->have_drift = true;
	t->ref_hz = 1.000002e9;
	t->ref_name = "kernel-detected";
	t->drift_raw_ppm = 2.0;
	t->drift_mono_ppm = -1.5;
	t->drift_err_ppm = 0.05;
	for (int i = 0; i < CD_TSC_N_TESTS; i++)
		snprintf(t->test[i].detail, sizeof t->test[i].detail, "all well");
	t->verdict = CD_TSC_SOUND;
	snprintf(t->summary, sizeof t->summary, "sound: all well");
	t->elapsed_s = 1.25;
}

/* Whether text holds line as a whole line. */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

/* What writer makes of t (malloc'd). */
static char *render(void (*writer)(FILE *, const struct cd_facts *, const struct cd_tsc_report *),
                    const struct cd_tsc_report *t)
{
	char *text = NULL;
	UNIT_CAPTURE(text, writer(out, &facts, t));
	return text;
}

/* Each of the NULL-ended want is a whole line of text (lines) or a part of
 * it (!lines); a failure names the one missing. */
static void check_all(const char *text, const char *const *want, bool lines)
{
	for (; *want; want++) {
		bool found = lines ? has_line(text, *want) : strstr(text, *want) != NULL;
		if (!found)
			fprintf(stderr, "missing: %s\n", *want);
		CHECK(found);
	}
}

static void test_text(void)
{
	struct cd_tsc_report t;
	sound_x86(&t, 0);
	char *text = render(cd_tsc_text, &t);
	static const char *const lines[] = {
		"TSC sound: all well",
		"  counter: TSC (x86-tsc), bare metal, 2 CPUs online, 2 allowed, clocksource tsc",
		"  flags: tsc constant_tsc nonstop_tsc",
		"frequency                     MHz  vs measured",
		"  measured (vs RAW)    1000.000000               +-0.05 ppm over 1.00 s",
		"  kernel: detected     1000.002000     +2.0 ppm  as logged, to 1 kHz",
		"cross-CPU warp test: every pair of CPUs, 20 ms each",
		"  0-1          1000  none              +20 +-11 cyc (+20 +-11 ns)",
		"drift of a TSC clock at 1000.002 MHz (kernel-detected), over 1.00 s",
		"  vs CLOCK_MONOTONIC_RAW      +2.00 ppm +-0.05",
		"  vs CLOCK_MONOTONIC          -1.50 ppm +-0.05",
		"  pass      sync: all well",
		"verdict: sound (exit status 0)",
		NULL,
	};
	check_all(text, lines, true);
	CHECK(strncmp(text, lines[0], strlen(lines[0])) == 0);
	CHECK(!strstr(text, "cntfrq"));  /* an arm64 source, on x86 */
	free(text);
	free(t.pairs);
}

/* Long texts wrap under their column; an empty one leaves no blank. */
static void test_text_wrapped(void)
{
	struct cd_tsc_report t;
	sound_x86(&t, 0);
	snprintf(t.summary, sizeof t.summary, "unsound: sync: time went backwards by 4900 cycles (4900 ns) "
	         "between CPU 0 and CPU 8");
	snprintf(t.src[CD_SRC_PERF].note, sizeof t.src[0].note, "not offered (cap_user_time 0: sched_clock "
	         "is not this counter)");
	t.test[CD_TSC_T_DRIFT].detail[0] = '\0';
	t.test[CD_TSC_T_DRIFT].status = CD_TSC_UNTESTED;
	t.n_kernel_notes = 2;
	snprintf(t.kernel_notes[0], sizeof t.kernel_notes[0], "the kernel's watchdog rejected the TSC");
	snprintf(t.kernel_notes[1], sizeof t.kernel_notes[1], "and said so twice");
	char *text = render(cd_tsc_text, &t);
	const char *summary = "TSC unsound: sync: time went backwards by 4900 cycles (4900 ns) between CPU 0\n"
	                      "    and CPU 8\n";
	CHECK(strncmp(text, summary, strlen(summary)) == 0);
	static const char *const lines[] = {
		"  other                          -               not offered (cap_user_time 0:",
		"                                                 sched_clock is not this",
		"                                                 counter)",
		"  untested  drift:",
		"  kernel: the kernel's watchdog rejected the TSC",
		"          and said so twice",
		NULL,
	};
	check_all(text, lines, true);
	for (const char *p = text; *p; p += strcspn(p, "\n") + 1)
		CHECK(strcspn(p, "\n") < 80);
	free(text);
	free(t.pairs);
}

/* More pairs than lines: those with a warp or an error, then a count. */
static void test_text_many_pairs(void)
{
	struct cd_tsc_report t;
	sound_x86(&t, 30);
	t.pairs[7] = pair(0, 8, 200, 100, 0);        /* moved during the test */
	t.pairs[9] = pair(0, 10, -5000, -4800, 4900);
	t.pairs[20].err = -EPERM;
	char *text = render(cd_tsc_text, &t);
	CHECK(!strstr(text, "  0-1 "));  /* no warp: left out */
	static const char *const lines[] = {
		"  0-8          1000  none              moved by 100 cyc",
		"  0-10         1000  4900 cyc 4900 ns  -4900 +-101 cyc (-4900 +-101 ns)",
		"  0-21     not run: Operation not permitted",
		"  (28 more pairs, without a warp; all in --json)",
		NULL,
	};
	check_all(text, lines, true);
	free(text);
	free(t.pairs);
}

static void test_json(void)
{
	struct cd_tsc_report t;
	sound_x86(&t, 0);
	char *text = render(cd_tsc_json, &t);
	CHECK(text[0] == '{' && strstr(text, "\n}\n") != NULL);
	static const char *const parts[] = {
		"\"command\": \"tsc\"",
		"\"exit_status\": 0",
		"\"verdict\": \"sound\"",
		"\"summary\": \"sound: all well\"",
		"\"constant_tsc\": true",
		"\"tsc_reliable\": false",
		"\"cpuid_invariant_tsc\": null",
		"\"measured_hz\": 1000000000",  /* all ten digits */
		"\"hz\": 1000002000",
		"\"mode\": \"all-pairs\"",
		"\"offset_cycles\": 20",
		"\"uncertainty_cycles\": 11",
		"\"moved_cycles\": null",
		"\"bound_cycles\": 31",
		"\"vs_monotonic_ppm\": -1.5",
		"\"elapsed_s\": 1.25",
		NULL,
	};
	check_all(text, parts, false);
	free(text);

	/* Not x86: the flags are unknown, not false. */
	t.counter.kind = FC_COUNTER_ARM64_CNTVCT;
	t.pairs[0].err = -EPERM;
	text = render(cd_tsc_json, &t);
	static const char *const not_x86[] = {
		"\"constant_tsc\": null",
		"\"error\": \"Operation not permitted\"",
		"\"kind\": \"arm64-cntvct\"",
		NULL,
	};
	check_all(text, not_x86, false);
	free(text);
	free(t.pairs);
}

int main(void)
{
	test_text();
	test_text_wrapped();
	test_text_many_pairs();
	test_json();
	return unit_done("tscreport");
}
