/* SPDX-License-Identifier: MIT */
/*
 * histprint.h: a log2 histogram (measure/histogram.h) printed as bcc's
 * print_log2_hist prints it, so that people who read funclatency output
 * (bcc's tools/funclatency.py) read bench's the same way.
 */
#ifndef CD_HISTPRINT_H
#define CD_HISTPRINT_H

#include "measure/histogram.h"

#include <stdio.h>

/* The histogram as funclatency prints it, from the first non-empty bucket to
 * the last, each with a bar of up to 40 stars scaled to the fullest bucket,
 * then "avg = A unit, total: T unit, count: N".  Prints nothing when the
 * histogram is empty. */
void cd_hist_print(FILE *out, const struct cd_hist *h, const char *unit);

#endif
