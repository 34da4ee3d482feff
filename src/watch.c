/* SPDX-License-Identifier: MIT */
/*
 * watch.c: `clockdoctor watch`: report each clocksource event as it
 * happens, for as long as it runs.
 *
 * Two sources: the kernel log, followed through /dev/kmsg (probe/kmsg.c:
 * the TSC marked unstable, the watchdog's skew report, a switch, a TSC
 * ADJUST warning), and current_clocksource, read every interval (a switch
 * by hand, or one the kernel makes without a word a reader can see).  The
 * process sleeps in poll() between the two: no busy loop, and a /dev/kmsg
 * line wakes it at once.  SIGTERM and SIGINT end it cleanly, with status 0.
 *
 * Each event is printed, counted into the --prometheus-file textfile and
 * handed to the --exec hook (watchhook.c: how many at once, for how long).
 *
 * CLOCKDOCTOR_SYSFS (as for bench and fix) and CLOCKDOCTOR_KMSG (a file to
 * follow instead of /dev/kmsg) let the tests drive it without touching the
 * machine.
 */
#include "commands.h"
#include "util/numarg.h"
#include "diagnose/diagnose.h"
#include "measure/csswitch.h"
#include "measure/trace.h"
#include "output/watchreport.h"
#include "output/promdest.h"
#include "output/wrap.h"
#include "probe/kmsg.h"
#include "probe/probe.h"
#include "util/atomicfile.h"
#include "util/beneath.h"
#include "util/fsread.h"
#include "util/monotime.h"
#include "util/signals.h"
#include "watchhook.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define HOOK_TIMEOUT_S 60.0
#define HEARTBEAT_S 60.0           /* the textfile is rewritten at least this often */
#define LINES_PER_WAKE 512         /* kernel log lines read before the clocksource is looked at */
#define EV_MAX 16
#define SYSCALL_WINDOW_S 1.0       /* --syscalls: each count lasts this long */

/* Set by SIGTERM, SIGINT, SIGHUP: the loop ends and the process exits 0.
 * The only mutable global of the command. */
static volatile sig_atomic_t watch_stop;

struct watch_opts {
	double interval, duration;
	double syscalls_every;         /* --syscalls: seconds between counts; 0 off */
	bool json, history, quiet;
	const char *textfile, *hook;
};

struct watcher {
	struct watch_opts o;
	struct cd_cs cs;
	struct cd_kmsg kmsg;
	bool kmsg_open;
	struct cd_kgroup group;
	struct cd_watch_state st;
	struct cd_facts *facts;        /* kernel release and arch, for the clocksource's vDSO state */
	char last_known[CD_NAME_MAX];  /* the clocksource last read ("" never) */
	bool unreadable_said;          /* clocksource-unreadable reported, not readable since */
	bool textfile_dirty;
	double textfile_written;       /* monotonic */
	struct cd_hooks hooks;         /* --exec */
	struct cd_tracer *tracer;      /* --syscalls: open during a count */
	bool unseen_said;              /* --syscalls: programs the tracepoints miss named */
	double tracer_opened, next_count; /* monotonic */
	bool tracer_said;
	bool failed;                   /* stdout or the textfile could not be written */
	/* --history: the records the log held at start are being read; each is
	 * stamped with when it happened, boot_wall (the wall time of boot) plus
	 * its timestamp, not with when it was read. */
	bool replaying;
	double boot_wall;
};

static void watch_usage(FILE *out)
{
	fprintf(out,
	        "usage: clockdoctor watch [-i SECONDS] [--json] [--prometheus-file PATH]\n"
	        "                         [--exec CMD] [--history] [--syscalls SECONDS]\n"
	        "                         [-d SECONDS] [--quiet]\n"
	        "\n"
	        "Reports each clocksource event as it happens: the kernel marking the TSC\n"
	        "unstable, the watchdog's skew report, a switch, a TSC ADJUST warning (from\n"
	        "/dev/kmsg), and any change of current_clocksource (read every interval).\n"
	        "Runs until SIGTERM or Ctrl-C (exit status 0).  Reading /dev/kmsg needs root or\n"
	        "CAP_SYSLOG where kernel.dmesg_restrict is 1; without it, watch says so once\n"
	        "and follows current_clocksource alone.\n"
	        "\n"
	        "  -i, --interval SECONDS   read current_clocksource this often (default 1)\n"
	        "  -j, --json               one JSON object per event, one per line\n"
	        "      --prometheus-file PATH\n"
	        "                           keep a node_exporter textfile at PATH up to date\n"
	        "                           (written atomically; docs/watch.md: the metrics)\n"
	        "  -e, --exec CMD           run CMD with /bin/sh -c for each event; the event is\n"
	        "                           in its environment (CLOCKDOCTOR_*), not in CMD\n"
	        "  -H, --history            first report the events the kernel log holds already\n"
	        "      --syscalls SECONDS   every SECONDS, count the time system calls of every\n"
	        "                           process for 1 s (syscall tracepoints: root or\n"
	        "                           CAP_PERFMON) into the textfile; default off\n"
	        "  -d, --duration SECONDS   stop after this long (default: run until stopped)\n"
	        "  -q, --quiet              print no events (with --prometheus-file or --exec)\n"
	        "\n"
	        "exit status: 0 stopped by SIGTERM, SIGINT or -d; 3 bad usage, or the events or\n"
	        "the textfile could not be written\n"
	        "\n"
	        "examples:\n"
	        "  sudo clockdoctor watch\n"
	        "  sudo clockdoctor watch --json | jq -c 'select(.event == \"watchdog-skew\")'\n"
	        "  sudo clockdoctor watch -q --prometheus-file \\\n"
	        "      /var/lib/prometheus/node-exporter/clockdoctor-watch.prom\n"
	        "  sudo clockdoctor watch -e 'logger -t clockdoctor \"$CLOCKDOCTOR_EVENT\"'\n");
}

/* The longest -i, -d or --syscalls: a year. */
#define MAX_SECONDS (86400.0 * 365)

/* long only: -P is check's --prometheus, -s bench's --summary */
enum { OPT_PROMETHEUS_FILE = 256, OPT_SYSCALLS };

static int watch_option(void *ctx, int ch, char *arg)
{
	struct watch_opts *o = ctx;
	switch (ch) {
	case 'i':
		if (!cd_parse_number(arg, 0.05, MAX_SECONDS, &o->interval))
			return cd_usage_error("watch", "-i takes seconds, at least 0.05, not '%s'", arg);
		break;
	case 'd':
		if (!cd_parse_number(arg, 0.001, MAX_SECONDS, &o->duration))
			return cd_usage_error("watch", "-d takes seconds, more than 0, not '%s'", arg);
		break;
	case OPT_SYSCALLS:
		if (!cd_parse_number(arg, 2 * SYSCALL_WINDOW_S, MAX_SECONDS, &o->syscalls_every))
			return cd_usage_error("watch", "--syscalls takes seconds, at least 2, not '%s'", arg);
		break;
	case 'j': o->json = true; break;
	case 'P': return cd_moved_option("watch", 'P', "--prometheus-file");
	case 's': return cd_moved_option("watch", 's', "--syscalls");
	case OPT_PROMETHEUS_FILE:
		o->textfile = arg;
		return cd_file_arg("watch", "--prometheus-file", arg);
	case 'e':
		if (!arg[0])
			return cd_usage_error("watch", "--exec takes a command");
		o->hook = arg;
		break;
	case 'H': o->history = true; break;
	case 'q': o->quiet = true; break;
	}
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, struct watch_opts *o)
{
	static const struct option longs[] = {
		{ "interval", required_argument, NULL, 'i' }, { "json", no_argument, NULL, 'j' },
		{ "prometheus-file", required_argument, NULL, OPT_PROMETHEUS_FILE },
		{ "exec", required_argument, NULL, 'e' },     { "history", no_argument, NULL, 'H' },
		{ "duration", required_argument, NULL, 'd' }, { "quiet", no_argument, NULL, 'q' },
		{ "syscalls", required_argument, NULL, OPT_SYSCALLS },
		{ NULL, 0, NULL, 0 },
	};
	static const struct cd_options watch_options = { "watch", "i:je:Hd:qPs", longs, watch_usage, watch_option,
	                                                 false };
	int rc = cd_parse_options(&watch_options, argc, argv, o);
	if (rc >= 0)
		return rc;
	if (o->quiet && !o->textfile && !o->hook)
		return cd_usage_error("watch", "--quiet without --prometheus-file or --exec would report nothing");
	if (o->syscalls_every > 0 && !o->textfile)
		return cd_usage_error("watch", "--syscalls writes its count into --prometheus-file: give one");
	return -1;
}

/* ---- the textfile ---- */

static void write_textfile(struct watcher *w)
{
	if (!w->o.textfile)
		return;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem)
		return;
	cd_watch_textfile(mem, &w->st, cd_clock_s(CLOCK_REALTIME));
	fclose(mem);
	int rc = cd_write_atomic(w->o.textfile, text, len, 0644, true);
	free(text);
	w->textfile_written = cd_mono_s();
	if (rc < 0 && !w->failed) {
		fprintf(stderr, "clockdoctor watch: cannot write %s: %s\n", w->o.textfile, cd_beneath_strerror(rc));
		w->failed = true;
	} else if (rc == 0) {
		w->failed = false;
		w->textfile_dirty = false;
	}
}

/* ---- hooks ---- */

/* A line for people on stderr, within 80 columns (paths whole). */
static void say(const char *text)
{
	cd_wrap_with(stderr, text, &(struct cd_wrap_opts){ .lead = "clockdoctor watch: ", .indent = 4,
	                                                  .whole_words = true });
}

/* --exec: the hook started for e, when there is room for it. */
static void run_hook(struct watcher *w, const struct cd_watch_event *e)
{
	int i = cd_hooks_place(&w->hooks, e->type, cd_mono_s());
	if (i < 0)
		return;
	/* Our whole environment, however many variables it has, and the
	 * event's CLOCKDOCTOR_* (a bounded set, in buf) on top. */
	static char buf[65536];
	size_t n = 0;
	while (environ && environ[n])
		n++;
	int max = n < INT_MAX - 128 ? (int)n + 128 : INT_MAX;
	char **env = calloc((size_t)max, sizeof *env);
	if (!env || cd_watch_env(e, environ, buf, sizeof buf, env, max) < 0)
		fprintf(stderr, "clockdoctor watch: the environment is too large for the hook\n");
	else
		cd_hooks_start(&w->hooks, i, env, cd_mono_s());
	free(env);
}

/* ---- events ---- */

static void report(struct watcher *w, struct cd_watch_event *e)
{
	cd_watch_count(&w->st, e);
	if (!w->o.quiet) {
		if (w->o.json)
			cd_watch_json(stdout, e);
		else
			cd_watch_text(stdout, e);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "clockdoctor watch: cannot write the events: %s\n", strerror(errno));
			w->failed = true;
			watch_stop = 1;
		}
	}
	w->textfile_dirty = true;
	if (w->o.hook)
		run_hook(w, e);
}

static void report_kernel(struct watcher *w, const struct cd_kgroup_event *k, int n)
{
	for (int i = 0; i < n; i++) {
		double when = w->replaying && k[i].ev.ts >= 0 ? w->boot_wall + k[i].ev.ts : cd_clock_s(CLOCK_REALTIME);
		struct cd_watch_event e = { .type = cd_watch_event_type(k[i].ev.kind), .source = "kmsg",
		                            .unix_time = when, .kernel = true, .k = k[i] };
		report(w, &e);
	}
}

static int vdso_of(const struct watcher *w, const char *name)
{
	struct cd_cs_state v;
	cd_clocksource_state(name, w->facts, &v);
	return fc_vdso_surely_fast(v.vdso);
}

static void poll_clocksource(struct watcher *w)
{
	char now[CD_NAME_MAX]; /* the kernel's names are at most 31 characters */
	int rc = cd_cs_current(&w->cs, now, sizeof now);
	if (rc < 0) {
		/* Said once, until it can be read again. */
		if (!w->unreadable_said) {
			struct cd_watch_event e = { .type = "clocksource-unreadable", .source = "sysfs",
			                            .unix_time = cd_clock_s(CLOCK_REALTIME) };
			snprintf(e.error, sizeof e.error, "%s: %s", w->cs.current_path, strerror(-rc));
			w->unreadable_said = true;
			report(w, &e);
		}
		if (w->st.cs_readable)
			w->textfile_dirty = true;
		w->st.cs_readable = false;
		return;
	}
	w->unreadable_said = false;
	if (!w->st.cs_readable)
		w->textfile_dirty = true;
	w->st.cs_readable = true;
	if (w->last_known[0] && strcmp(now, w->last_known) == 0)
		return;
	snprintf(w->st.current, sizeof w->st.current, "%s", now);
	w->st.vdso = vdso_of(w, now);
	w->textfile_dirty = true;
	if (w->last_known[0]) {
		struct cd_watch_event e = { .type = "clocksource-changed", .source = "sysfs", .unix_time = cd_clock_s(CLOCK_REALTIME) };
		snprintf(e.from, sizeof e.from, "%s", w->last_known);
		snprintf(e.to, sizeof e.to, "%s", now);
		report(w, &e);
	}
	snprintf(w->last_known, sizeof w->last_known, "%s", now);
}

/* Read what the kernel log has now, at most LINES_PER_WAKE lines; how
 * many were read. */
static int drain_kmsg(struct watcher *w)
{
	if (!w->kmsg_open)
		return 0;
	char line[1100];
	struct cd_kgroup_event evs[EV_MAX];
	int i;
	for (i = 0; i < LINES_PER_WAKE && !watch_stop; i++) {
		int rc = cd_kmsg_line(&w->kmsg, line, sizeof line);
		if (rc == 0)
			break;
		if (rc < 0) {
			fprintf(stderr, "clockdoctor watch: reading %s failed (%s): opening it again\n", w->kmsg.path,
			        strerror(-rc));
			cd_kmsg_close(&w->kmsg);
			w->kmsg_open = cd_kmsg_open(&w->kmsg, getenv("CLOCKDOCTOR_KMSG"), false) == 0;
			w->st.kmsg_readable = w->kmsg_open;
			w->textfile_dirty = true;
			break;
		}
		report_kernel(w, evs, cd_kgroup_feed(&w->group, line, cd_mono_s(), evs, EV_MAX));
	}
	if (w->kmsg.lost != w->st.kmsg_lost) {
		w->st.kmsg_lost = w->kmsg.lost;
		w->textfile_dirty = true;
	}
	return i;
}

/* --history: everything the log holds at start, read at once and stamped
 * from the boot time.  The kernel's timestamps (local_clock) stop in
 * suspend as CLOCK_MONOTONIC does, so the boot time is REALTIME minus
 * MONOTONIC; an event from before a suspend is stamped late by the time
 * suspended, as `dmesg -T` is. */
static void replay_history(struct watcher *w)
{
	struct cd_kgroup_event evs[EV_MAX];
	w->boot_wall = cd_clock_s(CLOCK_REALTIME) - cd_mono_s();
	w->replaying = true;
	while (drain_kmsg(w) == LINES_PER_WAKE && !watch_stop)
		;
	report_kernel(w, evs, cd_kgroup_flush(&w->group, cd_mono_s(), true, evs, EV_MAX));
	w->replaying = false;
}

/* --syscalls: every syscalls_every seconds, the syscall tracepoints
 * count every process's time system calls for SYSCALL_WINDOW_S.  Counting
 * in windows keeps the tracepoints' cost (on every such call) off the
 * machine most of the time. */
static void count_syscalls(struct watcher *w, double now)
{
	if (w->o.syscalls_every <= 0)
		return;
	if (!w->tracer && now >= w->next_count) {
		struct cd_trace_opts to = { .pid = 0, .initial_period = 1ull << 40, .target_samples = 1 };
		struct cd_trace_error e;
		w->tracer = cd_tracer_open(&to, &e);
		w->tracer_opened = cd_mono_s();
		w->next_count = now + w->o.syscalls_every;
		if (!w->tracer && !w->tracer_said) {
			char text[sizeof e.msg + 64];
			snprintf(text, sizeof text, "--syscalls: cannot count time system calls: %s", e.msg);
			say(text);
			w->tracer_said = true;
		}
		/* Once: the programs the tracepoints do not see (top.c says why). */
		struct cd_unseen u[1];
		int n = w->tracer && !w->unseen_said ? cd_trace_unseen_programs(0, u, 1) : 0;
		if (n > 0) {
			char text[400];
			snprintf(text, sizeof text, "--syscalls: %d running 32-bit or x32 program%s (%d %s%s) %s not "
			         "counted: the kernel's system-call tracepoints ignore compat tasks", n, n == 1 ? "" : "s",
			         u[0].pid, u[0].comm, n > 1 ? ", ..." : "", n == 1 ? "is" : "are");
			say(text);
		}
		w->unseen_said |= w->tracer != NULL;
		return;
	}
	if (w->tracer && now - w->tracer_opened >= SYSCALL_WINDOW_S) {
		uint64_t all[CD_TSYS_N];
		int64_t pid[CD_TSYS_N];
		cd_tracer_counts(w->tracer, all, pid);
		double secs = cd_mono_s() - w->tracer_opened;
		cd_tracer_close(w->tracer);
		w->tracer = NULL;
		uint64_t total = 0;
		for (int i = 0; i < CD_TSYS_N; i++)
			total += all[i];
		/* Counters, as the kernel's own: the rate over any span is
		 * rate(_total) / rate(_seconds_total), and a count missed
		 * between two scrapes is still in the sum. */
		w->st.syscalls += total;
		w->st.syscall_count_s += secs > 0 ? secs : 0;
		w->textfile_dirty = true;
	}
}

/* Seconds until count_syscalls has something to do. */
static double syscalls_due(const struct watcher *w, double now)
{
	if (w->o.syscalls_every <= 0)
		return -1;
	double at = w->tracer ? w->tracer_opened + SYSCALL_WINDOW_S : w->next_count;
	return at > now ? at - now : 0;
}

/* The kernel release and architecture, for cd_clocksource_state. */
static void light_facts(struct cd_facts *f)
{
	char buf[256];
	f->kernel.ver_major = f->kernel.ver_minor = f->kernel.ver_patch = -1;
	if (cd_read_small("/", "/proc/sys/kernel/osrelease", buf, sizeof buf) > 0) {
		snprintf(f->kernel.release, sizeof f->kernel.release, "%.*s", (int)sizeof f->kernel.release - 1, buf);
		f->kernel.have_release = true;
		cd_parse_kernel_release(buf, &f->kernel);
	}
	if (cd_read_small("/", "/proc/cmdline", f->kernel.cmdline, sizeof f->kernel.cmdline) >= 0) {
		f->kernel.have_cmdline = true;
		cd_parse_cmdline(f->kernel.cmdline, &f->kernel);
	}
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(f->cpu.arch, sizeof f->cpu.arch, "%.*s", (int)sizeof f->cpu.arch - 1, u.machine);
}

static void open_kmsg(struct watcher *w)
{
	const char *path = getenv("CLOCKDOCTOR_KMSG");
	int rc = cd_kmsg_open(&w->kmsg, path && *path ? path : NULL, w->o.history);
	w->kmsg_open = rc == 0;
	w->st.kmsg_readable = w->kmsg_open;
	if (rc == -EPERM || rc == -EACCES) {
		char restrict_val[16] = "";
		cd_read_small("/", "/proc/sys/kernel/dmesg_restrict", restrict_val, sizeof restrict_val);
		char text[PATH_MAX + 300];
		snprintf(text, sizeof text, "cannot read the kernel log (%s: %s): kernel.dmesg_restrict is %s and "
		         "this process lacks CAP_SYSLOG; run as root or grant CAP_SYSLOG. Watching "
		         "current_clocksource only.", w->kmsg.path, strerror(-rc),
		         restrict_val[0] ? restrict_val : "unknown");
		say(text);
	} else if (rc < 0) {
		char text[PATH_MAX + 300];
		snprintf(text, sizeof text, "cannot read the kernel log (%s: %s). Watching current_clocksource only.",
		         w->kmsg.path, strerror(-rc));
		say(text);
	}
}

static void install_signals(void)
{
	cd_catch_stop(&watch_stop, (const int[]){ SIGTERM, SIGINT, SIGHUP }, 3);
	signal(SIGPIPE, SIG_IGN); /* a reader that went away shows as a write error */
}

static void loop(struct watcher *w)
{
	double start = cd_mono_s(), next_poll = start + w->o.interval;
	struct cd_kgroup_event evs[EV_MAX];
	while (!watch_stop) {
		double now = cd_mono_s();
		if (w->o.duration > 0 && now - start >= w->o.duration)
			break;
		double wait = next_poll - now;
		double due = cd_kgroup_due(&w->group, now);
		if (due >= 0 && due < wait)
			wait = due;
		due = syscalls_due(w, now);
		if (due >= 0 && due < wait)
			wait = due;
		if (w->o.duration > 0 && start + w->o.duration - now < wait)
			wait = start + w->o.duration - now;
		int ms = wait > 0 ? (int)ceil(wait * 1000) : 0;
		struct pollfd pfd = { .fd = w->kmsg.fd, .events = POLLIN };
		bool pollable = w->kmsg_open && w->kmsg.device;
		int pr = poll(pollable ? &pfd : NULL, pollable ? 1 : 0, ms);
		if (pr < 0 && errno != EINTR)
			break;
		if (watch_stop)
			break;
		/* A device wakes us when a record comes; a file is read each pass. */
		if (!pollable || pr > 0)
			drain_kmsg(w);
		now = cd_mono_s();
		report_kernel(w, evs, cd_kgroup_flush(&w->group, now, false, evs, EV_MAX));
		if (now >= next_poll) {
			poll_clocksource(w);
			next_poll += w->o.interval;
			if (next_poll < now)
				next_poll = now + w->o.interval;
		}
		count_syscalls(w, now);
		if (w->o.hook)
			cd_hooks_reap(&w->hooks, false, now);
		if (w->textfile_dirty || now - w->textfile_written >= HEARTBEAT_S)
			write_textfile(w);
	}
	/* A report held for its next lines is complete enough now. */
	drain_kmsg(w);
	report_kernel(w, evs, cd_kgroup_flush(&w->group, cd_mono_s(), true, evs, EV_MAX));
	if (w->tracer)
		cd_tracer_close(w->tracer);
	write_textfile(w);
	if (w->o.hook)
		cd_hooks_reap(&w->hooks, true, cd_mono_s());
}

int cd_cmd_watch(int argc, char **argv)
{
	struct watcher *w = calloc(1, sizeof *w);
	struct cd_facts *facts = calloc(1, sizeof *facts);
	if (!w || !facts || cd_kgroup_init(&w->group) != 0) {
		fprintf(stderr, "clockdoctor watch: out of memory\n");
		free(w);
		free(facts);
		return CD_EXIT_UNKNOWN;
	}
	w->o.interval = 1.0;
	int rc = parse_opts(argc, argv, &w->o);
	if (rc >= 0)
		goto out;
	if (cd_cs_init(&w->cs, NULL, NULL) != 0) {
		rc = cd_usage_error("watch", "a path is too long (CLOCKDOCTOR_SYSFS)");
		goto out;
	}
	w->hooks.cmd = w->o.hook;
	w->hooks.timeout_s = HOOK_TIMEOUT_S;
	watch_stop = 0;
	install_signals();
	w->facts = facts;
	light_facts(facts);
	w->st.start_time = cd_clock_s(CLOCK_REALTIME);
	w->st.syscalls_counting = w->o.syscalls_every > 0;
	w->kmsg.fd = -1;
	open_kmsg(w);
	poll_clocksource(w);
	char banner[2 * PATH_MAX + 120];
	snprintf(banner, sizeof banner, "Watching %s every %g s%s%s.%s", w->cs.current_path, w->o.interval,
	         w->kmsg_open ? " and the kernel log " : "", w->kmsg_open ? w->kmsg.path : "",
	         w->o.duration > 0 ? "" : " Ctrl-C or SIGTERM ends.");
	cd_wrap_with(stderr, banner, &(struct cd_wrap_opts){ .lead = "", .indent = 2, .whole_words = true });
	if (w->o.textfile)
		cd_prom_dest_check(stderr, "watch", w->o.textfile);
	write_textfile(w);
	if (w->o.history)
		replay_history(w);
	loop(w);
	if (w->kmsg_open)
		cd_kmsg_close(&w->kmsg);
	rc = w->failed ? CD_EXIT_UNKNOWN : CD_EXIT_OK;
out:
	cd_kgroup_free(&w->group);
	free(facts);
	free(w);
	return rc;
}
