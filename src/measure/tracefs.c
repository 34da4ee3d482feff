/* SPDX-License-Identifier: MIT */
/*
 * tracefs.c: where the syscall tracepoints of `clockdoctor top` are: tracefs
 * found (and mounted where it belongs when it is not), and each
 * tracepoint's id and which_clock field read from its format file
 * (tracer_impl.h).  When they cannot be had, the message says what is
 * missing and how to get it.
 */
#include "measure/tracer_impl.h"
#include "util/fsread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

/* The two places tracefs is mounted: its own, and inside debugfs (old
 * kernels). */
static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static bool has_syscall_events(const char *dir, int *err)
{
	char p[128];
	snprintf(p, sizeof p, "%s/events/syscalls", dir);
	struct stat st;
	if (stat(p, &st) == 0)
		return true;
	if (errno == EACCES)
		*err = -EACCES;
	return false;
}

/* Whether dir is a tracefs (with or without the syscall tracepoints). */
static bool has_events(const char *dir)
{
	char p[128];
	struct stat st;
	snprintf(p, sizeof p, "%s/events", dir);
	return stat(p, &st) == 0;
}

static int use_tracefs(struct cd_tracer *tr, const char *dir)
{
	snprintf(tr->tracefs, sizeof tr->tracefs, "%s", dir);
	return 0;
}

/* tracefs is at dir, the syscall tracepoints are not: -ENOENT, and why,
 * then more. */
static int no_syscall_tracepoints(struct cd_trace_error *e, const char *dir, const char *more)
{
	e->err = -ENOENT;
	snprintf(e->msg, sizeof e->msg,
	         "this kernel has no syscall tracepoints (%s/events/syscalls is missing):\n"
	         "it was built without CONFIG_FTRACE_SYSCALLS.%s", dir, more);
	return e->err;
}

/* CLOCKDOCTOR_TRACEFS names the tracefs to use, never mounted (the tests
 * give a folder without the syscall tracepoints, or with odd ones). */
static int forced_tracefs(struct cd_tracer *tr, const char *dir, struct cd_trace_error *e)
{
	int err = 0;
	use_tracefs(tr, dir);
	if (has_syscall_events(dir, &err))
		return 0;
	if (has_events(dir))
		return no_syscall_tracepoints(e, dir, "");
	e->err = -ENOENT;
	snprintf(e->msg, sizeof e->msg, "no tracefs at %s (CLOCKDOCTOR_TRACEFS)", dir);
	return e->err;
}

/* Mounts tracefs where it belongs, and where that gives no syscall
 * tracepoints debugfs, where old kernels have it (said on stderr; left
 * mounted).  true when a tracefs with them is there then; *merr is the
 * error of mounting tracefs, 0 when it was mounted. */
static bool mount_tracefs(struct cd_tracer *tr, int *merr)
{
	/* The flags systemd mounts these with. */
	const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	int err = 0;
	*merr = 0;
	if (mount("nodev", tracefs_dirs[0], "tracefs", flags, NULL) != 0) {
		*merr = errno;
	} else {
		fprintf(stderr, "clockdoctor top: mounted tracefs at %s (left mounted)\n", tracefs_dirs[0]);
		if (has_syscall_events(tracefs_dirs[0], &err))
			return use_tracefs(tr, tracefs_dirs[0]) == 0;
	}
	/* Mount debugfs only where it is not mounted yet (a second mount
	 * would stack on the first). */
	struct stat dbg;
	if (stat("/sys/kernel/debug/tracing", &dbg) != 0 &&
	    mount("nodev", "/sys/kernel/debug", "debugfs", flags, NULL) == 0)
		fprintf(stderr, "clockdoctor top: mounted debugfs at /sys/kernel/debug (left mounted)\n");
	if (has_syscall_events(tracefs_dirs[1], &err))
		return use_tracefs(tr, tracefs_dirs[1]) == 0;
	return false;
}

int cd_tracer_find_tracefs(struct cd_tracer *tr, struct cd_trace_error *e)
{
	const char *forced = getenv("CLOCKDOCTOR_TRACEFS");
	if (forced && *forced)
		return forced_tracefs(tr, forced, e);
	int err = 0;
	for (int i = 0; i < 2; i++)
		if (has_syscall_events(tracefs_dirs[i], &err))
			return use_tracefs(tr, tracefs_dirs[i]);
	for (int i = 0; i < 2 && err != -EACCES; i++)
		if (has_events(tracefs_dirs[i]))
			return no_syscall_tracepoints(e, tracefs_dirs[i],
			                              "  A distribution kernel (Debian,\n"
			                              "Ubuntu, Fedora, RHEL) has them; without them, perf trace and bcc's syscount\n"
			                              "cannot see system calls by name either.");
	if (err == -EACCES) {
		e->err = -EACCES;
		snprintf(e->msg, sizeof e->msg,
		         "cannot read tracefs (%s: permission denied).\n"
		         "Tracing system calls needs root, or CAP_PERFMON with tracefs made readable.\n"
		         "Run it as root: sudo clockdoctor top", tracefs_dirs[0]);
		return e->err;
	}
	int merr;
	if (mount_tracefs(tr, &merr))
		return 0;
	struct stat st;
	bool have_tracing = stat(tracefs_dirs[0], &st) == 0 || stat(tracefs_dirs[1], &st) == 0;
	e->err = -ENOENT;
	snprintf(e->msg, sizeof e->msg,
	         "cannot trace system calls: no tracefs with syscall tracepoints.\n"
	         "  %s is not mounted and mounting it failed (%s).\n"
	         "%s"
	         "To get it: on the host (or in a container with --privileged), as root:\n"
	         "  mount -t tracefs nodev /sys/kernel/tracing\n"
	         "and a kernel built with CONFIG_FTRACE_SYSCALLS=y (Debian, Ubuntu, Fedora and RHEL\n"
	         "kernels are); /sys/kernel/tracing/events/syscalls/ must exist.",
	         tracefs_dirs[0], merr ? strerror(merr) : "mounted, but no events/syscalls",
	         have_tracing ? "" : "  This kernel shows no tracing folder at all (CONFIG_FTRACE off, or\n"
	                              "  a container that hides /sys/kernel).\n");
	return e->err;
}

/* Reads the id and the which_clock field of one sys_enter tracepoint. */
void cd_tracer_read_tracepoint(struct cd_tracer *tr, enum cd_tsys s)
{
	char path[160];
	snprintf(path, sizeof path, "%s/events/syscalls/sys_enter_%s/format", tr->tracefs,
	         cd_tsys_name(s));
	size_t len;
	int err, trunc;
	char *text = cd_read_file("/", path, 1 << 16, &len, &err, &trunc);
	struct tracepoint *t = &tr->tp[s];
	memset(t, 0, sizeof *t);
	if (!text)
		return;
	long id = cd_tp_format_id(text);
	if (id >= 0) {
		t->have = true;
		t->id = id;
		if (s == CD_TSYS_CLOCK_GETTIME || s == CD_TSYS_CLOCK_GETTIME64) {
			int off, sz;
			if (cd_tp_format_field(text, "which_clock", &off, &sz) == 0) {
				t->clock_off = off;
				t->clock_size = sz;
			}
		}
	}
	free(text);
}
