/* SPDX-License-Identifier: MIT */
/*
 * kmsg.h: following the kernel log as it is written (`clockdoctor watch`).
 *
 * /dev/kmsg gives one record a read(): "PRI,SEQ,USEC,FLAGS;message\n",
 * then " KEY=value\n" lines.  Opened O_NONBLOCK and placed at the end
 * (SEEK_END), it yields only what the kernel logs from now on; a reader that
 * falls behind the ring buffer gets EPIPE once, and the next read goes on
 * from the oldest record still there (the records in between are lost, and
 * counted).  A regular file or a FIFO (tests, or a log copied by hand) is
 * followed like `tail -F`: read to its end on each poll, from the start
 * again when it shrinks (the log was cleared).
 *
 * The watchdog reports one rejection over several lines (the header, then
 * the wd_nsec and cs_nsec lines, then "skewed"), which klog.c joins into
 * one event when it parses them together.  struct cd_kgroup holds a
 * multi-line report until it is complete: until a line that starts a new
 * event arrives, or a second passes without one.
 */
#ifndef CD_KMSG_H
#define CD_KMSG_H

#include "probe/facts.h"

#include <stdbool.h>
#include <stddef.h>

#define CD_KMSG_BUF 16384

struct cd_kmsg {
	int fd;                     /* -1 when closed */
	bool device;                /* a character device (/dev/kmsg): poll()able, one record a read */
	char path[256];
	unsigned long long lost;    /* records overwritten before they were read (EPIPE) */
	int resets;                 /* times a followed file shrank (cleared) */
	long long offset;           /* a regular file: how far it was read */
	size_t have;                /* bytes in buf not yet returned */
	char buf[CD_KMSG_BUF];
};

/* Open path (NULL: /dev/kmsg) for following.  from_start: the records
 * already there too (for /dev/kmsg, the whole ring buffer).  0, or -errno
 * (-EPERM/-EACCES: kernel.dmesg_restrict without CAP_SYSLOG). */
int cd_kmsg_open(struct cd_kmsg *k, const char *path, bool from_start);

/* The next whole line, NUL-terminated, into line; 1 when one was returned,
 * 0 when there is none now, -errno when the log cannot be read any more
 * (then close and open again later).  Never blocks. */
int cd_kmsg_line(struct cd_kmsg *k, char *line, size_t cap);

void cd_kmsg_close(struct cd_kmsg *k);

/* Priority and sequence of a /dev/kmsg line ("12,345,..."): true when the
 * line is a record's first line.  facility 0 is the kernel; 1 (user) is a
 * process that wrote to /dev/kmsg. */
bool cd_kmsg_prefix(const char *line, int *facility, int *level, unsigned long long *seq);

/* ---- grouping lines into events ---- */

#define CD_KGROUP_TEXT 8192
#define CD_KGROUP_WAIT_S 1.0

struct cd_kgroup_event {
	struct cd_event ev;
	int facility, level;        /* of the group's first record; -1 when the line had no prefix */
	char raw[1024];             /* the lines, prefixes stripped, joined with '\n' */
};

struct cd_kgroup {
	char text[CD_KGROUP_TEXT];  /* the held lines, as read */
	size_t len;
	int lines;
	int held_events;            /* events the held text parses into */
	double deadline;            /* flush when now passes this */
	struct cd_klog *scratch;    /* parse space (malloc'd) */
};

int cd_kgroup_init(struct cd_kgroup *g);
void cd_kgroup_free(struct cd_kgroup *g);

/* Feed one line read at time now (seconds, any monotonic clock).  Events
 * that are complete go to out (at most max); returns how many. */
int cd_kgroup_feed(struct cd_kgroup *g, const char *line, double now, struct cd_kgroup_event *out, int max);

/* Events of held lines once their wait is over (or at once when force). */
int cd_kgroup_flush(struct cd_kgroup *g, double now, bool force, struct cd_kgroup_event *out, int max);

/* Seconds until the held lines are due (< 0: nothing held). */
double cd_kgroup_due(const struct cd_kgroup *g, double now);

/* The name watch reports a kernel log event as ("watchdog-skew",
 * "tsc-unstable", ...), or NULL for events that are no clocksource news
 * (frequencies, the boot banner, watchdog noise). */
const char *cd_watch_event_type(enum cd_event_kind kind);

#endif
