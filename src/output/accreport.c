/* SPDX-License-Identifier: MIT */
/*
 * accreport.c: the report of `clockdoctor accuracy` (accreport.h).
 *
 * Text: the verdict, what the library says of itself (fc_info), then one
 * column per clock with the figures a hand-made rdtsc clock is judged by (max
 * and mean diff, readings off by more than 1 and 10 us) and the rest, and
 * those figures again on one line in the words such tests print them.  JSON:
 * every number, in the schema of docs/accuracy.md.
 */
#include "output/accreport.h"
#include "measure/histogram.h"
#include "output/jsonw.h"
#include "output/output.h"
#include "output/wrap.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define WIDTH 78

/* A kernel read dearer than this is not the vDSO's: the brackets are then as
 * wide as a system call, and the errors known only to that. */
#define SLOW_READ_NS 200.0

static uint64_t backward_total(const struct cd_acc_result *r)
{
	return r->mono.backward_thread + r->mono.backward_cross + r->real.backward_thread + r->real.backward_cross;
}

static void verdict(FILE *out, const struct cd_acc_result *r)
{
	uint64_t over = r->mono.st.over_bound + r->real.st.over_bound, back = backward_total(r);
	if (r->err) {
		fprintf(out, "ERROR: the comparison could not run: %s\n", strerror(-r->err));
		return;
	}
	if (over == 0 && back == 0) {
		fprintf(out, "OK: libfastclock stayed within its own error bound and never went\n"
		             "backwards (%.1f s, %d thread%s%s)\n",
		        r->elapsed_s, r->threads, r->threads == 1 ? "" : "s", r->interrupted ? ", interrupted" : "");
		return;
	}
	if (over)
		fprintf(out, "FAIL: libfastclock was outside its own error bound %" PRIu64 " time%s\n", over,
		        over == 1 ? "" : "s");
	if (back)
		fprintf(out, "FAIL: libfastclock went backwards %" PRIu64 " time%s\n", back, back == 1 ? "" : "s");
}

static void library_lines(FILE *out, const struct cd_acc_report *rp)
{
	const struct fc_info *i = rp->info;
	const struct cd_acc_result *r = rp->r;
	char line[600];
	if (!rp->info_ok) {
		fprintf(out, "  fc_info() failed: the library says nothing of itself\n");
		return;
	}
	snprintf(line, sizeof line, "source: %s (%s): %s", fc_source_name(i->source), fc_reason_name(i->reason),
	         i->reason_text);
	cd_wrap(out, line, 2, WIDTH);
	if (i->source == FC_SOURCE_COUNTER)
		snprintf(line, sizeof line, "counter: %s at %.6f MHz +-%.3g ppm (frequency from: %s); kernel "
		         "clocksource %s",
		         i->counter, i->counter_hz / 1e6, i->freq_err_ppm, i->freq_from,
		         i->kernel_clocksource[0] ? i->kernel_clocksource : "unknown");
	else
		snprintf(line, sizeof line, "counter: %s, not in use; kernel clocksource %s", i->counter,
		         i->kernel_clocksource[0] ? i->kernel_clocksource : "unknown");
	cd_wrap(out, line, 2, WIDTH);
	snprintf(line, sizeof line,
	         "re-anchored on the kernel every %.3g s: %" PRIu64 " times in the run, %" PRIu64
	         " since start; counter seen going backwards %" PRIu64 " times",
	         (double)i->sync_interval_ns / 1e9, r->syncs_after - r->syncs_before, i->syncs,
	         i->counter_backwards);
	cd_wrap(out, line, 2, WIDTH);
	snprintf(line, sizeof line,
	         "error bound (fc_info, sampled %" PRIu64 " times): %" PRId64 "-%" PRId64 " ns over the run, %" PRId64
	         " ns at the end",
	         r->bound_samples, r->bound_min_ns, r->bound_max_ns, r->bound_last_ns);
	cd_wrap(out, line, 2, WIDTH);
}

static void setup_lines(FILE *out, const struct cd_acc_report *rp)
{
	const struct cd_acc_result *r = rp->r;
	char line[600];
	snprintf(line, sizeof line,
	         "%d thread%s for %.1f s, %" PRIu64 " readings of each clock, each between two reads of the "
	         "kernel's clock through %s, %.1f ns a read",
	         r->threads, r->threads == 1 ? "" : "s", r->elapsed_s, r->mono.st.reads, r->kernel_read,
	         r->kernel_read_ns);
	cd_wrap(out, line, 2, WIDTH);
	if (r->mono.calib_reads < CD_ACC_CALIB_READS || r->real.calib_reads < CD_ACC_CALIB_READS) {
		snprintf(line, sizeof line,
		         "note: the reads are slow here: the cut was set from %d and %d brackets (of %d) in the time "
		         "the run gives it", r->mono.calib_reads, r->real.calib_reads, CD_ACC_CALIB_READS);
		cd_wrap(out, line, 2, WIDTH);
	}
	bool slow = r->kernel_read_ns > SLOW_READ_NS || (rp->info_ok && rp->info->kernel_vdso_fast == 0);
	if (slow) {
		snprintf(line, sizeof line,
		         "note: the kernel's clock is slow to read here (%.0f ns%s%s): every bracket is at least "
		         "that wide, so each error is known only to within half of it",
		         r->kernel_read_ns, rp->info_ok && rp->info->kernel_clocksource[0] ? ", clocksource " : "",
		         rp->info_ok ? rp->info->kernel_clocksource : "");
		cd_wrap(out, line, 2, WIDTH);
	}
}

/* One row of two columns; a NAN is "-". */
static void row(FILE *out, const char *label, const char *a, const char *b)
{
	fprintf(out, "  %-26s %-20s %s\n", label, a, b);
}

static const char *num(char *buf, size_t len, const char *fmt, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, v);
	return buf;
}

static const char *count_share(char *buf, size_t len, uint64_t n, double share)
{
	if (isnan(share))
		snprintf(buf, len, "%" PRIu64, n);
	else
		snprintf(buf, len, "%" PRIu64 " (%.2g%%)", n, share * 100);
	return buf;
}

static void table(FILE *out, const struct cd_acc_result *r)
{
	const struct cd_acc_clock *m = &r->mono, *t = &r->real;
	char a[48], b[48];
	row(out, "", m->name, t->name);
	row(out, "against", m->kernel, t->kernel);
	snprintf(a, sizeof a, "%" PRIu64, m->st.reads);
	snprintf(b, sizeof b, "%" PRIu64, t->st.reads);
	row(out, "readings", a, b);
	row(out, "bracket, median ns", num(a, sizeof a, "%.0f", m->sum.bracket_median_ns),
	    num(b, sizeof b, "%.0f", t->sum.bracket_median_ns));
	snprintf(a, sizeof a, "%" PRId64, m->cut_ns);
	snprintf(b, sizeof b, "%" PRId64, t->cut_ns);
	row(out, "widest bracket kept, ns", a, b);
	row(out, "wider: left out", count_share(a, sizeof a, m->st.wide, m->sum.wide_share),
	    count_share(b, sizeof b, t->st.wide, t->sum.wide_share));
	row(out, "max |diff| ns", num(a, sizeof a, "%.1f", m->sum.max_abs_ns), num(b, sizeof b, "%.1f", t->sum.max_abs_ns));
	row(out, "mean diff ns", num(a, sizeof a, "%+.2f", m->sum.mean_ns), num(b, sizeof b, "%+.2f", t->sum.mean_ns));
	row(out, "mean |diff| ns", num(a, sizeof a, "%.2f", m->sum.mean_abs_ns),
	    num(b, sizeof b, "%.2f", t->sum.mean_abs_ns));
	row(out, "median |diff| ns", num(a, sizeof a, "%.0f", m->sum.median_ns), num(b, sizeof b, "%.0f", t->sum.median_ns));
	row(out, "p99 |diff| ns", num(a, sizeof a, "%.0f", m->sum.p99_ns), num(b, sizeof b, "%.0f", t->sum.p99_ns));
	row(out, "p99.9 |diff| ns", num(a, sizeof a, "%.0f", m->sum.p999_ns), num(b, sizeof b, "%.0f", t->sum.p999_ns));
	row(out, "|diff| > 1 us", count_share(a, sizeof a, m->st.over_1us, m->sum.share_1us),
	    count_share(b, sizeof b, t->st.over_1us, t->sum.share_1us));
	row(out, "|diff| > 10 us", count_share(a, sizeof a, m->st.over_10us, m->sum.share_10us),
	    count_share(b, sizeof b, t->st.over_10us, t->sum.share_10us));
	snprintf(a, sizeof a, "%" PRIu64, m->st.over_bound);
	snprintf(b, sizeof b, "%" PRIu64, t->st.over_bound);
	row(out, "beyond its bound", a, b);
	snprintf(a, sizeof a, "%" PRIu64, m->st.over_bound_naive);
	snprintf(b, sizeof b, "%" PRIu64, t->st.over_bound_naive);
	row(out, "  (bracket ignored)", a, b);
	snprintf(a, sizeof a, "%" PRIu64, m->backward_thread);
	snprintf(b, sizeof b, "%" PRIu64, t->backward_thread);
	row(out, "backward, same thread", a, b);
	snprintf(a, sizeof a, "%" PRIu64, m->backward_cross);
	snprintf(b, sizeof b, "%" PRIu64, t->backward_cross);
	row(out, "backward, across threads", a, b);
	if (!m->sum.percentiles_exact || !t->sum.percentiles_exact)
		fprintf(out, "  (a percentile past 16 us is the upper edge of its power-of-two bin)\n");
	fprintf(out, "  frequency error (fc_now_ns over CLOCK_MONOTONIC, slope - 1):\n");
	fprintf(out, "    %s ppm +-%s over the run (%.1f s)\n", num(a, sizeof a, "%+.4f", m->ppm),
	        num(b, sizeof b, "%.4f", m->ppm_err), m->ppm_span_s);
	fprintf(out, "    %s ppm +-%s over its last %.1f s\n", num(a, sizeof a, "%+.4f", m->tail_ppm),
	        num(b, sizeof b, "%.4f", m->tail_ppm_err), m->tail_span_s);
}

/* A reading worth showing: how far off, when, and what the library
 * claimed then. */
static void reading_line(FILE *out, const char *what, const struct cd_acc_clock *c,
                         const struct cd_acc_sample *s, int64_t bound)
{
	char line[300];
	double diff = (double)(2 * s->f - s->k1 - s->k2) / 2;
	snprintf(line, sizeof line,
	         "%s of %s: %+.1f ns off %s, %.3f s into the run (bracket %" PRId64 " ns, bound %" PRId64 " ns)", what,
	         c->name, diff, c->kernel, (double)(s->k1 - c->start_ns) / 1e9, s->k2 - s->k1, bound);
	cd_wrap(out, line, 2, WIDTH);
}

static void bad_readings(FILE *out, const struct cd_acc_result *r)
{
	const struct cd_acc_clock *c[2] = { &r->mono, &r->real };
	for (int k = 0; k < 2; k++) {
		if (c[k]->st.has_first_over)
			reading_line(out, "the first reading beyond its bound", c[k], &c[k]->st.first_over,
			             c[k]->st.first_over_bound_ns);
		if (c[k]->st.has_worst && (c[k]->st.over_bound || c[k]->st.over_1us))
			reading_line(out, "the worst reading", c[k], &c[k]->st.worst, c[k]->st.worst_bound_ns);
	}
}

void cd_acc_text(FILE *out, const struct cd_acc_report *rp)
{
	const struct cd_acc_result *r = rp->r;
	verdict(out, r);
	library_lines(out, rp);
	if (r->err)
		return;
	setup_lines(out, rp);
	fputc('\n', out);
	table(out, r);
	fputc('\n', out);
	bad_readings(out, r);
	/* In the words hand-made rdtsc clock tests print, so that a figure
	 * from one of them compares at a glance. */
	fprintf(out, "rdtsc-clock test figures for fc_now_ns: max diff=%.0f, ave diff=%.0f,\n"
	             "  diff1 count=%" PRIu64 ", diff10 count=%" PRIu64 " (ns)\n",
	        isnan(r->mono.sum.max_abs_ns) ? 0 : r->mono.sum.max_abs_ns,
	        isnan(r->mono.sum.mean_ns) ? 0 : r->mono.sum.mean_ns, r->mono.st.over_1us, r->mono.st.over_10us);
	fprintf(out, "(diff: library - the bracket's midpoint; wide brackets are left out of the\n"
	             "figures but not out of the bound; percentiles are of |diff|, nearest rank)\n");
}

/* ---- JSON ---- */

static void json_info(struct cd_jsonw *j, const struct cd_acc_report *rp)
{
	const struct fc_info *i = rp->info;
	if (!rp->info_ok) {
		cd_jsonw_null(j, "library");
		return;
	}
	cd_jsonw_begin_object(j, "library");
	cd_jsonw_string(j, "source", fc_source_name(i->source));
	cd_jsonw_string(j, "reason", fc_reason_name(i->reason));
	cd_jsonw_string(j, "reason_text", i->reason_text);
	cd_jsonw_string(j, "counter", i->counter);
	cd_jsonw_string(j, "kernel_clocksource", i->kernel_clocksource[0] ? i->kernel_clocksource : NULL);
	if (i->kernel_vdso_fast < 0)
		cd_jsonw_null(j, "kernel_vdso_fast");
	else
		cd_jsonw_bool(j, "kernel_vdso_fast", i->kernel_vdso_fast == 1);
	/* In whole Hz: the writer's 6 significant digits would round a 2.6 GHz
	 * counter to 1 kHz, 400 ppm. */
	if (i->counter_hz > 0)
		cd_jsonw_int(j, "counter_hz", llround(i->counter_hz));
	else
		cd_jsonw_null(j, "counter_hz");
	cd_jsonw_string(j, "freq_from", i->freq_from[0] ? i->freq_from : NULL);
	cd_jsonw_number(j, "freq_err_ppm", i->freq_err_ppm);
	cd_jsonw_int(j, "error_bound_ns", i->error_bound_ns);
	cd_jsonw_int(j, "sync_interval_ns", i->sync_interval_ns);
	cd_jsonw_int(j, "syncs", (long long)i->syncs);
	cd_jsonw_int(j, "counter_backwards", (long long)i->counter_backwards);
	cd_jsonw_int(j, "verdict", i->verdict);
	cd_jsonw_end_object(j);
}

static void json_reading(struct cd_jsonw *j, const char *key, const struct cd_acc_clock *c, bool has,
                         const struct cd_acc_sample *s, int64_t bound)
{
	if (!has) {
		cd_jsonw_null(j, key);
		return;
	}
	cd_jsonw_begin_object(j, key);
	cd_jsonw_number(j, "at_s", (double)(s->k1 - c->start_ns) / 1e9);
	cd_jsonw_number(j, "diff_ns", (double)(2 * s->f - s->k1 - s->k2) / 2);
	cd_jsonw_int(j, "bracket_ns", s->k2 - s->k1);
	cd_jsonw_int(j, "bound_ns", bound);
	cd_jsonw_int(j, "kernel_before_ns", s->k1);
	cd_jsonw_int(j, "library_ns", s->f);
	cd_jsonw_int(j, "kernel_after_ns", s->k2);
	cd_jsonw_end_object(j);
}

/* |error| of the kept readings in bench's log2 buckets (measure/histogram.h):
 * the 1 ns bins below CD_ACC_LINEAR_NS and the power-of-two bins above
 * fall in them exactly. */
static void json_histogram(struct cd_jsonw *j, const struct cd_acc_hist *h)
{
	uint64_t b[CD_HIST_BUCKETS] = { 0 };
	for (uint64_t v = 0; v < CD_ACC_LINEAR_NS; v++)
		b[cd_hist_bucket(v)] += h->lin[v];
	for (int i = 0; i < CD_ACC_LOG_BINS && 15 + i < CD_HIST_BUCKETS; i++)
		b[15 + i] += h->log2[i];
	int lo = CD_HIST_BUCKETS, hi = -1;
	for (int i = 0; i < CD_HIST_BUCKETS; i++)
		if (b[i]) {
			lo = i < lo ? i : lo;
			hi = i;
		}
	cd_jsonw_begin_array(j, "histogram");
	for (int i = lo; i <= hi; i++) {
		uint64_t low, high;
		cd_hist_bounds(i, &low, &high);
		cd_jsonw_begin_object(j, NULL);
		cd_jsonw_int(j, "low_ns", (long long)low);
		cd_jsonw_int(j, "high_ns", (long long)high);
		cd_jsonw_int(j, "count", (long long)b[i]);
		cd_jsonw_end_object(j);
	}
	cd_jsonw_end_array(j);
}

/* Thread 0's error over the run, slice by slice, beside the bound. */
static void json_timeline(struct cd_jsonw *j, const struct cd_acc_clock *c, double slice_s)
{
	cd_jsonw_begin_object(j, "timeline");
	cd_jsonw_number(j, "slice_s", slice_s);
	cd_jsonw_begin_array(j, "slices");
	for (int i = 0; i < CD_ACC_SLICES; i++) {
		const struct cd_acc_slice *sl = &c->slice[i];
		if (sl->kept == 0 && sl->bound_ns == 0)
			continue;
		cd_jsonw_begin_object(j, NULL);
		cd_jsonw_number(j, "t_s", slice_s * i);
		cd_jsonw_int(j, "kept", (long long)sl->kept);
		if (sl->kept) {
			cd_jsonw_number(j, "min_ns", (double)sl->min2 / 2);
			cd_jsonw_number(j, "max_ns", (double)sl->max2 / 2);
		} else {
			cd_jsonw_null(j, "min_ns");
			cd_jsonw_null(j, "max_ns");
		}
		cd_jsonw_int(j, "bound_ns", sl->bound_ns);
		cd_jsonw_end_object(j);
	}
	cd_jsonw_end_array(j);
	cd_jsonw_end_object(j);
}

static void json_clock(struct cd_jsonw *j, const struct cd_acc_clock *c, bool frequency, double slice_s)
{
	const struct cd_acc_summary *s = &c->sum;
	cd_jsonw_begin_object(j, NULL);
	cd_jsonw_string(j, "name", c->name);
	cd_jsonw_string(j, "kernel", c->kernel);
	cd_jsonw_int(j, "reads", (long long)c->st.reads);
	cd_jsonw_int(j, "kept", (long long)c->st.kept);
	cd_jsonw_int(j, "wide", (long long)c->st.wide);
	cd_jsonw_number(j, "wide_share", s->wide_share);
	cd_jsonw_int(j, "cut_ns", c->cut_ns);
	cd_jsonw_int(j, "calibration_bracket_ns", c->calib_bracket_ns);
	cd_jsonw_int(j, "calibration_reads", c->calib_reads);
	cd_jsonw_numbers(j, (const struct cd_jsonw_num[]){
		{ "bracket_median_ns", s->bracket_median_ns }, { "max_abs_ns", s->max_abs_ns },
		{ "mean_ns", s->mean_ns }, { "mean_abs_ns", s->mean_abs_ns }, { "median_abs_ns", s->median_ns },
		{ "p99_abs_ns", s->p99_ns }, { "p999_abs_ns", s->p999_ns }, { NULL, 0 } });
	cd_jsonw_bool(j, "percentiles_exact", s->percentiles_exact);
	cd_jsonw_int(j, "over_1us", (long long)c->st.over_1us);
	cd_jsonw_number(j, "over_1us_share", s->share_1us);
	cd_jsonw_int(j, "over_10us", (long long)c->st.over_10us);
	cd_jsonw_number(j, "over_10us_share", s->share_10us);
	cd_jsonw_int(j, "over_bound", (long long)c->st.over_bound);
	cd_jsonw_int(j, "over_bound_worst_ns", c->st.worst_excess_ns);
	cd_jsonw_int(j, "over_bound_ignoring_bracket", (long long)c->st.over_bound_naive);
	json_reading(j, "worst", c, c->st.has_worst, &c->st.worst, c->st.worst_bound_ns);
	json_reading(j, "first_over_bound", c, c->st.has_first_over, &c->st.first_over, c->st.first_over_bound_ns);
	cd_jsonw_begin_object(j, "backward");
	cd_jsonw_int(j, "same_thread", (long long)c->backward_thread);
	cd_jsonw_int(j, "across_threads", (long long)c->backward_cross);
	cd_jsonw_int(j, "largest_ns", c->backward_max_ns);
	cd_jsonw_end_object(j);
	json_histogram(j, &c->st.abs_hist);
	json_timeline(j, c, slice_s);
	if (frequency) {
		cd_jsonw_begin_object(j, "frequency");
		cd_jsonw_numbers(j, (const struct cd_jsonw_num[]){
			{ "ppm", c->ppm }, { "ppm_err", c->ppm_err }, { "span_s", c->ppm_span_s },
			{ "tail_ppm", c->tail_ppm }, { "tail_ppm_err", c->tail_ppm_err }, { "tail_span_s", c->tail_span_s },
			{ NULL, 0 } });
		cd_jsonw_end_object(j);
	} else {
		cd_jsonw_null(j, "frequency");
	}
	cd_jsonw_end_object(j);
}

void cd_acc_json(FILE *out, const struct cd_acc_report *rp)
{
	const struct cd_acc_result *r = rp->r;
	struct cd_jsonw j;
	cd_jsonw_open(&j, out, 2, "accuracy", rp->exit_status);
	cd_jsonw_bool(&j, "ok", cd_accuracy_ok(r));
	cd_jsonw_string(&j, "error", r->err ? strerror(-r->err) : NULL);
	cd_jsonw_number(&j, "duration_s", rp->duration_s);
	cd_jsonw_number(&j, "elapsed_s", r->elapsed_s);
	cd_jsonw_int(&j, "threads", r->threads);
	cd_jsonw_bool(&j, "interrupted", r->interrupted);
	json_info(&j, rp);
	cd_jsonw_begin_object(&j, "kernel_read");
	cd_jsonw_string(&j, "via", r->kernel_read);
	cd_jsonw_number(&j, "ns", r->kernel_read_ns);
	cd_jsonw_end_object(&j);
	cd_jsonw_begin_object(&j, "error_bound");
	cd_jsonw_int(&j, "samples", (long long)r->bound_samples);
	cd_jsonw_int(&j, "min_ns", r->bound_min_ns);
	cd_jsonw_int(&j, "max_ns", r->bound_max_ns);
	cd_jsonw_int(&j, "last_ns", r->bound_last_ns);
	cd_jsonw_end_object(&j);
	cd_jsonw_int(&j, "syncs_in_run", (long long)(r->syncs_after - r->syncs_before));
	cd_jsonw_int(&j, "reads", (long long)(r->mono.st.reads + r->real.st.reads));
	cd_jsonw_int(&j, "backward_steps", (long long)backward_total(r));
	cd_jsonw_begin_array(&j, "clocks");
	if (!r->err) {
		json_clock(&j, &r->mono, true, r->slice_s);
		json_clock(&j, &r->real, false, r->slice_s);
	}
	cd_jsonw_end_array(&j);
	cd_jsonw_end_object(&j);
	fputc('\n', out);
}
