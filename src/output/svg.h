/* SPDX-License-Identifier: MIT */
/*
 * svg.h: the pieces every chart of `clockdoctor report` is drawn with:
 * scales (linear or log10), axes with ticks, their units and labels, and
 * the frame.  Colours are CSS classes, so that the page's style sheet sets
 * them for light, dark and print alike.  Text goes through cd_html_esc.
 */
#ifndef CD_OUTPUT_SVG_H
#define CD_OUTPUT_SVG_H

#include <stdbool.h>
#include <stdio.h>

/* Domain [d0, d1] onto the range [r0, r1] (pixels). */
struct cd_svg_scale {
	double d0, d1, r0, r1;
	bool log;                 /* log10: d0 and d1 above 0 */
};

/* A scale; a log one snaps its domain out to powers of ten, and an empty
 * domain (d0 == d1) is widened so that nothing divides by zero. */
void cd_svg_scale_init(struct cd_svg_scale *s, double d0, double d1, double r0, double r1, bool log);
double cd_svg_map(const struct cd_svg_scale *s, double v);

/* Up to max tick values between the domain's ends: powers of ten on a log
 * scale, 1-2-5 steps on a linear one.  Returns how many. */
int cd_svg_ticks(const struct cd_svg_scale *s, double *ticks, int max);

/* A tick's label: the number with a unit. */
typedef void (*cd_svg_fmt)(char *buf, size_t cap, double v);
void cd_svg_fmt_ns(char *buf, size_t cap, double v);      /* cd_fmt_duration_ns's units */
void cd_svg_fmt_plain(char *buf, size_t cap, double v);   /* %g */

/* <svg> with a viewBox of w x h, role img, and a <title> and <desc> (escaped);
 * id names it for the tests and the page's links. */
void cd_svg_open(FILE *out, const char *id, int w, int h, const char *title, const char *desc);
void cd_svg_close(FILE *out);

/* An axis along the bottom (x) at pixel y from the scale's r0 to r1, or
 * along the left (y) at pixel x; gridlines across to `across` (the other
 * side of the plot); label: the axis's name with its unit. */
void cd_svg_axis_x(FILE *out, const struct cd_svg_scale *s, double y, double across, cd_svg_fmt fmt,
                   const char *label);
void cd_svg_axis_y(FILE *out, const struct cd_svg_scale *s, double x, double across, cd_svg_fmt fmt,
                   const char *label);

/* Text at (x, y) with a CSS class and anchor ("start", "middle", "end"). */
void cd_svg_text(FILE *out, double x, double y, const char *cls, const char *anchor, const char *text);

#endif
