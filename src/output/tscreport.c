/* SPDX-License-Identifier: MIT */
/*
 * tscreport.c: the report of `clockdoctor tsc` (tscreport.h).
 *
 * Text: the summary, then the counter and its flags, one row a frequency
 * source with its disagreement, the warp test's pairs (at most 16 lines;
 * the notable ones first when there are more), the drift, each test with
 * its detail and the kernel's notes, and the verdict last.  JSON: every
 * number and every pair, in the schema of docs/tsc.md.
 */
#include "output/tscreport.h"
#include "diagnose/tscjudge.h"
#include "output/jsonw.h"
#include "output/wrap.h"
#include "probe/probe.h"

#include <math.h>
#include <string.h>

/* Text: at most this many pair lines; JSON has them all. */
#define MAX_PAIR_LINES 16

/* ---- text ---- */

static void text_facts(FILE *out, const struct cd_facts *f, const struct cd_tsc_report *t)
{
	char line[400];
	const char *hv = f->hv.display[0] ? f->hv.display : cd_hv_display(f->hv.kind);
	bool guest = f->hv.kind != CD_HV_NONE && f->hv.kind != CD_HV_UNKNOWN;
	snprintf(line, sizeof line, "%s (%s), %s%s, %d CPU%s online, %d allowed, clocksource %s",
	         t->counter.name ? t->counter.name : "none", fc_counter_kind_name(t->counter.kind), hv,
	         guest ? " guest" : "", t->cpus_online, t->cpus_online == 1 ? "" : "s", t->cpus_allowed,
	         f->cs.have_current ? f->cs.current : "unknown");
	cd_wrap_with(out, line, &(struct cd_wrap_opts){ .lead = "  counter: ", .indent = 11 });
	const struct fc_read_cost *c = &t->read_cost;
	if (c->measured) {
		snprintf(line, sizeof line, "%.0f ns a read, the kernel's clock %.0f ns, a system call %.0f ns%s",
		         c->counter_ns, c->kernel_ns, c->syscall_ns,
		         fc_read_cost_counter_cheaper(c) ? "" : ": no cheaper than the kernel's clock, its reads trap");
		cd_wrap_with(out, line, &(struct cd_wrap_opts){ .lead = "  read cost: ", .indent = 13 });
	}
	if (t->counter.kind != FC_COUNTER_X86_TSC)
		return;
	size_t n = 0;
	line[0] = 0;
	for (int i = 0; i < CD_CPU_N_FLAGS; i++)
		if (f->cpu.flags_all & cd_cpu_flag_names[i].bit)
			n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", n ? " " : "", cd_cpu_flag_names[i].name);
	if (!f->cpu.have_cpuinfo)
		snprintf(line, sizeof line, "unknown (no /proc/cpuinfo)");
	if (f->cpuid.has_invariant && n < sizeof line)
		snprintf(line + n, sizeof line - n, "; CPUID invariant TSC: %s", f->cpuid.invariant_tsc ? "yes" : "no");
	cd_wrap_with(out, line, &(struct cd_wrap_opts){ .lead = "  flags: ", .indent = 9 });
}

/* One row a source, its note wrapped in the last column. */
static void text_sources(FILE *out, const struct cd_tsc_report *t)
{
	fprintf(out, "\nfrequency                     MHz  vs measured\n");
	for (int i = 0; i < CD_N_SRC; i++) {
		const struct cd_tsc_freq *s = &t->src[i];
		bool x86_only = i >= CD_SRC_KLOG_REFINED && i <= CD_SRC_HV_LEAF;
		if ((i == CD_SRC_CNTFRQ && t->counter.kind != FC_COUNTER_ARM64_CNTVCT) ||
		    (x86_only && t->counter.kind != FC_COUNTER_X86_TSC))
			continue;
		char mhz[24] = "-", diff[24] = "", head[80];
		if (s->have)
			snprintf(mhz, sizeof mhz, "%.6f", s->hz / 1e6);
		if (s->have_diff && fabs(s->diff_ppm) < 10000)
			snprintf(diff, sizeof diff, "%+.1f ppm", s->diff_ppm);
		else if (s->have_diff)
			snprintf(diff, sizeof diff, "%+.1f %%", s->diff_ppm / 1e4);
		snprintf(head, sizeof head, "  %-18s %13s %12s  ", s->label, mhz, diff);
		cd_wrap_with(out, s->note, &(struct cd_wrap_opts){ .lead = head, .indent = (int)strlen(head) });
	}
}

static void text_pair(FILE *out, const struct cd_tsc_report *t, const struct cd_tsc_pair *p)
{
	char cpus[24], back[48] = "none", off[80] = "";
	snprintf(cpus, sizeof cpus, "%d-%d", p->cpu_a, p->cpu_b);
	if (p->err) {
		fprintf(out, "  %-8s not run: %s\n", cpus, strerror(-p->err));
		return;
	}
	uint64_t b = fc_sync_max_back(&p->r.acc), by;
	int64_t mid;
	uint64_t half;
	if (b)
		snprintf(back, sizeof back, "%llu cyc %.0f ns", (unsigned long long)b, cd_tsc_cycles_ns(t, (double)b));
	if (fc_sync_offset(&p->r.acc, &mid, &half))
		snprintf(off, sizeof off, "%+lld +-%llu cyc (%+.0f +-%.0f ns)", (long long)mid,
		         (unsigned long long)half, cd_tsc_cycles_ns(t, (double)mid), cd_tsc_cycles_ns(t, (double)half));
	else if (fc_sync_moved(&p->r.acc, &by))
		snprintf(off, sizeof off, "moved by %llu cyc", (unsigned long long)by);
	fprintf(out, "  %-8s %8llu  %-17s %s\n", cpus, (unsigned long long)p->r.rounds, back, off);
}

static bool pair_notable(const struct cd_tsc_pair *p)
{
	uint64_t by;
	return p->err || fc_sync_max_back(&p->r.acc) || fc_sync_moved(&p->r.acc, &by);
}

static void text_sync(FILE *out, const struct cd_tsc_report *t)
{
	if (t->n_pairs == 0)
		return;
	fprintf(out, "\ncross-CPU warp test: %s%s, %.0f ms each\n",
	        t->quick ? "each CPU against the first" : "every pair of CPUs",
	        t->sync_truncated ? " (too many CPUs for every pair)" : "", t->pair_s * 1e3);
	fprintf(out, "  CPUs       rounds  backward step     offset of 2nd CPU from 1st\n");
	int shown = 0;
	bool all = t->n_pairs <= MAX_PAIR_LINES;
	for (int i = 0; i < t->n_pairs && shown < MAX_PAIR_LINES; i++)
		if (all || pair_notable(&t->pairs[i])) {
			text_pair(out, t, &t->pairs[i]);
			shown++;
		}
	if (shown < t->n_pairs)
		fprintf(out, "  (%d more pairs, without a warp; all in --json)\n", t->n_pairs - shown);
}

static void text_drift(FILE *out, const struct cd_tsc_report *t)
{
	if (!t->have_drift)
		return;
	fprintf(out, "\ndrift of a TSC clock at %.3f MHz (%s), over %.2f s\n", t->ref_hz / 1e6, t->ref_name,
	        t->raw.interval_s);
	fprintf(out, "  vs CLOCK_MONOTONIC_RAW  %+9.2f ppm +-%.2g\n", t->drift_raw_ppm, t->raw.err_ppm);
	fprintf(out, "  vs CLOCK_MONOTONIC      %+9.2f ppm +-%.2g\n", t->drift_mono_ppm, t->mono.err_ppm);
	if (t->freq_self_referenced)
		cd_wrap_with(out, "(the kernel's clocks are read from this counter here, through the "
		             "clocksource: this checks the kernel's conversion, not the counter against "
		             "another oscillator)", &(struct cd_wrap_opts){ .lead = "  ", .indent = 3 });
}

void cd_tsc_text(FILE *out, const struct cd_facts *f, const struct cd_tsc_report *t)
{
	cd_wrap_with(out, t->summary, &(struct cd_wrap_opts){ .lead = "TSC ", .indent = 4 });
	if (t->interrupted)
		fprintf(out, "  interrupted after %.1f s: what follows was measured until then\n", t->elapsed_s);
	text_facts(out, f, t);
	text_sources(out, t);
	text_sync(out, t);
	text_drift(out, t);
	fprintf(out, "\ntests\n");
	for (int i = 0; i < CD_TSC_N_TESTS; i++) {
		char head[40];
		snprintf(head, sizeof head, "  %-9s %s: ", cd_tsc_status_name(t->test[i].status),
		         cd_tsc_test_name((enum cd_tsc_test_id)i));
		cd_wrap_with(out, t->test[i].detail, &(struct cd_wrap_opts){ .lead = head, .indent = 12 });
	}
	for (int i = 0; i < t->n_kernel_notes; i++)
		cd_wrap_with(out, t->kernel_notes[i], &(struct cd_wrap_opts){ .lead = i ? "          " : "  kernel: ",
		                                                         .indent = 10 });
	fprintf(out, "\nverdict: %s (exit status %d)\n", cd_tsc_verdict_name(t->verdict), (int)t->verdict);
}

/* ---- JSON ---- */

static void json_num_or_null(struct cd_jsonw *w, const char *key, bool have, double v)
{
	if (have)
		cd_jsonw_number(w, key, v);
	else
		cd_jsonw_null(w, key);
}

/* Integers for Hz and cycles: the writer's numbers keep 6 digits, and a
 * frequency needs ten. */
static void json_int_or_null(struct cd_jsonw *w, const char *key, bool have, double v)
{
	if (have && isfinite(v))
		cd_jsonw_int(w, key, llround(v));
	else
		cd_jsonw_null(w, key);
}

static void json_flags(struct cd_jsonw *w, const struct cd_facts *f, const struct cd_tsc_report *t)
{
	cd_jsonw_begin_object(w, "flags");
	for (int i = 0; i < CD_CPU_N_FLAGS; i++)
		if (f->cpu.have_cpuinfo && t->counter.kind == FC_COUNTER_X86_TSC)
			cd_jsonw_bool(w, cd_cpu_flag_names[i].name, f->cpu.flags_all & cd_cpu_flag_names[i].bit);
		else
			cd_jsonw_null(w, cd_cpu_flag_names[i].name);
	if (f->cpuid.has_invariant)
		cd_jsonw_bool(w, "cpuid_invariant_tsc", f->cpuid.invariant_tsc);
	else
		cd_jsonw_null(w, "cpuid_invariant_tsc");
	cd_jsonw_string(w, "hypervisor_signature", f->cpuid.hv_signature[0] ? f->cpuid.hv_signature : NULL);
	json_int_or_null(w, "hypervisor_tsc_khz", f->cpuid.hv_tsc_khz != 0, f->cpuid.hv_tsc_khz);
	cd_jsonw_end_object(w);
}

static void json_frequency(struct cd_jsonw *w, const struct cd_tsc_report *t)
{
	const struct cd_tsc_freq *m = &t->src[CD_SRC_MEASURED];
	cd_jsonw_begin_object(w, "frequency");
	json_int_or_null(w, "measured_hz", m->have, m->hz);
	json_num_or_null(w, "error_ppm", m->have, m->precision_ppm);
	json_num_or_null(w, "interval_s", m->have, t->raw.interval_s);
	cd_jsonw_begin_array(w, "sources");
	for (int i = 0; i < CD_N_SRC; i++) {
		const struct cd_tsc_freq *s = &t->src[i];
		cd_jsonw_begin_object(w, NULL);
		cd_jsonw_string(w, "source", s->name);
		json_int_or_null(w, "hz", s->have, s->hz);
		json_num_or_null(w, "diff_ppm", s->have_diff, s->diff_ppm);
		json_num_or_null(w, "precision_ppm", s->have, s->precision_ppm);
		cd_jsonw_string(w, "note", s->note);
		cd_jsonw_end_object(w);
	}
	cd_jsonw_end_array(w);
	cd_jsonw_end_object(w);
}

static void json_pair(struct cd_jsonw *w, const struct cd_tsc_report *t, const struct cd_tsc_pair *p)
{
	cd_jsonw_begin_object(w, NULL);
	cd_jsonw_int(w, "cpu_a", p->cpu_a);
	cd_jsonw_int(w, "cpu_b", p->cpu_b);
	if (p->err) {
		cd_jsonw_string(w, "error", strerror(-p->err));
		cd_jsonw_end_object(w);
		return;
	}
	cd_jsonw_null(w, "error");
	const struct fc_sync_acc *a = &p->r.acc;
	uint64_t back = fc_sync_max_back(a), by = 0;
	int64_t mid = 0;
	uint64_t half = 0;
	bool off = fc_sync_offset(a, &mid, &half);
	cd_jsonw_int(w, "rounds", (long long)p->r.rounds);
	cd_jsonw_number(w, "seconds", p->r.elapsed_s);
	cd_jsonw_bool(w, "cut_short", p->r.cut_short);
	cd_jsonw_int(w, "backward_steps", (long long)a->back_steps);
	cd_jsonw_int(w, "max_backward_cycles", (long long)back);
	cd_jsonw_number(w, "max_backward_ns", cd_tsc_cycles_ns(t, (double)back));
	json_int_or_null(w, "offset_min_cycles", a->have_lo, (double)a->off_lo);
	json_int_or_null(w, "offset_max_cycles", a->have_hi, (double)a->off_hi);
	json_int_or_null(w, "offset_cycles", off, (double)mid);
	json_int_or_null(w, "uncertainty_cycles", off, (double)half);
	json_num_or_null(w, "offset_ns", off, cd_tsc_cycles_ns(t, (double)mid));
	json_num_or_null(w, "uncertainty_ns", off, cd_tsc_cycles_ns(t, (double)half));
	json_int_or_null(w, "moved_cycles", fc_sync_moved(a, &by), (double)by);
	cd_jsonw_end_object(w);
}

static void json_sync(struct cd_jsonw *w, const struct cd_tsc_report *t)
{
	cd_jsonw_begin_object(w, "sync");
	cd_jsonw_string(w, "status", cd_tsc_status_name(t->test[CD_TSC_T_SYNC].status));
	cd_jsonw_string(w, "mode", t->quick ? "quick" : "all-pairs");
	cd_jsonw_bool(w, "too_many_cpus_for_all_pairs", t->sync_truncated);
	cd_jsonw_int(w, "cpus_online", t->cpus_online);
	cd_jsonw_int(w, "cpus_allowed", t->cpus_allowed);
	json_num_or_null(w, "reference_cpu", t->ref_cpu >= 0, t->ref_cpu);
	cd_jsonw_number(w, "pair_seconds", t->pair_s);
	json_int_or_null(w, "max_backward_cycles", t->pairs_run > 0, (double)t->worst_back);
	json_int_or_null(w, "bound_cycles", t->have_bound, (double)t->bound_cycles);
	json_num_or_null(w, "bound_ns", t->have_bound, cd_tsc_cycles_ns(t, (double)t->bound_cycles));
	cd_jsonw_begin_array(w, "pairs");
	for (int i = 0; i < t->n_pairs; i++)
		json_pair(w, t, &t->pairs[i]);
	cd_jsonw_end_array(w);
	cd_jsonw_end_object(w);
}

void cd_tsc_json(FILE *out, const struct cd_facts *f, const struct cd_tsc_report *t)
{
	struct cd_jsonw w;
	cd_jsonw_open(&w, out, 2, "tsc", (int)t->verdict);
	cd_jsonw_string(&w, "verdict", cd_tsc_verdict_name(t->verdict));
	cd_jsonw_string(&w, "summary", t->summary);
	cd_jsonw_bool(&w, "frequency_self_referenced", t->freq_self_referenced);
	cd_jsonw_begin_array(&w, "reasons");
	for (int i = 0; i < t->n_reasons; i++)
		cd_jsonw_string(&w, NULL, t->reasons[i]);
	cd_jsonw_end_array(&w);
	cd_jsonw_begin_object(&w, "counter");
	cd_jsonw_string(&w, "name", t->counter.name);
	cd_jsonw_string(&w, "kind", fc_counter_kind_name(t->counter.kind));
	cd_jsonw_bool(&w, "readable", t->counter.usable == 0);
	cd_jsonw_string(&w, "why_not", t->counter.usable ? strerror(-t->counter.usable) : NULL);
	cd_jsonw_string(&w, "arch", f->cpu.arch[0] ? f->cpu.arch : NULL);
	cd_jsonw_string(&w, "hypervisor", cd_hv_name(f->hv.kind));
	cd_jsonw_string(&w, "clocksource", f->cs.have_current ? f->cs.current : NULL);
	/* one read of the counter and of the kernel's clock, as libfastclock
	 * measures them at its start (ns; null where not measured) */
	json_num_or_null(&w, "read_ns", t->read_cost.measured, t->read_cost.counter_ns);
	json_num_or_null(&w, "kernel_clock_ns", t->read_cost.measured, t->read_cost.kernel_ns);
	json_num_or_null(&w, "syscall_ns", t->read_cost.measured, t->read_cost.syscall_ns);
	cd_jsonw_bool(&w, "read_not_cheaper", t->read_cost.measured && !fc_read_cost_counter_cheaper(&t->read_cost));
	cd_jsonw_end_object(&w);
	json_flags(&w, f, t);
	json_frequency(&w, t);
	json_sync(&w, t);
	cd_jsonw_begin_object(&w, "drift");
	json_int_or_null(&w, "reference_hz", t->have_drift, t->ref_hz);
	cd_jsonw_string(&w, "reference_source", t->have_drift ? t->ref_name : NULL);
	json_num_or_null(&w, "vs_monotonic_raw_ppm", t->have_drift, t->drift_raw_ppm);
	json_num_or_null(&w, "vs_monotonic_ppm", t->have_drift, t->drift_mono_ppm);
	json_num_or_null(&w, "error_ppm", t->have_drift, t->drift_err_ppm);
	cd_jsonw_end_object(&w);
	cd_jsonw_begin_array(&w, "tests");
	for (int i = 0; i < CD_TSC_N_TESTS; i++) {
		cd_jsonw_begin_object(&w, NULL);
		cd_jsonw_string(&w, "name", cd_tsc_test_name((enum cd_tsc_test_id)i));
		cd_jsonw_string(&w, "status", cd_tsc_status_name(t->test[i].status));
		cd_jsonw_string(&w, "detail", t->test[i].detail);
		cd_jsonw_end_object(&w);
	}
	cd_jsonw_end_array(&w);
	cd_jsonw_begin_array(&w, "kernel_notes");
	for (int i = 0; i < t->n_kernel_notes; i++)
		cd_jsonw_string(&w, NULL, t->kernel_notes[i]);
	cd_jsonw_end_array(&w);
	cd_jsonw_number(&w, "elapsed_s", t->elapsed_s);
	cd_jsonw_bool(&w, "interrupted", t->interrupted);
	cd_jsonw_end_object(&w);
	fputc('\n', out);
}
