/* SPDX-License-Identifier: MIT */
/*
 * nodeexporter.h: the folder node_exporter's textfile collector reads on
 * this machine, and what says so, so that `check --prometheus-file` and
 * `watch --prometheus-file` can tell whether the file they write will be
 * served.
 *
 * node_exporter reads *.prom in its --collector.textfile.directory.
 * Upstream's default for that flag is empty (no folder is read); Debian's
 * package (the binary /usr/bin/prometheus-node-exporter) is built with
 * /var/lib/prometheus/node-exporter as the default, and its unit passes
 * $ARGS from /etc/default/prometheus-node-exporter, empty as shipped.  The
 * folder is found, in this order, from:
 *   1. every running node_exporter's command line (/proc/PID/cmdline);
 *   2. else the unit that would start it (prometheus-node-exporter.service,
 *      node_exporter.service or node-exporter.service: its ExecStart=, with
 *      the variables of its EnvironmentFile= and Environment= lines);
 *   3. else Debian's defaults file with Debian's binary.
 * Nothing here decides where a file is written: a command line any user
 * can forge only changes what is said.
 */
#ifndef CD_PROBE_NODEEXPORTER_H
#define CD_PROBE_NODEEXPORTER_H

#include <stdbool.h>
#include <stddef.h>

/* Debian's prometheus-node-exporter: its binary and the folder it reads
 * when given no --collector.textfile.directory. */
#define CD_NE_DEBIAN_BINARY "prometheus-node-exporter"
#define CD_NE_DEBIAN_DIR "/var/lib/prometheus/node-exporter"
#define CD_NE_DEBIAN_DEFAULTS "/etc/default/prometheus-node-exporter"

enum cd_ne_from { CD_NE_PROCESS = 1, CD_NE_UNIT, CD_NE_DEFAULTS };

struct cd_node_exporter {
	enum cd_ne_from from;
	int pid;                  /* CD_NE_PROCESS */
	char source[300];         /* the file that says so (printable) */
	bool reads;               /* its textfile collector is on and has a folder */
	bool disabled;            /* --no-collector.textfile, or --collector.disable-defaults */
	char dir[1024];           /* the folder when reads (printable) */
};

/* The node_exporters of the machine under root ("/" for this one): every
 * running one (at most max), or else the one its unit or Debian's defaults
 * file would start.  Returns the count, 0 when none is found. */
int cd_node_exporters(const char *root, struct cd_node_exporter *ne, int max);

/* Whether argv[0] names node_exporter (node_exporter, or Debian's
 * prometheus-node-exporter). */
bool cd_ne_is_node_exporter(const char *argv0);

/* Fill ne's reads, disabled and dir from node_exporter's arguments
 * (argv[0] the program): kingpin's --flag=value and --flag value, the last
 * one given winning. */
void cd_ne_parse_args(int argc, char *const *argv, struct cd_node_exporter *ne);

/* Split a systemd ExecStart= value into argv (max entries, strings in buf
 * of cap bytes): the prefixes -@:+! dropped, "..." and '...' quoting,
 * $NAME split into words and ${NAME} kept one, from the env entries
 * ("NAME=value", n of them).  Returns argc, or -1 when it does not fit. */
int cd_ne_split_exec(const char *line, char *const *env, int n, char **argv, int max, char *buf, size_t cap);

#endif
