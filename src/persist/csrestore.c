/* SPDX-License-Identifier: MIT */
/*
 * csrestore.c: the record of the clocksource to put back, and the recovery
 * that reads it (csrestore.h).
 *
 * The record of the original is the only thing that survives a SIGKILL, so
 * it is written, complete, before anything is switched: to a temporary file
 * that is then hard-linked to its name (link fails if the name exists, so two
 * runs cannot both believe they own the machine's clocksource) and synced
 * with its folder.  A reader either sees the whole record or none.
 *
 * Format (text, one "key value" a line after a fixed first line):
 *
 *   clockdoctor clocksource record 1
 *   original tsc
 *   pid 1234
 *   comm clockdoctor
 *   since 1795381234
 *   boot 5d1c...        (/proc/sys/kernel/random/boot_id)
 *   start 123456        (the process's start time, /proc/PID/stat field 22)
 *
 * pid, comm and start tell whether the run that wrote it is still going (a
 * pid reused by another process does not count); boot tells a record left
 * by another boot, which is dropped: the kernel chose its clocksource anew.
 *
 * The record is written as root into a folder that must be ours (created
 * 0700, owned by us, not writable by others), with O_EXCL|O_NOFOLLOW: a
 * planted symlink never makes root overwrite another file.
 */
#include "persist/csrestore.h"
#include "persist/statedir.h"
#include "util/atomicfile.h"
#include "util/fsread.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RECORD_HEADER "clockdoctor clocksource record 1"

static const char *self_comm(char *buf, size_t len)
{
	int n = cd_read_raw("/proc/self/comm", buf, len, 0);
	if (n <= 0)
		return "clockdoctor";
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* A process's start time in clock ticks since boot (/proc/PID/stat field
 * 22), or 0 when unknown.  The name in field 2 may hold spaces and
 * parentheses: the fields are counted after its last ')'. */
static unsigned long long start_time(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if (cd_read_raw(path, buf, sizeof buf, 0) <= 0)
		return 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* After ')': field 3 is the state; field 22 is 20 fields on. */
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

int cd_cs_record_write(const struct cd_cs *cs, char *err, size_t errlen)
{
	int rc = cd_state_dir_ready(cs->state_dir, "the record", err, errlen);
	if (rc < 0)
		return rc;
	char tmp[PATH_MAX + 32], comm[64], boot[64], text[512];
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", cs->record_path, (long)getpid());
	cd_boot_id(boot, sizeof boot);
	int n = snprintf(text, sizeof text,
	                 RECORD_HEADER "\noriginal %s\npid %ld\ncomm %s\nsince %lld\nboot %s\nstart %llu\n",
	                 cs->original, (long)getpid(), self_comm(comm, sizeof comm), (long long)time(NULL),
	                 boot[0] ? boot : "unknown", start_time((long)getpid()));
	rc = cd_write_new(tmp, text, (size_t)n, 0600);
	if (rc < 0) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(-rc));
		return rc;
	}
	/* Linked, never renamed over: another run's record is never replaced. */
	rc = cd_publish(tmp, cs->record_path, false);
	if (rc == -EEXIST)
		snprintf(err, errlen, "another run's record appeared at %s", cs->record_path);
	else if (rc < 0)
		snprintf(err, errlen, "cannot write the record %s: %s", cs->record_path, strerror(-rc));
	return rc;
}

int cd_cs_record_remove(const struct cd_cs *cs)
{
	if (unlink(cs->record_path) != 0 && errno != ENOENT)
		return -errno;
	cd_sync_dir(cs->state_dir);
	return 0;
}

struct record {
	char original[CD_CS_NAME_MAX];
	long pid;
	char comm[32];
	long long since;
	char boot[64];              /* "" in records of older versions */
	unsigned long long start;   /* 0 when unknown */
};

/* Parse a record; false when it is not one. */
static bool parse_record(char *text, struct record *r)
{
	memset(r, 0, sizeof *r);
	char *save = NULL;
	char *line = strtok_r(text, "\n", &save);
	if (!line || strcmp(line, RECORD_HEADER) != 0)
		return false;
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		char *v = strchr(line, ' ');
		if (!v)
			return false;
		*v++ = '\0';
		if (strcmp(line, "original") == 0) {
			if (!cd_cs_name_valid(v))
				return false;
			strcpy(r->original, v);
		} else if (strcmp(line, "pid") == 0) {
			char *end;
			r->pid = strtol(v, &end, 10);
			if (*end || r->pid <= 0)
				return false;
		} else if (strcmp(line, "comm") == 0) {
			snprintf(r->comm, sizeof r->comm, "%s", v);
		} else if (strcmp(line, "since") == 0) {
			r->since = strtoll(v, NULL, 10);
		} else if (strcmp(line, "boot") == 0) {
			snprintf(r->boot, sizeof r->boot, "%s", strcmp(v, "unknown") == 0 ? "" : v);
		} else if (strcmp(line, "start") == 0) {
			r->start = strtoull(v, NULL, 10);
		}
	}
	return r->original[0] && r->pid > 0;
}

/* Whether the run that wrote the record is still going. */
static bool owner_running(const struct record *r)
{
	if (r->pid == (long)getpid())
		return false;
	if (kill((pid_t)r->pid, 0) != 0 && errno != EPERM)
		return false;
	/* The pid is alive: the same process only if it started when the record
	 * says (a reused pid, even another clockdoctor, is not the owner). */
	if (r->start && start_time(r->pid) != r->start)
		return false;
	char path[64], comm[64];
	snprintf(path, sizeof path, "/proc/%ld/comm", r->pid);
	if (!r->comm[0] || cd_read_raw(path, comm, sizeof comm, 0) <= 0)
		return true;
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, r->comm) == 0;
}

static enum cd_cs_recovery remove_record(const struct cd_cs *cs, enum cd_cs_recovery result, char *msg,
                                         size_t msglen)
{
	int rc = cd_cs_record_remove(cs);
	if (rc < 0) {
		size_t used = strlen(msg);
		snprintf(msg + used, msglen - used, " (and cannot remove %s: %s)", cs->record_path,
		         strerror(-rc));
		return CD_CS_FAILED;
	}
	return result;
}

/* A record that cannot be parsed: the original is unknown, so nothing is
 * switched; it is moved aside for a person to read. */
static enum cd_cs_recovery set_aside(const struct cd_cs *cs, char *msg, size_t msglen)
{
	char aside[PATH_MAX + 16];
	snprintf(aside, sizeof aside, "%s.corrupt", cs->record_path);
	bool moved = rename(cs->record_path, aside) == 0;
	snprintf(msg, msglen, "the record %s is corrupt, so the original clocksource is unknown: "
	         "%s; check %s by hand", cs->record_path, moved ? "kept it as *.corrupt" : "left it",
	         cs->current_path);
	return moved ? CD_CS_CORRUPT : CD_CS_FAILED;
}

enum cd_cs_recovery cd_cs_recover(struct cd_cs *cs, char *msg, size_t msglen)
{
	char text[1024];
	int n = cd_read_raw(cs->record_path, text, sizeof text, O_NOFOLLOW);
	if (n == -ENOENT) {
		snprintf(msg, msglen, "nothing to restore: no record at %s", cs->record_path);
		return CD_CS_NO_RECORD;
	}
	if (n < 0) {
		snprintf(msg, msglen, "cannot read %s: %s", cs->record_path, strerror(-n));
		return CD_CS_FAILED;
	}
	struct record r;
	if (!parse_record(text, &r))
		return set_aside(cs, msg, msglen);
	char boot[64];
	cd_boot_id(boot, sizeof boot);
	if (r.boot[0] && boot[0] && strcmp(r.boot, boot) != 0) {
		snprintf(msg, msglen, "the record of pid %ld (original %s) is from another boot: the kernel "
		         "chose its clocksource anew at boot; removed the record", r.pid, r.original);
		return remove_record(cs, CD_CS_WAS_ORIGINAL, msg, msglen);
	}
	if (owner_running(&r)) {
		snprintf(msg, msglen, "clockdoctor (pid %ld) is still running and will put %s back itself",
		         r.pid, r.original);
		return CD_CS_OWNER_RUNNING;
	}
	char now[CD_CS_NAME_MAX];
	int rc = cd_cs_current(cs, now, sizeof now);
	if (rc < 0) {
		snprintf(msg, msglen, "cannot read %s: %s", cs->current_path, strerror(-rc));
		return CD_CS_FAILED;
	}
	if (strcmp(now, r.original) == 0) {
		snprintf(msg, msglen, "the clocksource is %s already, as the record of pid %ld says it was; "
		         "removed the record", now, r.pid);
		return remove_record(cs, CD_CS_WAS_ORIGINAL, msg, msglen);
	}
	if (!cd_cs_is_available(cs, r.original)) {
		snprintf(msg, msglen, "cannot restore clocksource %s: the kernel no longer offers it (%s); "
		         "it stays %s; removed the record", r.original, cs->available_path, now);
		return remove_record(cs, CD_CS_UNAVAILABLE, msg, msglen);
	}
	char err[512];
	rc = cd_cs_put_back(cs, r.original, err, sizeof err);
	if (rc < 0) {
		snprintf(msg, msglen, "cannot restore clocksource %s: %s; the record stays at %s", r.original, err,
		         cs->record_path);
		return CD_CS_FAILED;
	}
	snprintf(msg, msglen, "restored clocksource %s (it was %s, left by clockdoctor pid %ld, which did "
	         "not finish)", r.original, now, r.pid);
	return remove_record(cs, CD_CS_RESTORED, msg, msglen);
}
