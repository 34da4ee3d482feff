/* SPDX-License-Identifier: MIT */
/*
 * promdest.c: whether node_exporter serves the textfile (promdest.h).
 */
#include "output/promdest.h"
#include "output/wrap.h"
#include "util/atomicfile.h"
#include "util/printable.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NE 8

/* The folder of path, resolved (links and ..) where it exists. */
static void folder_of(const char *path, char *out, size_t cap)
{
	char dir[PATH_MAX];
	if (cd_parent_dir(path, dir, sizeof dir) < 0)
		snprintf(dir, sizeof dir, ".");
	char real[PATH_MAX];
	const char *d = realpath(dir, real) ? real : dir;
	cd_printable_copy(out, cap, d, strlen(d));
}

/* Where ne was found, in words. */
static void source_of(const struct cd_node_exporter *ne, char *out, size_t cap)
{
	/* Not "not running": a sandbox (ProtectProc=invisible) may hide a
	 * running one, and its unit is then what is known. */
	if (ne->from == CD_NE_PROCESS)
		snprintf(out, cap, "pid %d: %s", ne->pid, ne->source);
	else
		snprintf(out, cap, "as %s starts it", ne->source);
}

/* One message, wrapped under "clockdoctor CMD: " (paths kept whole). */
__attribute__((format(printf, 3, 4)))
static void say(FILE *out, const char *cmd, const char *fmt, ...)
{
	char text[4 * PATH_MAX], lead[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	snprintf(lead, sizeof lead, "clockdoctor %s: ", cmd);
	struct cd_wrap_opts o = { .lead = lead, .indent = 2, .whole_words = true };
	cd_wrap_with(out, text, &o);
}

int cd_prom_dest_say(FILE *out, const char *cmd, const char *path, const struct cd_node_exporter *ne, int n)
{
	char shown[PATH_MAX], folder[PATH_MAX], from[400];
	cd_printable_copy(shown, sizeof shown, path, strlen(path));
	folder_of(path, folder, sizeof folder);
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t len = strlen(name);
	int warnings = 0;
	if (len < 6 || strcmp(name + len - 5, ".prom") != 0 || name[0] == '.') {
		say(out, cmd, "warning: node_exporter's textfile collector reads only files named *.prom (and "
		    "not hidden): it will never read %s", shown);
		warnings++;
	}
	int match = -1;
	for (int i = 0; i < n && match < 0; i++) {
		char dir[PATH_MAX];
		const char *d = ne[i].reads && realpath(ne[i].dir, dir) ? dir : ne[i].dir;
		if (ne[i].reads && strcmp(d, folder) == 0)
			match = i;
	}
	if (match >= 0) {
		source_of(&ne[match], from, sizeof from);
		say(out, cmd, "metrics to %s, a folder node_exporter reads (%s)", shown, from);
		return warnings;
	}
	if (n == 0) {
		say(out, cmd, "warning: metrics to %s, but no node_exporter was found here (no process, no "
		    "prometheus-node-exporter.service or node_exporter.service): nothing serves them until one "
		    "runs with --collector.textfile.directory=%s", shown, folder);
		return warnings + 1;
	}
	for (int i = 0; i < n; i++) {
		source_of(&ne[i], from, sizeof from);
		if (ne[i].reads)
			say(out, cmd, "warning: metrics to %s, but node_exporter (%s) reads %s: it will not serve "
			    "them. Write into %s, or give node_exporter --collector.textfile.directory=%s", shown, from,
			    ne[i].dir, ne[i].dir, folder);
		else
			say(out, cmd, "warning: metrics to %s, but node_exporter (%s) reads no textfile: %s. Give it "
			    "--collector.textfile.directory=%s", shown, from,
			    ne[i].disabled ? "its textfile collector is off" : "it has no --collector.textfile.directory",
			    folder);
	}
	return warnings + 1;
}

int cd_prom_dest_check(FILE *out, const char *cmd, const char *path)
{
	struct cd_node_exporter ne[MAX_NE];
	int n = cd_node_exporters("/", ne, MAX_NE);
	return cd_prom_dest_say(out, cmd, path, ne, n);
}
