/* SPDX-License-Identifier: MIT */
/*
 * benchreport.c: the report of `clockdoctor bench` (benchreport.h).
 *
 * Text: for each way a paragraph (cost, the same call forced through the
 * kernel, resolution, backward steps, single-call percentiles and the log2
 * histogram, threads), then a summary table; with several clocksources, the
 * summary table of each and the comparison of them all.  JSON: the same
 * numbers, every one, in the schema of docs/bench.md.
 */
#include "output/benchreport.h"
#include "measure/ways.h"
#include "output/histprint.h"
#include "output/jsonw.h"
#include "output/output.h"

#include "fastclock.h"

#include <math.h>
#include <string.h>

/* The library's call reads the counter ("CPU") unless it fell back to the
 * kernel's clock, whose path the timing then tells. */
static bool on_cpu(const struct cd_bench_way *w)
{
	if (w->spec->kind == CD_CALL_COUNTER)
		return true;
	if (w->spec->kind == CD_CALL_FASTCLOCK)
		return w->spec->clockid == CD_FC_CYCLES ||
		       (w->spec->clockid != CD_FC_COARSE && w->fc_source == FC_SOURCE_COUNTER);
	return false;
}

static const char *path_of(const struct cd_bench_way *w)
{
	if (on_cpu(w))
		return "CPU";
	return w->cost.syscall || cd_way_forced(w->spec) ? "kernel" : "vDSO";
}

/* The kernel's clock a library call stands in for (its forced twin). */
static const char *fc_kernel_clock(const struct cd_clock_spec *spec)
{
	switch (spec->clockid) {
	case CD_FC_REALTIME: return "CLOCK_REALTIME";
	case CD_FC_COARSE: return "CLOCK_MONOTONIC_COARSE";
	default: return "CLOCK_MONOTONIC";
	}
}

/* A duration in the unit that reads best: "0.385 ns", "50 ns", "4 ms". */
static const char *human(double ns, char *buf, size_t len)
{
	if (ns >= 1e9)
		snprintf(buf, len, "%.3g s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, len, "%.3g ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, len, "%.3g us", ns / 1e3);
	else
		snprintf(buf, len, "%.3g ns", ns);
	return buf;
}

static const char *verdict(const struct cd_bench_way *w)
{
	/* An instruction that costs what a system call does is one the kernel
	 * traps and emulates (an arm64 timer erratum's workaround): measured
	 * as such, from the same timing rule as the kernel's clocks. */
	if (w->spec->kind == CD_CALL_COUNTER)
		return w->cost.syscall ? "an instruction, but as dear as a system call: its reads trap into the "
		                         "kernel here" : "no system call (an instruction)";
	if (w->spec->kind == CD_CALL_FASTCLOCK)
		return on_cpu(w) ? "libfastclock on the counter" :
		       w->cost.syscall ? "libfastclock on the kernel's clock, a system call" :
		                         "libfastclock on the kernel's clock (vDSO)";
	if (cd_way_forced(w->spec))
		return "a system call (forced)";
	return w->cost.syscall ? "a system call" : "served by the vDSO";
}

/* Cost, and the evidence for the verdict: the forced system call and the
 * share of system time. */
/* Fewer calls than this in a way's batches is worth a word: the time went
 * before the count was reached (a call that costs tens of microseconds). */
#define FEW_CALLS 1000

static void cost_lines(FILE *out, const struct cd_bench_way *w)
{
	const struct cd_clock_cost *c = &w->cost;
	char sys[32] = "unknown (too little CPU time)";
	if (w->sys_share >= 0)
		snprintf(sys, sizeof sys, "%.0f%%", w->sys_share * 100);
	fprintf(out, "%s: %.1f ns a call, %s\n", w->spec->name, c->ns_per_call, verdict(w));
	if (c->calls < FEW_CALLS)
		fprintf(out, "  only %ld calls in the batches: each is slow here\n", c->calls);
	fprintf(out, "  batches: %.1f-%.1f ns; ", c->ns_min, c->ns_max);
	if (w->spec->kind == CD_CALL_COUNTER)
		fprintf(out, "CLOCK_MONOTONIC through syscall(2): %.1f ns\n  (ratio %.2f)\n", c->syscall_ns,
		        c->ratio);
	else if (w->spec->kind == CD_CALL_FASTCLOCK)
		fprintf(out, "%s through syscall(2): %.1f ns\n  (ratio %.2f)\n", fc_kernel_clock(w->spec),
		        c->syscall_ns, c->ratio);
	else if (!cd_way_forced(w->spec))
		fprintf(out, "the same through syscall(2): %.1f ns (ratio %.2f)\n  system time: %s\n",
		        c->syscall_ns, c->ratio, sys);
	else
		fprintf(out, "system time: %s\n", sys);
}

static void resolution_lines(FILE *out, const struct cd_latency *l)
{
	char a[32], b[32];
	fprintf(out, "  resolution: %s promised (%s), ", l->res_ns >= 0 ? human(l->res_ns, a, sizeof a) : "unknown",
	        l->res_source);
	if (l->step_ns > 0)
		fprintf(out, "smallest step seen %s\n", human(l->step_ns, b, sizeof b));
	else
		fprintf(out, "no step seen\n");
	fprintf(out, "  backward steps: %ld", l->backward);
	if (l->backward)
		fprintf(out, ", the largest %s", human(l->backward_max_ns, a, sizeof a));
	fputc('\n', out);
}

static void way_detail(FILE *out, const struct cd_bench_report *rp, const struct cd_bench_way *w)
{
	const struct cd_clock_cost *c = &w->cost;
	const struct cd_latency *l = &w->lat;
	char a[32];
	if (!c->measured) {
		fprintf(out, "%s: cannot be read here: %s\n\n", w->spec->name,
		        c->err ? strerror(-c->err) : "not measured");
		return;
	}
	cost_lines(out, w);
	resolution_lines(out, l);
	if (l->measured) {
		fprintf(out, "  single calls: %ld, p50 %.0f ns, p99 %.0f, p99.9 %.0f, max %s\n", l->samples,
		        l->p50_ns, l->p99_ns, l->p999_ns, human(l->max_ns, a, sizeof a));
		if (!rp->summary)
			cd_hist_print(out, &l->hist, "nsecs");
	}
	if (w->scal.measured)
		fprintf(out, "  %d threads at once: %.1f ns a call each, x%.2f one thread's cost\n",
		        w->scal.threads, w->scal.ns_per_call, w->scal.ns_per_call / c->ns_per_call);
	else if (w->scal.err)
		fprintf(out, "  threads: could not be run: %s\n", strerror(-w->scal.err));
	fputc('\n', out);
}

static void summary_table(FILE *out, const struct cd_bench_run *r, int threads)
{
	fprintf(out, "  %-32s %8s %6s %7s %5s  %s\n", "way", "ns/call", "ratio", "p99", "back",
	        threads > 1 ? "path    xthr" : "path");
	for (int i = 0; i < r->done; i++) {
		const struct cd_bench_way *w = &r->w[i];
		if (!w->cost.measured) {
			fprintf(out, "  %-32s %s\n", w->spec->name, w->cost.err ? strerror(-w->cost.err) : "-");
			continue;
		}
		fprintf(out, "  %-32s %8.1f %6.2f %7.0f %5ld  ", w->spec->name, w->cost.ns_per_call, w->cost.ratio,
		        w->lat.p99_ns, w->lat.backward);
		if (w->scal.measured)
			fprintf(out, "%-6s %5.2f\n", path_of(w), w->scal.ns_per_call / w->cost.ns_per_call);
		else
			fprintf(out, "%s\n", path_of(w));
	}
	fprintf(out, "  (ns/call: median batch; ratio: to the same call through syscall(2);\n"
	             "  p99: of single calls, ns; back: backward steps%s)\n",
	        threads > 1 ? ";\n  xthr: a call's cost with -t threads, over its cost with one" : "");
}

/* A reference's name without "CLOCK_", to keep the table narrow. */
static const char *short_name(const char *name)
{
	return strncmp(name, "CLOCK_", 6) == 0 ? name + 6 : name;
}

static void fc_ratio_table(FILE *out, const struct cd_bench_run *r, bool targets, const char *cpu)
{
	if (r->nfc == 0)
		return;
	/* a ratio is the CPU's as much as the library's: each vendor's
	 * counter read and fences cost differently */
	fprintf(out, "\nlibfastclock against its references (interleaved batches, median of\n"
	             "%d rounds' ratios) on %s:\n", CD_FC_RATIO_ROUNDS, cpu);
	fprintf(out, "  %-21s %-16s %6s %6s %5s%s\n", "call", "reference", "ns", "ref ns", "ratio",
	        targets ? "  target" : "");
	for (int i = 0; i < r->nfc; i++) {
		const struct cd_fc_ratio *f = &r->fc[i];
		if (!f->measured) {
			fprintf(out, "  %-21s %-16s %s\n", f->way->name, short_name(f->ref->name),
			        f->err ? strerror(-f->err) : "not measured");
			continue;
		}
		fprintf(out, "  %-21s %-16s %6.1f %6.1f %5.2f", f->way->name, short_name(f->ref->name), f->way_ns,
		        f->ref_ns, f->ratio);
		if (targets && f->target > 0)
			fprintf(out, "  <= %.1f %s", f->target, cd_fc_ratio_met(f) ? "met" : "MISSED");
		if (f->rounds < CD_FC_RATIO_ROUNDS)
			fprintf(out, "  (%d rounds in the time)", f->rounds);
		fputc('\n', out);
	}
}

/* For each way, each clocksource's cost as a multiple of the fastest. */
/* The cheapest cost of way i over every clocksource measured: the "x fastest"
 * reference of the comparison. */
static double best_ns(const struct cd_bench_report *rp, int i)
{
	double best = 0;
	for (int k = 0; k < rp->nruns; k++) {
		const struct cd_bench_way *w = &rp->runs[k].w[i];
		if (i < rp->runs[k].done && w->cost.measured && (best == 0 || w->cost.ns_per_call < best))
			best = w->cost.ns_per_call;
	}
	return best;
}

static void comparison_table(FILE *out, const struct cd_bench_report *rp)
{
	const struct cd_bench_run *r0 = &rp->runs[0];
	fprintf(out, "Clocksources compared (measured in this run, one after the other):\n");
	fprintf(out, "  %-24s %-16s %8s %9s %5s  %s\n", "way", "clocksource", "ns/call", "x fastest", "sys%", "path");
	for (int i = 0; i < r0->n; i++) {
		double best = best_ns(rp, i);
		for (int k = 0; k < rp->nruns; k++) {
			const struct cd_bench_way *w = &rp->runs[k].w[i];
			if (i >= rp->runs[k].done || !w->cost.measured)
				continue;
			char sys[16] = "-";
			if (w->sys_share >= 0)
				snprintf(sys, sizeof sys, "%.0f", w->sys_share * 100);
			fprintf(out, "  %-24s %-16s %8.1f %9.1f %5s  %s\n", w->spec->name, rp->cs_name[k],
			        w->cost.ns_per_call, w->cost.ns_per_call / best, sys, path_of(w));
		}
	}
}

void cd_bench_text(FILE *out, const struct cd_bench_report *rp)
{
	const struct cd_timer *t = &rp->timer;
	char a[32];
	fprintf(out, "CPU: %s\n", rp->cpu);
	fprintf(out, "%d CPUs; single calls timed with %s", rp->cpus, t->name);
	if (t->counter)
		fprintf(out, " at %.2f MHz (measured against\nCLOCK_MONOTONIC_RAW)", t->hz / 1e6);
	else if (t->why_not)
		fprintf(out, " (%s)", t->why_not);
	fprintf(out, "; the timing's own %.1f ns is subtracted from each;\n", t->overhead_ns);
	fprintf(out, "the timer moves in steps of %s.\n", human(t->step_ns, a, sizeof a));
	if (rp->threads > rp->cpus)
		fprintf(out, "%d threads on %d CPUs take turns: a call's cost is counted in each\n"
		             "thread's own CPU time, so waiting for a CPU does not count.\n",
		        rp->threads, rp->cpus);
	fputc('\n', out);
	for (int k = 0; k < rp->nruns; k++) {
		const struct cd_bench_run *r = &rp->runs[k];
		if (rp->switched || rp->summary || r->done == 0) {
			fprintf(out, "Clocksource %s%s: %d of %d ways in %.1f s%s\n", rp->cs_name[k],
			        rp->switched && strcmp(rp->cs_name[k], rp->original) != 0 ? " (switched)" : "", r->done,
			        r->n, r->elapsed_s, r->interrupted ? ", interrupted" : "");
		} else {
			fprintf(out, "Clocksource %s:\n\n", rp->cs_name[k]);
			for (int i = 0; i < r->done; i++)
				way_detail(out, rp, &r->w[i]);
			fprintf(out, "Summary (clocksource %s, %d of %d ways in %.1f s%s):\n", rp->cs_name[k], r->done,
			        r->n, r->elapsed_s, r->interrupted ? ", interrupted" : "");
		}
		summary_table(out, r, rp->threads);
		fc_ratio_table(out, r, rp->targets, rp->cpu);
		fputc('\n', out);
	}
	if (rp->switched && rp->nruns > 0)
		comparison_table(out, rp);
	if (rp->switched && rp->cs_error[0])
		fprintf(out, "%s\n", rp->cs_error);
	if (rp->switched && rp->restored)
		fprintf(out, "Switched back to clocksource %s.\n", rp->original);
	for (int k = 0; k < rp->nruns; k++)
		if (cd_bench_backward(&rp->runs[k]))
			fprintf(out, "WARNING: a clock went backwards on clocksource %s (see 'back')\n", rp->cs_name[k]);
}

/* ---- JSON ---- */

static void json_way(struct cd_jsonw *j, const struct cd_bench_way *w)
{
	const struct cd_clock_cost *c = &w->cost;
	const struct cd_latency *l = &w->lat;
	cd_jsonw_begin_object(j, NULL);
	cd_jsonw_string(j, "name", w->spec->name);
	cd_jsonw_string(j, "call", cd_way_call(w->spec));
	cd_jsonw_bool(j, "forced_syscall", cd_way_forced(w->spec));
	cd_jsonw_bool(j, "measured", c->measured);
	if (c->err)
		cd_jsonw_string(j, "error", strerror(-c->err));
	else
		cd_jsonw_null(j, "error");
	if (!c->measured) {
		cd_jsonw_end_object(j);
		return;
	}
	cd_jsonw_number(j, "ns_per_call", c->ns_per_call);
	cd_jsonw_number(j, "ns_min", c->ns_min);
	cd_jsonw_number(j, "ns_max", c->ns_max);
	cd_jsonw_number(j, "syscall_ns", c->syscall_ns);
	cd_jsonw_number(j, "ratio", c->ratio);
	cd_jsonw_number(j, "sys_share", w->sys_share >= 0 ? w->sys_share : NAN);
	/* syscall(2) enters the kernel, whatever its timing says */
	cd_jsonw_bool(j, "syscall", c->syscall || cd_way_forced(w->spec));
	cd_jsonw_string(j, "path", path_of(w));
	cd_jsonw_string(j, "verdict_from", cd_way_forced(w->spec) ? "forced" : c->exact ? "seccomp" : "timing");
	cd_jsonw_int(j, "calls", c->calls);
	if (w->spec->kind == CD_CALL_COUNTER)
		cd_jsonw_bool(j, "trapped", c->syscall);
	if (c->exact)
		cd_jsonw_int(j, "kernel_calls", c->kernel_calls);
	cd_jsonw_begin_object(j, "latency");
	cd_jsonw_int(j, "samples", l->samples);
	cd_jsonw_int(j, "timer_glitches", l->glitches);
	cd_jsonw_numbers(j, (const struct cd_jsonw_num[]){
		{ "min_ns", l->min_ns }, { "mean_ns", l->mean_ns }, { "p50_ns", l->p50_ns },
		{ "p99_ns", l->p99_ns }, { "p999_ns", l->p999_ns }, { "max_ns", l->max_ns }, { NULL, 0 } });
	cd_jsonw_begin_array(j, "histogram");
	for (int b = 1; b < CD_HIST_BUCKETS; b++) {
		if (!l->hist.count[b])
			continue;
		uint64_t lo, hi;
		cd_hist_bounds(b, &lo, &hi);
		cd_jsonw_begin_object(j, NULL);
		cd_jsonw_number(j, "low_ns", (double)lo);
		cd_jsonw_number(j, "high_ns", (double)hi);
		cd_jsonw_int(j, "count", (long long)l->hist.count[b]);
		cd_jsonw_end_object(j);
	}
	cd_jsonw_end_array(j);
	cd_jsonw_end_object(j);
	cd_jsonw_begin_object(j, "resolution");
	cd_jsonw_string(j, "source", l->res_source);
	cd_jsonw_number(j, "promised_ns", l->res_ns >= 0 ? l->res_ns : NAN);
	cd_jsonw_number(j, "smallest_step_ns", l->step_ns > 0 ? l->step_ns : NAN);
	cd_jsonw_end_object(j);
	cd_jsonw_begin_object(j, "backward");
	cd_jsonw_int(j, "count", l->backward);
	cd_jsonw_number(j, "largest_ns", l->backward_max_ns);
	cd_jsonw_end_object(j);
	if (w->scal.measured) {
		cd_jsonw_begin_object(j, "threads");
		cd_jsonw_int(j, "n", w->scal.threads);
		cd_jsonw_number(j, "ns_per_call", w->scal.ns_per_call);
		cd_jsonw_number(j, "ns_min", w->scal.ns_min);
		cd_jsonw_number(j, "ns_max", w->scal.ns_max);
		cd_jsonw_number(j, "scaling", w->scal.ns_per_call / c->ns_per_call);
		cd_jsonw_number(j, "calls_per_s", w->scal.calls_per_s);
		cd_jsonw_end_object(j);
	} else {
		cd_jsonw_null(j, "threads");
	}
	cd_jsonw_end_object(j);
}

static void json_fc_ratios(struct cd_jsonw *j, const struct cd_bench_run *r, bool targets)
{
	cd_jsonw_begin_array(j, "library");
	for (int i = 0; i < r->nfc; i++) {
		const struct cd_fc_ratio *f = &r->fc[i];
		cd_jsonw_begin_object(j, NULL);
		cd_jsonw_string(j, "name", f->way->name);
		cd_jsonw_string(j, "reference", f->ref->name);
		cd_jsonw_bool(j, "measured", f->measured);
		cd_jsonw_string(j, "error", f->err ? strerror(-f->err) : NULL);
		cd_jsonw_int(j, "rounds", f->rounds);
		cd_jsonw_number(j, "ratio", f->measured ? f->ratio : NAN);
		cd_jsonw_number(j, "ratio_min", f->measured ? f->ratio_min : NAN);
		cd_jsonw_number(j, "ratio_max", f->measured ? f->ratio_max : NAN);
		cd_jsonw_number(j, "ns_per_call", f->measured ? f->way_ns : NAN);
		cd_jsonw_number(j, "reference_ns_per_call", f->measured ? f->ref_ns : NAN);
		if (targets) {
			cd_jsonw_number(j, "target", f->target > 0 ? f->target : NAN);
			if (f->target > 0 && f->measured)
				cd_jsonw_bool(j, "met", cd_fc_ratio_met(f));
			else
				cd_jsonw_null(j, "met");
		}
		cd_jsonw_end_object(j);
	}
	cd_jsonw_end_array(j);
}

static void json_comparison(struct cd_jsonw *j, const struct cd_bench_report *rp)
{
	cd_jsonw_begin_array(j, "comparison");
	for (int i = 0; rp->nruns > 0 && i < rp->runs[0].n; i++) {
		double best = best_ns(rp, i);
		for (int k = 0; k < rp->nruns; k++) {
			const struct cd_bench_way *w = &rp->runs[k].w[i];
			if (i >= rp->runs[k].done || !w->cost.measured)
				continue;
			cd_jsonw_begin_object(j, NULL);
			cd_jsonw_string(j, "way", w->spec->name);
			cd_jsonw_string(j, "clocksource", rp->cs_name[k]);
			cd_jsonw_number(j, "ns_per_call", w->cost.ns_per_call);
			cd_jsonw_number(j, "x_fastest", w->cost.ns_per_call / best);
			cd_jsonw_number(j, "sys_share", w->sys_share >= 0 ? w->sys_share : NAN);
			cd_jsonw_bool(j, "syscall", w->cost.syscall);
			cd_jsonw_end_object(j);
		}
	}
	cd_jsonw_end_array(j);
}

void cd_bench_json(FILE *out, const struct cd_bench_report *rp)
{
	struct cd_jsonw j;
	const struct cd_timer *t = &rp->timer;
	long back = 0;
	cd_jsonw_open(&j, out, 2, "bench", rp->exit_status);
	cd_jsonw_number(&j, "duration_s", rp->calls > 0 ? NAN : rp->duration_s);
	if (rp->calls > 0)
		cd_jsonw_int(&j, "calls", rp->calls);
	else
		cd_jsonw_null(&j, "calls");
	cd_jsonw_int(&j, "threads", rp->threads);
	cd_jsonw_int(&j, "cpus", rp->cpus);
	cd_jsonw_string(&j, "cpu", rp->cpu);
	cd_jsonw_begin_object(&j, "timer");
	cd_jsonw_string(&j, "name", t->name);
	cd_jsonw_bool(&j, "counter", t->counter);
	cd_jsonw_number(&j, "counter_hz", t->hz > 0 ? t->hz : NAN);
	cd_jsonw_number(&j, "counter_hz_err_ppm", t->hz > 0 ? t->hz_err_ppm : NAN);
	cd_jsonw_string(&j, "calibrated_against", "CLOCK_MONOTONIC_RAW");
	cd_jsonw_number(&j, "overhead_ns", t->overhead_ns);
	cd_jsonw_string(&j, "why_not_counter", t->why_not);
	cd_jsonw_end_object(&j);
	bool interrupted = false;
	cd_jsonw_begin_array(&j, "runs");
	for (int k = 0; k < rp->nruns; k++) {
		const struct cd_bench_run *r = &rp->runs[k];
		back += cd_bench_backward(r);
		interrupted |= r->interrupted;
		cd_jsonw_begin_object(&j, NULL);
		cd_jsonw_string(&j, "clocksource", rp->cs_name[k]);
		cd_jsonw_bool(&j, "switched", rp->switched && strcmp(rp->cs_name[k], rp->original) != 0);
		cd_jsonw_number(&j, "elapsed_s", r->elapsed_s);
		cd_jsonw_number(&j, "timer_overhead_ns", r->timer.overhead_ns);
		cd_jsonw_bool(&j, "interrupted", r->interrupted);
		cd_jsonw_begin_array(&j, "ways");
		for (int i = 0; i < r->done; i++)
			json_way(&j, &r->w[i]);
		cd_jsonw_end_array(&j);
		json_fc_ratios(&j, r, rp->targets);
		cd_jsonw_end_object(&j);
	}
	cd_jsonw_end_array(&j);
	cd_jsonw_bool(&j, "interrupted", interrupted);
	cd_jsonw_int(&j, "backward_steps", back);
	if (rp->switched) {
		cd_jsonw_begin_object(&j, "clocksources");
		cd_jsonw_string(&j, "original", rp->original);
		cd_jsonw_bool(&j, "restored", rp->restored);
		cd_jsonw_string(&j, "error", rp->cs_error[0] ? rp->cs_error : NULL);
		json_comparison(&j, rp);
		cd_jsonw_end_object(&j);
	} else {
		cd_jsonw_null(&j, "clocksources");
	}
	cd_jsonw_end_object(&j);
	fputc('\n', out);
}
