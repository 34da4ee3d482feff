/* SPDX-License-Identifier: MIT */
/*
 * svg.c: scales, axes and frames of the report's charts (svg.h).
 */
#include "output/svg.h"
#include "output/duration.h"
#include "output/html.h"

#include <math.h>
#include <stdio.h>

void cd_svg_scale_init(struct cd_svg_scale *s, double d0, double d1, double r0, double r1, bool log)
{
	if (!isfinite(d0) || !isfinite(d1)) {
		d0 = 0;
		d1 = 1;
	}
	if (d0 > d1) {
		double t = d0;
		d0 = d1;
		d1 = t;
	}
	if (log) {
		if (d0 <= 0)
			d0 = d1 > 0 ? d1 / 10 : 1;
		if (d1 <= 0)
			d1 = 10;
		d0 = pow(10, floor(log10(d0)));
		d1 = pow(10, ceil(log10(d1)));
		if (d1 <= d0)
			d1 = d0 * 10;
	} else if (d1 - d0 < 1e-12 * (fabs(d0) + fabs(d1)) || d1 == d0) {
		double pad = d0 == 0 ? 1 : fabs(d0) * 0.1;
		d0 -= pad;
		d1 += pad;
	}
	*s = (struct cd_svg_scale){ d0, d1, r0, r1, log };
}

double cd_svg_map(const struct cd_svg_scale *s, double v)
{
	double t;
	if (s->log) {
		if (v <= s->d0)
			v = s->d0;
		t = (log10(v) - log10(s->d0)) / (log10(s->d1) - log10(s->d0));
	} else {
		t = (v - s->d0) / (s->d1 - s->d0);
	}
	if (!isfinite(t))
		t = 0;
	if (t < -0.05)
		t = -0.05;
	if (t > 1.05)
		t = 1.05;
	return s->r0 + t * (s->r1 - s->r0);
}

int cd_svg_ticks(const struct cd_svg_scale *s, double *ticks, int max)
{
	int n = 0;
	if (s->log) {
		for (double v = s->d0; v <= s->d1 * 1.0001 && n < max; v *= 10)
			ticks[n++] = v;
		return n;
	}
	double span = s->d1 - s->d0;
	double raw = span / 5;
	double mag = pow(10, floor(log10(raw)));
	double step = raw / mag >= 5 ? 5 * mag : raw / mag >= 2 ? 2 * mag : mag;
	for (double v = ceil(s->d0 / step) * step; v <= s->d1 + step * 1e-9 && n < max; v += step)
		ticks[n++] = fabs(v) < step * 1e-9 ? 0 : v;
	return n;
}

void cd_svg_fmt_ns(char *buf, size_t cap, double v)
{
	if (v < 0) {
		cd_fmt_duration_ns(buf + 1, cap - 1, -v);
		buf[0] = '-';
		return;
	}
	cd_fmt_duration_ns(buf, cap, v);
}

void cd_svg_fmt_plain(char *buf, size_t cap, double v)
{
	snprintf(buf, cap, "%g", v);
}

void cd_svg_open(FILE *out, const char *id, int w, int h, const char *title, const char *desc)
{
	fprintf(out, "<svg class=\"chart\" id=\"");
	cd_html_esc(out, id);
	fprintf(out, "\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\"><title>", w, h, w, h);
	cd_html_esc(out, title);
	fputs("</title><desc>", out);
	cd_html_esc(out, desc);
	fputs("</desc>\n", out);
}

void cd_svg_close(FILE *out)
{
	fputs("</svg>\n", out);
}

void cd_svg_text(FILE *out, double x, double y, const char *cls, const char *anchor, const char *text)
{
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"%s\" text-anchor=\"%s\">", x, y, cls, anchor);
	cd_html_esc(out, text);
	fputs("</text>", out);
}

/* An axis: along the bottom at pixel `at` (x), or along the left (y). */
static void axis(FILE *out, const struct cd_svg_scale *s, bool vertical, double at, double across, cd_svg_fmt fmt,
                 const char *label)
{
	double t[16];
	int n = cd_svg_ticks(s, t, 16);
	fprintf(out, "<g class=\"axis %s\">", vertical ? "y" : "x");
	for (int i = 0; i < n; i++) {
		double v = cd_svg_map(s, t[i]);
		char buf[48];
		fmt(buf, sizeof buf, t[i]);
		/* the gridline across the plot, then the tick's label */
		double x1 = vertical ? at : v, x2 = vertical ? across : v;
		double y1 = vertical ? v : across, y2 = vertical ? v : at;
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", x1, x2, y1, y2);
		if (vertical)
			cd_svg_text(out, at - 4, v + 4, "tick", "end", buf);
		else
			cd_svg_text(out, v, at + 14, "tick", "middle", buf);
	}
	if (vertical)
		fprintf(out, "<line class=\"frame\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", at, at, s->r0, s->r1);
	else
		fprintf(out, "<line class=\"frame\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", s->r0, s->r1, at, at);
	double mid = (s->r0 + s->r1) / 2;
	if (vertical) {
		fprintf(out, "<text class=\"label\" text-anchor=\"middle\" transform=\"translate(12 %.1f) rotate(-90)\">", mid);
		cd_html_esc(out, label);
		fputs("</text>", out);
	} else {
		cd_svg_text(out, mid, at + 30, "label", "middle", label);
	}
	fputs("</g>\n", out);
}

void cd_svg_axis_x(FILE *out, const struct cd_svg_scale *s, double y, double across, cd_svg_fmt fmt,
                   const char *label)
{
	axis(out, s, false, y, across, fmt, label);
}

void cd_svg_axis_y(FILE *out, const struct cd_svg_scale *s, double x, double across, cd_svg_fmt fmt,
                   const char *label)
{
	axis(out, s, true, x, across, fmt, label);
}
