/* SPDX-License-Identifier: MIT */
/*
 * promdest.h: what `check --prometheus-file` and `watch --prometheus-file`
 * say about the file they write: where it is, and whether node_exporter
 * on this machine will serve it (its name ends in .prom and is not hidden,
 * in the folder its textfile collector reads: probe/nodeexporter.h).  A
 * file node_exporter never reads raises no alert of its own, so this is
 * said every time, to stderr (the unit's journal).
 */
#ifndef CD_OUTPUT_PROMDEST_H
#define CD_OUTPUT_PROMDEST_H

#include <stdio.h>

#include "probe/nodeexporter.h"

/* Say to out, for command cmd ("check", "watch"), where path goes and
 * whether one of the n node_exporters found (cd_node_exporters) serves it.
 * Returns the number of warnings said (0: it will be served). */
int cd_prom_dest_say(FILE *out, const char *cmd, const char *path, const struct cd_node_exporter *ne, int n);

/* The same for this machine: its node_exporters found, then said. */
int cd_prom_dest_check(FILE *out, const char *cmd, const char *path);

#endif
