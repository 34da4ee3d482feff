/* SPDX-License-Identifier: MIT */
/*
 * charts.c: the figures of `clockdoctor report` (report.h), each an inline
 * SVG drawn from a command's JSON.  Every mark carries its figures in data-*
 * attributes and a <title> (what a pointer shows), so a program reads the
 * numbers from the page as a person reads the picture; numbers are written
 * as the commands write them (ns a call with one decimal, as bench does).
 */
#include "report/report.h"
#include "output/duration.h"
#include "output/html.h"
#include "output/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 900

static void fig_open(FILE *out, const char *id, const char *title, const char *caption)
{
	fprintf(out, "<figure class=\"fig\" id=\"fig-%s\" data-chart=\"%s\">\n<figcaption><h3>", id, id);
	cd_html_esc(out, title);
	fputs("</h3><p>", out);
	cd_html_esc(out, caption);
	fputs("</p></figcaption>\n", out);
}

static void fig_close(FILE *out)
{
	fputs("</figure>\n", out);
}

void cd_rpt_no_figure(FILE *out, const char *id, const char *title, const char *why)
{
	fprintf(out, "<figure class=\"fig none\" id=\"fig-%s\" data-chart=\"%s\" data-empty=\"1\">\n<figcaption><h3>", id,
	        id);
	cd_html_esc(out, title);
	fputs("</h3></figcaption><p class=\"nothing\">", out);
	cd_html_esc(out, why);
	fputs("</p></figure>\n", out);
}

/* A figure without its part: why, and what the report says of the part
 * (not measured here and why, not among the files given). */
static void no_part(FILE *out, const struct cd_rpt *r, enum cd_rpt_part p, const char *id, const char *title,
                    const char *why)
{
	char text[600];
	const char *missing = r->in[p].missing;
	if (r->origin != CD_RPT_SNAPSHOT && missing[0] && strncmp(missing, "not traced", 10) != 0)
		snprintf(text, sizeof text, "%s %s: %s.", why, cd_rpt_part_name(p), missing);
	else
		snprintf(text, sizeof text, "%s", why);
	cd_rpt_no_figure(out, id, title, text);
}

/* A mark's <title>: what a pointer over it shows. */
static void mark_title(FILE *out, const char *text)
{
	fputs("<title>", out);
	cd_html_esc(out, text);
	fputs("</title>", out);
}

static void legend(FILE *out, double x, double y, const char *const *cls, const char *const *label, int n)
{
	fputs("<g class=\"legend\">", out);
	for (int i = 0; i < n; i++) {
		fprintf(out, "<rect class=\"key %s\" x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\"/>", cls[i], x, y - 10);
		cd_svg_text(out, x + 16, y, "tick", "start", label[i]);
		x += 24 + 7.2 * (double)strlen(label[i]);
	}
	fputs("</g>\n", out);
}

/* ---- cost per way ---- */

/* What kind of way it is, as the legend says: a class of the page's CSS. */
static const char *way_class(const struct cd_jv *w)
{
	const char *call = cd_jv_getstr(w, "call", "");
	const char *path = cd_jv_getstr(w, "path", "");
	if (strcmp(call, "libfastclock") == 0)
		return "lib";
	if (strcmp(call, "counter") == 0)
		return "ctr";
	if (cd_jv_getbool(w, "forced_syscall", false))
		return "sys";
	if (strcmp(path, "kernel") == 0 || cd_jv_getbool(w, "syscall", false))
		return "kern";
	return "vdso";
}

struct bar {
	const char *name;
	const char *cls;
	double ns;
	const char *what;
};

/* One bar chart of costs on a log scale, with the three references marked
 * (each may be NAN: not measured). */
static void cost_bars(FILE *out, const char *id, const char *title, const struct bar *b, int n, double ref_libc,
                      bool libc_vdso, double ref_sys, double ref_ctr)
{
	double lo = INFINITY, hi = 0;
	for (int i = 0; i < n; i++)
		if (b[i].ns > 0) {
			lo = fmin(lo, b[i].ns);
			hi = fmax(hi, b[i].ns);
		}
	if (hi <= 0) {
		lo = 1;
		hi = 1000;
	}
	const double left = 250, right = W - 20, top = 70, row = 18;
	double bottom = top + row * n;
	int h = (int)bottom + 46;
	struct cd_svg_scale x;
	cd_svg_scale_init(&x, lo, hi, left, right, true);
	cd_svg_open(out, id, W, h, title, "one bar a way of reading the time, its cost a call on a log scale");
	static const char *const cls[] = { "vdso", "kern", "sys", "ctr", "lib" };
	static const char *const lab[] = { "vDSO", "kernel (not forced)", "forced system call", "counter",
		                           "libfastclock" };
	legend(out, left, 16, cls, lab, 5);
	cd_svg_axis_x(out, &x, bottom, top - 6, cd_svg_fmt_ns, "cost of one call (ns, log scale)");
	for (int i = 0; i < n; i++) {
		double y = top + row * i;
		cd_svg_text(out, left - 6, y + 13, "name", "end", b[i].name);
		if (!(b[i].ns > 0))
			continue;
		char t[300], v[32];
		snprintf(v, sizeof v, "%.1f ns", b[i].ns);
		snprintf(t, sizeof t, "%s: %s a call (%s)", b[i].name, v, b[i].what);
		double x1 = cd_svg_map(&x, b[i].ns);
		fprintf(out, "<rect class=\"mark bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" data-way=\"",
		        b[i].cls, left, y + 2, fmax(x1 - left, 1), row - 4);
		cd_html_esc(out, b[i].name);
		fprintf(out, "\" data-ns=\"%.1f\">", b[i].ns);
		mark_title(out, t);
		fputs("</rect>", out);
		cd_svg_text(out, x1 + 4, y + 13, "val", "start", v);
		fputc('\n', out);
	}
	const struct {
		double v;
		const char *cls, *label;
	} refs[] = { { ref_libc, libc_vdso ? "ref-vdso" : "ref-kern",
		       libc_vdso ? "vDSO (CLOCK_MONOTONIC)" : "CLOCK_MONOTONIC through libc, in the kernel" },
		     { ref_sys, "ref-sys", "forced system call" }, { ref_ctr, "ref-ctr", "counter" } };
	for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++) {
		if (!(refs[k].v > 0))
			continue;
		double xr = cd_svg_map(&x, refs[k].v);
		char t[80];
		snprintf(t, sizeof t, "%s %.1f ns", refs[k].label, refs[k].v);
		fprintf(out, "<line class=\"ref %s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" data-ref=\"%s\" data-ns=\"%.1f\">",
		        refs[k].cls, xr, xr, top - 30 + 12.0 * (double)k, bottom, refs[k].label, refs[k].v);
		mark_title(out, t);
		fputs("</line>", out);
		cd_svg_text(out, xr, top - 34 + 12.0 * (double)k, "reflabel", "middle", t);
		fputc('\n', out);
	}
	cd_svg_close(out);
}

static double way_ns(const struct cd_jv *ways, const char *name)
{
	for (const struct cd_jv *w = cd_jv_first(ways); w; w = w->next)
		if (strcmp(cd_jv_getstr(w, "name", ""), name) == 0 && cd_jv_getbool(w, "measured", false))
			return cd_jv_getnum(w, "ns_per_call", NAN);
	return NAN;
}

static const char *class_words(const char *cls)
{
	if (strcmp(cls, "vdso") == 0)
		return "served by the vDSO";
	if (strcmp(cls, "kern") == 0)
		return "enters the kernel";
	if (strcmp(cls, "sys") == 0)
		return "forced through syscall(2)";
	if (strcmp(cls, "ctr") == 0)
		return "the CPU's counter";
	return "libfastclock";
}

static void cost_from_bench(FILE *out, const struct cd_jv *bench)
{
	int k = 0;
	for (const struct cd_jv *run = cd_jv_first(cd_jv_get(bench, "runs")); run; run = run->next, k++) {
		const struct cd_jv *ways = cd_jv_get(run, "ways");
		struct bar b[80];
		int n = 0;
		for (const struct cd_jv *w = cd_jv_first(ways); w && n < 80; w = w->next) {
			if (!cd_jv_getbool(w, "measured", false))
				continue;
			b[n].name = cd_jv_getstr(w, "name", "?");
			b[n].cls = way_class(w);
			b[n].ns = cd_jv_getnum(w, "ns_per_call", NAN);
			b[n].what = class_words(b[n].cls);
			n++;
		}
		const char *cs = cd_jv_getstr(run, "clocksource", "unknown");
		char id[48], title[200];
		snprintf(id, sizeof id, "cost-%d", k);
		snprintf(title, sizeof title, "Cost of each way on clocksource %s", cs);
		double ctr = way_ns(ways, "rdtsc");
		if (isnan(ctr))
			ctr = way_ns(ways, "cntvct");
		bool vdso = true;
		for (const struct cd_jv *w = cd_jv_first(ways); w; w = w->next)
			if (strcmp(cd_jv_getstr(w, "name", ""), "CLOCK_MONOTONIC") == 0)
				vdso = strcmp(way_class(w), "vdso") == 0;
		cost_bars(out, id, title, b, n, way_ns(ways, "CLOCK_MONOTONIC"), vdso, way_ns(ways, "CLOCK_MONOTONIC/syscall"),
		          ctr);
	}
}

static void cost_from_check(FILE *out, const struct cd_jv *check)
{
	const struct cd_jv *m = cd_jv_get(check, "measurements");
	struct bar b[40];
	char names[20][80];
	int n = 0, k = 0;
	for (const struct cd_jv *c = cd_jv_first(m); c && n < 38 && k < 20; c = c->next) {
		if (!cd_jv_getbool(c, "measured", false))
			continue;
		bool sys = cd_jv_getbool(c, "syscall", false);
		b[n++] = (struct bar){ c->key, sys ? "kern" : "vdso", cd_jv_getnum(c, "ns_per_call", NAN),
			               sys ? "enters the kernel" : "served by the vDSO" };
		snprintf(names[k], sizeof names[k], "%s/syscall", c->key);
		b[n++] = (struct bar){ names[k++], "sys", cd_jv_getnum(c, "syscall_ns", NAN), "forced through syscall(2)" };
	}
	const struct cd_jv *mono = cd_jv_get(m, "CLOCK_MONOTONIC");
	char title[200];
	snprintf(title, sizeof title, "Cost of each way on clocksource %s (check's measurement)",
	         cd_jv_str(cd_jv_path(check, "clocksource.current"), "unknown"));
	cost_bars(out, "cost-0", title, b, n, cd_jv_getnum(mono, "ns_per_call", NAN), !cd_jv_getbool(mono, "syscall", false),
	          cd_jv_getnum(mono, "syscall_ns", NAN), NAN);
}

void cd_rpt_chart_cost(FILE *out, const struct cd_rpt *r)
{
	const struct cd_jv *bench = cd_rpt_doc(r, CD_RPT_BENCH);
	const struct cd_jv *check = cd_rpt_doc(r, CD_RPT_CHECK);
	const char *title = "Cost per way of reading the time";
	if (bench && cd_jv_first(cd_jv_get(bench, "runs"))) {
		fig_open(out, "cost", title,
		         "What one call costs, median of batches (bench), on a log scale. The dashed lines mark "
		         "CLOCK_MONOTONIC through libc (the vDSO where it serves), the same call forced through "
		         "syscall(2), and the CPU's counter read bare.");
		cost_from_bench(out, bench);
	} else if (check && cd_jv_getbool(check, "measured", false)) {
		fig_open(out, "cost", title,
		         "What one call costs through libc, beside the same call forced through syscall(2) (check's "
		         "measurement, median of batches), on a log scale.");
		cost_from_check(out, check);
	} else {
		no_part(out, r, CD_RPT_BENCH, "cost", title, "Measured: nothing. No bench or check measurement is in this report.");
		return;
	}
	fig_close(out);
}

/* ---- histograms (bench's latency, accuracy's error): log2 buckets ---- */

/* Bars of a log2 histogram (objects with low_ns, high_ns, count), share of
 * all on the y axis; mark_at > 0 marks the bucket that holds that value. */
static void log2_hist(FILE *out, const char *id, const char *title, const struct cd_jv *hist, int w, int h,
                      const char *xlabel, double mark_at, const char *mark_label)
{
	int n = 0;
	double total = 0, maxc = 0;
	for (const struct cd_jv *b = cd_jv_first(hist); b; b = b->next) {
		double c = cd_jv_getnum(b, "count", 0);
		total += c;
		maxc = fmax(maxc, c);
		n++;
	}
	if (n > 64)
		n = 64;
	const double left = 52, right = w - 10, top = 26, bottom = h - 44;
	struct cd_svg_scale y;
	cd_svg_scale_init(&y, 0, total > 0 ? fmax(maxc / total * 100, 1) : 100, bottom, top, false);
	cd_svg_open(out, id, w, h, title, "share of the samples in each power-of-two bucket");
	cd_svg_text(out, left, 14, "name", "start", title);
	cd_svg_axis_y(out, &y, left, right, cd_svg_fmt_plain, "% of samples");
	double bw = (right - left) / (n ? n : 1);
	int i = 0;
	for (const struct cd_jv *b = cd_jv_first(hist); b && i < n; b = b->next, i++) {
		double low = cd_jv_getnum(b, "low_ns", 0), high = cd_jv_getnum(b, "high_ns", 0);
		double c = cd_jv_getnum(b, "count", 0);
		double pct = total > 0 ? c / total * 100 : 0;
		double x = left + bw * i, y1 = cd_svg_map(&y, pct);
		char t[160], lo[32], hi[32];
		cd_fmt_duration_ns(lo, sizeof lo, low);
		cd_fmt_duration_ns(hi, sizeof hi, high);
		snprintf(t, sizeof t, "%s to %s: %.0f samples (%.2f%%)", lo, hi, c, pct);
		bool marked = mark_at > 0 && mark_at >= low && mark_at <= high + 1;
		fprintf(out,
		        "<rect class=\"mark hbar%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-low-ns=\"%.0f\" "
		        "data-high-ns=\"%.0f\" data-count=\"%.0f\">",
		        marked ? " at-bound" : "", x + 1, fmin(y1, bottom - 1), fmax(bw - 2, 1), fmax(bottom - y1, 1), low,
		        high, c);
		mark_title(out, t);
		fputs("</rect>", out);
		if (n <= 5 || i % 2 == 0)
			cd_svg_text(out, x + bw / 2, bottom + 13, "tick", "middle", lo);
		if (marked && mark_label)
			cd_svg_text(out, x + bw / 2, fmin(y1, bottom - 1) - 4, "reflabel", "middle", mark_label);
	}
	fprintf(out, "<line class=\"frame\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\"/>", left, right, bottom, bottom);
	cd_svg_text(out, (left + right) / 2, bottom + 30, "label", "middle", xlabel);
	cd_svg_close(out);
}

void cd_rpt_chart_latency(FILE *out, const struct cd_rpt *r)
{
	const struct cd_jv *bench = cd_rpt_doc(r, CD_RPT_BENCH);
	const char *title = "Latency of single calls, per way";
	const struct cd_jv *run = cd_jv_first(cd_jv_get(bench, "runs"));
	if (!run) {
		no_part(out, r, CD_RPT_BENCH, "latency", title,
		        "Measured: nothing. Single calls are timed by bench; no bench run is in this report.");
		return;
	}
	fig_open(out, "latency", title,
	         "Each single call timed apart, in power-of-two buckets of nanoseconds as bench prints them (the "
	         "timer's own overhead subtracted); the share of calls in each bucket.");
	fputs("<div class=\"multiples\">\n", out);
	int k = 0, i = 0;
	for (; run; run = run->next, k++) {
		const char *cs = cd_jv_getstr(run, "clocksource", "unknown");
		for (const struct cd_jv *w = cd_jv_first(cd_jv_get(run, "ways")); w; w = w->next, i++) {
			const struct cd_jv *hist = cd_jv_path(w, "latency.histogram");
			if (!cd_jv_first(hist))
				continue;
			char id[48], t[200];
			snprintf(id, sizeof id, "latency-%d", i);
			if (r->in[CD_RPT_BENCH].n && cd_jv_first(cd_jv_get(bench, "runs"))->next)
				snprintf(t, sizeof t, "%s (%s)", cd_jv_getstr(w, "name", "?"), cs);
			else
				snprintf(t, sizeof t, "%s", cd_jv_getstr(w, "name", "?"));
			log2_hist(out, id, t, hist, 290, 170, "one call (ns)", 0, NULL);
		}
	}
	fputs("</div>\n", out);
	fig_close(out);
}

/* ---- the TSC: frequency sources, the warp matrix ---- */

void cd_rpt_chart_tsc_freq(FILE *out, const struct cd_rpt *r)
{
	const struct cd_jv *tsc = cd_rpt_doc(r, CD_RPT_TSC);
	const char *title = "TSC frequency: every source against the measurement";
	const struct cd_jv *freq = cd_jv_get(tsc, "frequency");
	double measured = cd_jv_getnum(freq, "measured_hz", NAN);
	if (!tsc || !(measured > 0)) {
		no_part(out, r, CD_RPT_TSC, "tsc-freq", title,
		        tsc ? "The counter's frequency could not be measured here."
		            : "Measured: nothing. The TSC is measured by `clockdoctor tsc`; none is in this report.");
		return;
	}
	fig_open(out, "tsc-freq", title,
	         "Each source's frequency as its difference from the measurement, in parts per million, with its "
	         "own precision as a bar; sources this machine does not offer are listed below the chart.");
	struct fsrc {
		const char *name, *note;
		double hz, diff, prec;
	} s[16];
	int n = 0, absent = 0;
	double lo = 0, hi = 0;
	for (const struct cd_jv *x = cd_jv_first(cd_jv_get(freq, "sources")); x && n < 16; x = x->next) {
		double hz = cd_jv_getnum(x, "hz", NAN);
		if (!(hz > 0)) {
			absent++;
			continue;
		}
		double diff = cd_jv_getnum(x, "diff_ppm", NAN);
		if (isnan(diff))
			diff = (hz - measured) / measured * 1e6;
		double prec = cd_jv_getnum(x, "precision_ppm", 0);
		if (!isfinite(prec) || prec < 0)
			prec = 0;
		s[n] = (struct fsrc){ cd_jv_getstr(x, "source", "?"), cd_jv_getstr(x, "note", ""), hz, diff, prec };
		lo = fmin(lo, diff - prec);
		hi = fmax(hi, diff + prec);
		n++;
	}
	double pad = fmax((hi - lo) * 0.08, 0.5);
	const double left = 170, right = W - 30, top = 20, row = 26;
	double bottom = top + row * n + 6;
	struct cd_svg_scale x;
	cd_svg_scale_init(&x, lo - pad, hi + pad, left, right, false);
	cd_svg_open(out, "tsc-freq", W, (int)bottom + 44, title, "each source's difference from the measured frequency");
	cd_svg_axis_x(out, &x, bottom, top - 6, cd_svg_fmt_plain, "difference from the measured frequency (ppm)");
	double x0 = cd_svg_map(&x, 0);
	fprintf(out, "<line class=\"ref ref-vdso\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.1f\"/>", x0, x0, top - 6, bottom);
	for (int i = 0; i < n; i++) {
		double y = top + row * i + row / 2;
		double cx = cd_svg_map(&x, s[i].diff);
		double xa = cd_svg_map(&x, s[i].diff - s[i].prec), xb = cd_svg_map(&x, s[i].diff + s[i].prec);
		cd_svg_text(out, left - 8, y + 4, "name", "end", s[i].name);
		fprintf(out, "<line class=\"errbar\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", xa, xb, y, y);
		char t[300];
		snprintf(t, sizeof t, "%s: %.4f MHz, %+.2f ppm from the measurement (+-%.2g ppm); %s", s[i].name, s[i].hz / 1e6,
		         s[i].diff, s[i].prec, s[i].note);
		fprintf(out,
		        "<circle class=\"mark dot%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" data-source=\"",
		        strcmp(s[i].name, "measured") == 0 ? " measured" : "", cx, y);
		cd_html_esc(out, s[i].name);
		fprintf(out, "\" data-hz=\"%.0f\" data-diff-ppm=\"%.4g\" data-precision-ppm=\"%.3g\">", s[i].hz, s[i].diff,
		        s[i].prec);
		mark_title(out, t);
		fputs("</circle>", out);
		char v[64];
		snprintf(v, sizeof v, "%.4f MHz", s[i].hz / 1e6);
		cd_svg_text(out, fmin(xb + 6, right - 90), y - 6, "val", "start", v);
		fputc('\n', out);
	}
	cd_svg_close(out);
	if (absent) {
		fputs("<p class=\"absent\">Not offered here: ", out);
		int k = 0;
		for (const struct cd_jv *xs = cd_jv_first(cd_jv_get(freq, "sources")); xs; xs = xs->next) {
			if (cd_jv_getnum(xs, "hz", 0) > 0)
				continue;
			fputs(k++ ? "; " : "", out);
			fputs("<b>", out);
			cd_html_esc(out, cd_jv_getstr(xs, "source", "?"));
			fputs("</b> (", out);
			cd_html_esc(out, cd_jv_getstr(xs, "note", ""));
			fputs(")", out);
		}
		fputs(".</p>\n", out);
	}
	fig_close(out);
}

/* Above this many CPUs the matrix is drawn lean: a title only on the
 * failed pairs, no mirrored half. */
#define BIG_MATRIX 24
/* The highest CPU number a pair may name. */
#define MAX_CPU 4095

void cd_rpt_chart_warp(FILE *out, const struct cd_rpt *r)
{
	const struct cd_jv *tsc = cd_rpt_doc(r, CD_RPT_TSC);
	const struct cd_jv *sync = cd_jv_get(tsc, "sync");
	const struct cd_jv *pairs = cd_jv_get(sync, "pairs");
	const char *title = "The warp test, CPU by CPU";
	int maxcpu = -1, npairs = 0;
	double maxoff = 0;
	for (const struct cd_jv *p = cd_jv_first(pairs); p; p = p->next) {
		int a = cd_jv_int(cd_jv_get(p, "cpu_a"), 0, MAX_CPU, -1), b = cd_jv_int(cd_jv_get(p, "cpu_b"), 0, MAX_CPU, -1);
		if (a < 0 || b < 0)
			continue;
		maxcpu = a > maxcpu ? a : maxcpu;
		maxcpu = b > maxcpu ? b : maxcpu;
		maxoff = fmax(maxoff, fabs(cd_jv_getnum(p, "offset_ns", 0)) + fabs(cd_jv_getnum(p, "uncertainty_ns", 0)));
		npairs++;
	}
	if (npairs == 0) {
		no_part(out, r, CD_RPT_TSC, "warp", title,
		        !tsc ? "Measured: nothing. The warp test is run by `clockdoctor tsc`; none is in this report."
		             : "No pair of CPUs was tested (one CPU allowed, or the test could not run).");
		return;
	}
	int ncpu = maxcpu + 1;
	fig_open(out, "warp", title,
	         "Each cell is a pair of CPUs run against each other (the kernel's check_tsc_warp test): its colour is "
	         "how far apart their counters may be (offset plus uncertainty, ns); a crossed red cell is a pair "
	         "where time went backwards (failed), a grey one a pair that could not be run.");
	double cell = fmin(40, 560.0 / ncpu);
	if (cell < 2)
		cell = 2;
	const double left = 50, top = 40;
	double size = cell * ncpu;
	int w = (int)(left + size + 210), h = (int)(top + fmax(size, 170) + 30);
	char desc[120];
	snprintf(desc, sizeof desc, "%d pairs of %d CPUs", npairs, ncpu);
	cd_svg_open(out, "warp", w, h, title, desc);
	cd_svg_text(out, left + size / 2, top - 22, "label", "middle", "CPU b");
	fprintf(out, "<text class=\"label\" text-anchor=\"middle\" transform=\"translate(14 %.1f) rotate(-90)\">CPU a</text>",
	        top + size / 2);
	int step = ncpu <= 16 ? 1 : ncpu <= 64 ? 8 : 16;
	for (int c = 0; c < ncpu; c += step) {
		char t[16];
		snprintf(t, sizeof t, "%d", c);
		cd_svg_text(out, left + cell * c + cell / 2, top - 6, "tick", "middle", t);
		cd_svg_text(out, left - 6, top + cell * c + cell / 2 + 4, "tick", "end", t);
	}
	fprintf(out, "<rect class=\"frame-box\" x=\"%.0f\" y=\"%.0f\" width=\"%.1f\" height=\"%.1f\"/>\n", left, top, size, size);
	for (int c = 0; c < ncpu && ncpu <= BIG_MATRIX; c++)
		fprintf(out, "<rect class=\"self\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", left + cell * c,
		        top + cell * c, cell, cell);
	for (const struct cd_jv *p = cd_jv_first(pairs); p; p = p->next) {
		int a = cd_jv_int(cd_jv_get(p, "cpu_a"), 0, MAX_CPU, -1), b = cd_jv_int(cd_jv_get(p, "cpu_b"), 0, MAX_CPU, -1);
		if (a < 0 || b < 0)
			continue;
		bool refused = cd_jv_get(p, "error") && cd_jv_get(p, "error")->type == CD_JV_STRING;
		double back = cd_jv_getnum(p, "backward_steps", 0);
		double off = cd_jv_getnum(p, "offset_ns", 0), unc = cd_jv_getnum(p, "uncertainty_ns", 0);
		double spread = fabs(off) + fabs(unc);
		/* 0 to 4; a sum that overflowed (two numbers near 1e308) is the
		 * top level, never a NaN converted to int */
		double frac = maxoff > 0 ? spread / maxoff : 0;
		int level = frac >= 0 && frac <= 1 ? (int)(frac * 4.999) : 4;
		const char *cls = refused ? "refused" : back > 0 ? "fail" : "ok";
		char t[320];
		if (refused)
			snprintf(t, sizeof t, "CPU %d - CPU %d: not run: %.200s", a, b, cd_jv_str(cd_jv_get(p, "error"), ""));
		else
			snprintf(t, sizeof t, "CPU %d - CPU %d: offset %.1f ns +-%.1f ns, %.0f backward steps (largest %.0f ns)%s", a,
			         b, off, unc, back, cd_jv_getnum(p, "max_backward_ns", 0), back > 0 ? ": FAILED" : "");
		double x = left + cell * b, y = top + cell * a;
		fprintf(out,
		        "<rect class=\"mark cell h%d %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-a=\"%d\" "
		        "data-b=\"%d\" data-offset-ns=\"%.1f\" data-uncertainty-ns=\"%.1f\" data-backward=\"%.0f\"",
		        level, cls, x, y, cell, cell, a, b, off, unc, back);
		/* A large matrix keeps its numbers in the data attributes only (a
		 * title a cell would double the page); a failed pair keeps its
		 * title there too. */
		if (ncpu <= BIG_MATRIX || back > 0 || refused) {
			fputs(">", out);
			mark_title(out, t);
			fputs("</rect>", out);
		} else {
			fputs("/>", out);
		}
		/* the pair seen from the other CPU: the same colour, no data */
		if (ncpu <= BIG_MATRIX)
			fprintf(out, "<rect class=\"cell mirror h%d %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
			        level, cls, left + cell * a, top + cell * b, cell, cell);
		if (back > 0 && !refused)
			fprintf(out, "<path class=\"cross\" d=\"M%.1f %.1fl%.1f %.1fm0 %.1fl%.1f %.1f\"/>", x + 1, y + 1, cell - 2,
			        cell - 2, -(cell - 2), -(cell - 2), cell - 2);
		fputc('\n', out);
	}
	/* the legend: the colour scale */
	double lx = left + size + 24;
	cd_svg_text(out, lx, top + 4, "name", "start", "offset + uncertainty");
	for (int i = 0; i < 5; i++) {
		char t[64], a[24], b[24];
		cd_svg_fmt_ns(a, sizeof a, maxoff * i / 5);
		cd_svg_fmt_ns(b, sizeof b, maxoff * (i + 1) / 5);
		snprintf(t, sizeof t, "%s - %s", a, b);
		fprintf(out, "<rect class=\"key cell h%d ok\" x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\"/>", i, lx,
		        top + 14 + 20.0 * i);
		cd_svg_text(out, lx + 20, top + 25 + 20.0 * i, "tick", "start", t);
	}
	fprintf(out, "<rect class=\"key cell fail\" x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\"/>", lx, top + 118);
	cd_svg_text(out, lx + 20, top + 129, "tick", "start", "failed: went backwards");
	fprintf(out, "<rect class=\"key cell refused\" x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\"/>", lx, top + 138);
	cd_svg_text(out, lx + 20, top + 149, "tick", "start", "not run");
	cd_svg_close(out);
	fig_close(out);
}

/* ---- the library against the kernel ---- */

static void accuracy_timeline(FILE *out, int k, const struct cd_jv *clock)
{
	const struct cd_jv *slices = cd_jv_path(clock, "timeline.slices");
	double tmax = 0, emax = 1;
	int n = 0;
	for (const struct cd_jv *s = cd_jv_first(slices); s; s = s->next, n++) {
		tmax = fmax(tmax, cd_jv_getnum(s, "t_s", 0));
		emax = fmax(emax, cd_jv_getnum(s, "bound_ns", 0));
		emax = fmax(emax, fabs(cd_jv_getnum(s, "min_ns", 0)));
		emax = fmax(emax, fabs(cd_jv_getnum(s, "max_ns", 0)));
	}
	double slice = cd_jv_num(cd_jv_get(cd_jv_get(clock, "timeline"), "slice_s"), 0);
	double cut = cd_jv_getnum(clock, "cut_ns", 0);
	tmax += slice;
	const double left = 80, right = W - 20, top = 24, bottom = 250;
	struct cd_svg_scale x, y;
	cd_svg_scale_init(&x, 0, tmax > 0 ? tmax : 1, left, right, false);
	cd_svg_scale_init(&y, -emax * 1.1, emax * 1.1, bottom, top, false);
	char id[48], title[200];
	snprintf(id, sizeof id, "acc-time-%d", k);
	snprintf(title, sizeof title, "%s against %s over the run", cd_jv_getstr(clock, "name", "?"),
	         cd_jv_getstr(clock, "kernel", "?"));
	cd_svg_open(out, id, W, (int)bottom + 46, title,
	            "the error's least and greatest in each slice of the run, inside the stated bound's band");
	cd_svg_text(out, left, 14, "name", "start", title);
	cd_svg_axis_y(out, &y, left, right, cd_svg_fmt_ns, "error (ns)");
	cd_svg_axis_x(out, &x, bottom, top, cd_svg_fmt_plain, "time into the run (s)");
	/* the band: +-bound, slice by slice */
	fputs("<path class=\"band\" d=\"", out);
	int i = 0;
	for (const struct cd_jv *s = cd_jv_first(slices); s; s = s->next, i++) {
		double t = cd_jv_getnum(s, "t_s", 0), b = cd_jv_getnum(s, "bound_ns", 0);
		fprintf(out, "%s%.1f %.1fL%.1f %.1f", i ? "L" : "M", cd_svg_map(&x, t), cd_svg_map(&y, b),
		        cd_svg_map(&x, t + slice), cd_svg_map(&y, b));
	}
	/* back along the lower edge, in reverse order: walk again and buffer */
	double pts[2 * 256];
	int np = 0;
	for (const struct cd_jv *s = cd_jv_first(slices); s && np < 256; s = s->next) {
		pts[2 * np] = cd_jv_getnum(s, "t_s", 0);
		pts[2 * np + 1] = cd_jv_getnum(s, "bound_ns", 0);
		np++;
	}
	for (int j = np - 1; j >= 0; j--)
		fprintf(out, "L%.1f %.1fL%.1f %.1f", cd_svg_map(&x, pts[2 * j] + slice), cd_svg_map(&y, -pts[2 * j + 1]),
		        cd_svg_map(&x, pts[2 * j]), cd_svg_map(&y, -pts[2 * j + 1]));
	fputs(np ? "Z\"/>\n" : "\"/>\n", out);
	for (const struct cd_jv *s = cd_jv_first(slices); s; s = s->next) {
		if (!cd_jv_is_num(cd_jv_get(s, "min_ns")))
			continue;
		double t = cd_jv_getnum(s, "t_s", 0), mn = cd_jv_getnum(s, "min_ns", 0), mx = cd_jv_getnum(s, "max_ns", 0);
		double b = cd_jv_getnum(s, "bound_ns", 0);
		double xm = cd_svg_map(&x, t + slice / 2);
		double ya = cd_svg_map(&y, mx), yb = cd_svg_map(&y, mn);
		/* beyond the bound by more than a kept bracket's half-width: outside for certain */
		bool over = fmax(fabs(mn), fabs(mx)) > b + cut / 2;
		char tt[200];
		snprintf(tt, sizeof tt, "%.3f s: error %.1f to %.1f ns over %.0f readings; bound %.0f ns", t, mn, mx,
		         cd_jv_getnum(s, "kept", 0), b);
		fprintf(out,
		        "<rect class=\"mark err%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-t-s=\"%.4g\" "
		        "data-min-ns=\"%.1f\" data-max-ns=\"%.1f\" data-bound-ns=\"%.0f\">",
		        over ? " over" : "", xm - 1.5, ya, 3.0, fmax(yb - ya, 1.5), t, mn, mx, b);
		mark_title(out, tt);
		fputs("</rect>\n", out);
	}
	cd_svg_close(out);
}

void cd_rpt_chart_accuracy(FILE *out, const struct cd_rpt *r)
{
	const struct cd_jv *acc = cd_rpt_doc(r, CD_RPT_ACCURACY);
	const struct cd_jv *clocks = cd_jv_get(acc, "clocks");
	const char *title = "libfastclock against the kernel's clocks";
	if (!cd_jv_first(clocks)) {
		no_part(out, r, CD_RPT_ACCURACY, "accuracy", title,
		        !acc ? "Measured: nothing. The library is held against the kernel by `clockdoctor accuracy`; "
		               "none is in this report."
		             : "The comparison could not run here.");
		return;
	}
	bool have_timeline = false;
	for (const struct cd_jv *c = cd_jv_first(clocks); c; c = c->next)
		have_timeline |= cd_jv_first(cd_jv_path(c, "timeline.slices")) != NULL;
	fig_open(out, "accuracy", title,
	         "Each reading of the library between two readings of the kernel's clock: its error, the least and "
	         "greatest in each slice of the run (thread 0's readings), inside the band of the bound the library "
	         "states (fc_info); then how the errors of every kept reading are spread, in power-of-two buckets.");
	int k = 0;
	for (const struct cd_jv *c = cd_jv_first(clocks); c; c = c->next, k++) {
		if (cd_jv_first(cd_jv_path(c, "timeline.slices")))
			accuracy_timeline(out, k, c);
	}
	if (!have_timeline)
		fputs("<p class=\"nothing\">This accuracy report holds no timeline (written by an older clockdoctor): the "
		      "error over the run cannot be drawn.</p>\n", out);
	fputs("<div class=\"multiples\">\n", out);
	double bound = cd_jv_num(cd_jv_path(acc, "error_bound.max_ns"), 0);
	char bl[64];
	snprintf(bl, sizeof bl, "bound %.0f ns", bound);
	k = 0;
	for (const struct cd_jv *c = cd_jv_first(clocks); c; c = c->next, k++) {
		if (!cd_jv_first(cd_jv_get(c, "histogram")))
			continue;
		char id[48], t[160];
		snprintf(id, sizeof id, "acc-dist-%d", k);
		snprintf(t, sizeof t, "|error| of %s", cd_jv_getstr(c, "name", "?"));
		log2_hist(out, id, t, cd_jv_get(c, "histogram"), 440, 200, "|error| (ns)", bound, bl);
	}
	fputs("</div>\n", out);
	fig_close(out);
}

/* ---- top: who pays, over time ---- */

#define TOP_LINES 8

/* One interval's calls a second: every process's (pid < 0), or one's. */
static double top_rate(const struct cd_jv *d, double pid)
{
	if (pid < 0)
		return cd_jv_num(cd_jv_path(d, "total.calls_per_s"), 0);
	for (const struct cd_jv *x = cd_jv_first(cd_jv_get(d, "processes")); x; x = x->next)
		if (cd_jv_num(cd_jv_get(x, "pid"), -1) == pid)
			return cd_jv_num(cd_jv_get(x, "calls_per_s"), 0);
	return 0;
}

struct top_proc {
	double pid, calls;
	size_t seen;              /* the order it was met in: the first comm is kept */
	const char *comm;
};

static int by_pid(const void *a, const void *b)
{
	const struct top_proc *x = a, *y = b;
	return x->pid != y->pid ? (x->pid < y->pid ? -1 : 1) : (x->seen > y->seen) - (x->seen < y->seen);
}

static int by_calls(const void *a, const void *b)
{
	const struct top_proc *x = a, *y = b;
	return x->calls != y->calls ? (x->calls > y->calls ? -1 : 1) : by_pid(a, b);
}

/* The TOP_LINES processes with the most calls over every interval, into
 * best; how many. */
static int top_payers(const struct cd_rpt_input *in, struct top_proc *best)
{
	size_t n = 0, cap = 0;
	struct top_proc *all = NULL;
	for (int i = 0; i < in->n; i++)
		for (const struct cd_jv *x = cd_jv_first(cd_jv_get(cd_json_root(in->doc[i]), "processes")); x;
		     x = x->next) {
			double pid = cd_jv_num(cd_jv_get(x, "pid"), -1);
			if (!(pid >= 0))
				continue; /* no pid: no line of its own (-1 is every process) */
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				struct top_proc *na = realloc(all, ncap * sizeof *na);
				if (!na)
					break;
				all = na;
				cap = ncap;
			}
			all[n] = (struct top_proc){ pid, cd_jv_num(cd_jv_get(x, "calls"), 0), n,
			                            cd_jv_getstr(x, "comm", "?") };
			n++;
		}
	if (!all)
		return 0;
	qsort(all, n, sizeof *all, by_pid);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m > 0 && all[m - 1].pid == all[i].pid)
			all[m - 1].calls += all[i].calls;
		else
			all[m++] = all[i];
	}
	qsort(all, m, sizeof *all, by_calls);
	int k = m < TOP_LINES ? (int)m : TOP_LINES;
	memcpy(best, all, (size_t)k * sizeof *best);
	free(all);
	return k;
}

void cd_rpt_chart_top(FILE *out, const struct cd_rpt *r)
{
	const struct cd_rpt_input *in = &r->in[CD_RPT_TOP];
	const char *title = "Time system calls per process, over time";
	if (in->n == 0) {
		no_part(out, r, CD_RPT_TOP, "top", title,
		        "Not traced. `clockdoctor report --top SECONDS` (as root) traces which processes make time "
		        "system calls, as `clockdoctor top` does.");
		return;
	}
	/* The processes with the most calls in all: every entry of every
	 * interval gathered, summed by pid (a process that starts late, after
	 * many short-lived ones, still counts), the largest kept. */
	struct top_proc p[TOP_LINES];
	int np = top_payers(in, p);
	double t0 = cd_jv_num(cd_jv_get(cd_json_root(in->doc[0]), "time"), 0) -
	            cd_jv_num(cd_jv_get(cd_json_root(in->doc[0]), "seconds"), 0);
	double tmax = 0, ymax = 1;
	for (int i = 0; i < in->n; i++) {
		const struct cd_jv *d = cd_json_root(in->doc[i]);
		tmax = fmax(tmax, cd_jv_num(cd_jv_get(d, "time"), 0) - t0);
		ymax = fmax(ymax, cd_jv_num(cd_jv_path(d, "total.calls_per_s"), 0));
	}
	fig_open(out, "top", title,
	         "Calls a second that missed the vDSO and entered the kernel (clock_gettime, gettimeofday, time), "
	         "every process together and the processes that made the most, interval by interval.");
	const double left = 80, right = W - 190, top = 20, bottom = 250;
	struct cd_svg_scale x, y;
	cd_svg_scale_init(&x, 0, tmax > 0 ? tmax : 1, left, right, false);
	cd_svg_scale_init(&y, 0, ymax * 1.1, bottom, top, false);
	cd_svg_open(out, "top", W, (int)bottom + 46, title, "time system calls a second per process over time");
	cd_svg_axis_y(out, &y, left, right, cd_svg_fmt_plain, "calls a second");
	cd_svg_axis_x(out, &x, bottom, top, cd_svg_fmt_plain, "time (s)");
	for (int line = -1; line < np; line++) {
		fprintf(out, "<g class=\"series s%d\">", line + 1);
		char name[120];
		if (line < 0)
			snprintf(name, sizeof name, "every process");
		else
			snprintf(name, sizeof name, "%.0f %.60s", p[line].pid, p[line].comm);
		fputs("<polyline class=\"line\" points=\"", out);
		for (int i = 0; i < in->n; i++) {
			const struct cd_jv *d = cd_json_root(in->doc[i]);
			double t = cd_jv_num(cd_jv_get(d, "time"), 0) - t0;
			double v = top_rate(d, line < 0 ? -1 : p[line].pid);
			fprintf(out, "%s%.1f,%.1f", i ? " " : "", cd_svg_map(&x, t), cd_svg_map(&y, v));
		}
		fputs("\"/>", out);
		for (int i = 0; i < in->n; i++) {
			const struct cd_jv *d = cd_json_root(in->doc[i]);
			double t = cd_jv_num(cd_jv_get(d, "time"), 0) - t0;
			double v = top_rate(d, line < 0 ? -1 : p[line].pid);
			char tt[200];
			snprintf(tt, sizeof tt, "%s at %.1f s: %.6g calls/s", name, t, v);
			fprintf(out, "<circle class=\"mark pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" data-t-s=\"%.3g\" data-calls-per-s=\"%.6g\" data-who=\"",
			        cd_svg_map(&x, t), cd_svg_map(&y, v), t, v);
			cd_html_esc(out, name);
			fputs("\">", out);
			mark_title(out, tt);
			fputs("</circle>", out);
		}
		fprintf(out, "<rect class=\"key\" x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\"/>", right + 16,
		        top + 18.0 * (line + 1));
		cd_svg_text(out, right + 32, top + 10 + 18.0 * (line + 1), "tick", "start", name);
		fputs("</g>\n", out);
	}
	cd_svg_close(out);
	fig_close(out);
}
