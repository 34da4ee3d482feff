/* SPDX-License-Identifier: MIT */
/*
 * watchreport.h: what `clockdoctor watch` writes: one line of text or of
 * JSON an event, the node_exporter textfile, and a hook's environment
 * (docs/watch.md).  Every event's fields are built once (event_fields in
 * watchreport.c), so the three forms always carry the same evidence.
 */
#ifndef CD_WATCHREPORT_H
#define CD_WATCHREPORT_H

#include "probe/kmsg.h"

#include <stdio.h>

struct cd_watch_event {
	const char *type;            /* "clocksource-changed", "clocksource-unreadable", or a kernel
	                                log event's (cd_watch_event_type) */
	const char *source;          /* "sysfs" or "kmsg" */
	double unix_time;            /* when watch saw it */
	char from[CD_NAME_MAX];      /* clocksource-changed */
	char to[CD_NAME_MAX];
	char error[160];             /* clocksource-unreadable */
	bool kernel;                 /* from the kernel log: k holds it */
	struct cd_kgroup_event k;
};

/* Every type watch reports, in the order of the textfile. */
#define CD_WATCH_N_TYPES 11
extern const char *const cd_watch_types[CD_WATCH_N_TYPES];

struct cd_watch_state {
	double start_time;           /* Unix time */
	bool cs_readable;
	char current[CD_NAME_MAX];
	int vdso;                    /* the current clocksource: 1 read by the vDSO, 0 a system call
	                                every call, -1 depends on the host or unknown */
	bool kmsg_readable;
	unsigned long long kmsg_lost;
	unsigned long long changes;  /* clocksource changes seen through sysfs */
	double last_change;          /* Unix time, 0 never */
	unsigned long long count[CD_WATCH_N_TYPES];
	double last[CD_WATCH_N_TYPES];
	bool syscalls_counting;      /* --syscalls: the counters below are exported */
	unsigned long long syscalls; /* time system calls, every process, in all the counts so far */
	double syscall_count_s;      /* seconds those counts lasted, together */
};

/* Count e in s (changes, per-type counts and times). */
void cd_watch_count(struct cd_watch_state *s, const struct cd_watch_event *e);

/* One line (two for kernel log events: the log line itself, indented). */
void cd_watch_text(FILE *out, const struct cd_watch_event *e);
/* One JSON object on one line. */
void cd_watch_json(FILE *out, const struct cd_watch_event *e);
/* The whole node_exporter textfile for state s at time now. */
void cd_watch_textfile(FILE *out, const struct cd_watch_state *s, double now);

/* The hook's environment: base (our own, NULL for none) without any
 * CLOCKDOCTOR_ variable, then CLOCKDOCTOR_EVENT and the event's fields
 * (CLOCKDOCTOR_JSON: the JSON line).  Strings live in buf; env gets at most
 * max - 1 pointers and a NULL.  Returns the count, or -ENOSPC. */
int cd_watch_env(const struct cd_watch_event *e, char *const *base, char *buf, size_t cap, char **env,
                 int max);

#endif
