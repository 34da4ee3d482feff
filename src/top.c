/* SPDX-License-Identifier: MIT */
/*
 * top.c: `clockdoctor top`: which processes are paying for time system
 * calls, right now.
 *
 * A clock_gettime served by the vDSO never enters the kernel; one that
 * fires the sys_enter_clock_gettime tracepoint missed the vDSO and cost a
 * system call.  This counts those events exactly, splits them by process
 * and clock id by sampling, and prices them with the cost of one forced
 * system call measured at start (before tracing starts, so the tracing does
 * not inflate it).  Options follow bcc's tools: [interval [count]] (or -i),
 * -p, -d.
 */
#include "commands.h"
#include "util/fsread.h"
#include "util/monotime.h"
#include "util/numarg.h"
#include "util/signals.h"
#include "measure/measure.h"
#include "measure/trace.h"
#include "output/topreport.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Set by SIGINT/SIGTERM: end after printing the interval in progress.  The
 * only mutable global of the command. */
static volatile sig_atomic_t top_stop;

#define TARGET_SAMPLES 4000     /* a second, all CPUs together */
#define INITIAL_PERIOD 200      /* until the first counts say better */
#define ADAPT_S 0.2             /* the period follows the counts this often */
#define EDGE_S 0.01             /* less than this left of an interval or of -d: done */

struct top_opts {
	double interval;
	long count;                 /* 0: until Ctrl-C */
	double duration;            /* -d; 0: none */
	int pid;
	bool json;
	bool no_bpf;                /* --no-bpf */
	int rows;
};

static void top_usage(FILE *out)
{
	fprintf(out,
	        "usage: clockdoctor top [-p PID] [-i SECONDS] [-d SECONDS] [--json] [--rows N]\n"
	        "                       [interval [count]]\n"
	        "\n"
	        "Which processes make time system calls (clock_gettime, gettimeofday, time\n"
	        "that missed the vDSO), how many a second, on which clock ids, and what they\n"
	        "cost.  Traces the kernel's syscall tracepoints with perf_event_open: needs\n"
	        "root or CAP_PERFMON.  Totals are exact; so are each process's calls where a\n"
	        "BPF program can be loaded (root), else they are sampled.\n"
	        "\n"
	        "  interval          seconds per report (default 1); with -i, leave it out\n"
	        "  count             number of reports (default: until Ctrl-C)\n"
	        "  -p, --pid PID     only this process: its threads' exact totals, its row\n"
	        "  -i, --interval SECONDS\n"
	        "                    seconds per report\n"
	        "  -d, --duration SECONDS\n"
	        "                    stop after SECONDS\n"
	        "      --rows N      at most N processes in each table (default 20; 0: all)\n"
	        "      --no-bpf      split the calls by process by sampling only, without the\n"
	        "                    small BPF program that counts them exactly in the kernel\n"
	        "  -j, --json        one JSON object per interval, one per line (docs/top.md)\n"
	        "\n"
	        "exit status: 0 done (Ctrl-C ends it so), 3 bad usage, cannot trace here (not\n"
	        "root, no tracefs) or the report could not be written\n"
	        "\n"
	        "examples:\n"
	        "  clockdoctor top                 # every second, until Ctrl-C\n"
	        "  clockdoctor top 5 3             # three reports of 5 seconds\n"
	        "  clockdoctor top -p 1234 -d 10   # one process, for 10 seconds\n"
	        "  clockdoctor top --json 1 10 | jq '.processes[0]'\n");
}

static int bad(const char *what, const char *arg)
{
	return cd_usage_error("top", "%s: '%s'", what, arg);
}

struct top_parse {
	struct top_opts *o;
	bool have_i;               /* -i given: the one operand left is the count */
};

static int top_option(void *ctx, int ch, char *arg)
{
	struct top_parse *tp = ctx;
	struct top_opts *o = tp->o;
	long long v;
	switch (ch) {
	case 'p':
		if (!cd_parse_whole(arg, 1, INT_MAX, &v))
			return bad("-p takes a process id", arg);
		o->pid = (int)v;
		break;
	case 'd':
		if (!cd_parse_number(arg, 0.05, 1e7, &o->duration))
			return bad("-d takes seconds (0.05 or more)", arg);
		break;
	case 'i':
		if (!cd_parse_number(arg, 0.05, 1e7, &o->interval))
			return bad("-i takes seconds (0.05 or more)", arg);
		tp->have_i = true;
		break;
	case 'R':
		if (!cd_parse_whole(arg, 0, 1e6, &v))
			return bad("--rows takes a number of rows", arg);
		o->rows = (int)v;
		break;
	case 'n': return cd_moved_option("top", 'n', "--rows");
	case 'B': o->no_bpf = true; break;
	case 'j': o->json = true; break;
	}
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct top_opts *o)
{
	static const struct option longs[] = {
		{ "pid", required_argument, NULL, 'p' },     { "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' }, { "rows", required_argument, NULL, 'R' },
		{ "no-bpf", no_argument, NULL, 'B' },        { "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct cd_options top_options = { "top", "p:i:d:jn", longs, top_usage, top_option, true };
	*o = (struct top_opts){ .interval = 1, .rows = 20 };
	struct top_parse tp = { .o = o };
	int rc = cd_parse_options(&top_options, argc, argv, &tp);
	if (rc >= 0)
		return rc;
	/* With -i, the one argument left is the count. */
	if (optind < argc && !tp.have_i && !cd_parse_number(argv[optind++], 0.05, 1e7, &o->interval))
		return bad("the interval is in seconds (0.05 or more)", argv[optind - 1]);
	long long v;
	if (optind < argc) {
		if (!cd_parse_whole(argv[optind++], 1, 1e12, &v))
			return bad("count is a number of reports", argv[optind - 1]);
		o->count = (long)v;
	}
	if (optind < argc)
		return bad("unexpected argument", argv[optind]);
	return -1;
}

/* The cost of one clock_gettime that reaches the kernel, measured as the
 * forced system call (measure/clockcost.c). */
static double measure_call_ns(void)
{
	static const struct cd_clock_spec spec = {
		"CLOCK_MONOTONIC/syscall", CD_CALL_SYSCALL_CLOCK_GETTIME, CLOCK_MONOTONIC, true,
	};
	struct cd_clock_cost c;
	memset(&c, 0, sizeof c);
	cd_measure_clock(&spec, 0.1, &c);
	if (!c.measured)
		return NAN;
	return c.syscall_ns > 0 ? c.syscall_ns : c.ns_per_call;
}

static void add_counts(struct cd_tracer *tr, uint64_t all[CD_TSYS_N], int64_t pid[CD_TSYS_N])
{
	uint64_t a[CD_TSYS_N];
	int64_t p[CD_TSYS_N];
	cd_tracer_counts(tr, a, p);
	for (int s = 0; s < CD_TSYS_N; s++) {
		all[s] += a[s];
		pid[s] = pid[s] < 0 || p[s] < 0 ? -1 : pid[s] + p[s];
	}
}

/* One interval: samples into t, exact counts into iv.  It is read in
 * slices of ADAPT_S: after each, the sample period is set from the calls
 * the slice counted, so that a burst after a quiet time is sampled at the
 * full rate for one slice at most. */

/* *mark is when the counters were last read: an interval's length runs
 * from read to read, so that the calls counted between its slices (while
 * reading counters, changing the period) are inside its time too. */
/* A CPU taken offline loses its events, which are opened again when it is
 * back (cd_tracer_follow_cpus); a CPU that was not online at the start has
 * none, and then the totals miss it: said once, plainly. */
static bool cpus_said;

static void follow_cpus(struct cd_tracer *tr)
{
	bool *said = &cpus_said;
	int untraced = 0;
	struct cd_trace_error e;
	memset(&e, 0, sizeof e);
	int r = cd_tracer_follow_cpus(tr, &untraced, &e);
	if (*said)
		return;
	if (r < 0) {
		fprintf(stderr, "clockdoctor top: a CPU came back online and its events could not be opened "
		        "again: %s; from now on the totals miss it\n", e.msg);
		*said = true;
	} else if (untraced > 0) {
		fprintf(stderr, "clockdoctor top: %d CPU(s) came online that were not when top started: the "
		        "totals miss them; restart top to trace them\n", untraced);
		*said = true;
	}
}

static void run_interval(struct cd_tracer *tr, double secs, struct cd_top_table *t,
                         struct cd_top_interval *iv, double *mark)
{
	memset(iv->exact, 0, sizeof iv->exact);
	memset(iv->pid_exact, 0, sizeof iv->pid_exact);
	cd_top_table_reset(t);
	double done = 0;
	/* The slices are timed by the coarse clock (tracering.c): an interval may
	 * end a few ms early, and rates divide by its measured length. */
	while (done < secs - EDGE_S && !top_stop) {
		double slice = secs - done < 2 * ADAPT_S ? secs - done : ADAPT_S;
		follow_cpus(tr);
		double took = cd_tracer_collect(tr, slice, &top_stop, t);
		uint64_t before = 0, after = 0;
		for (int s = 0; s < CD_TSYS_N; s++)
			before += iv->exact[s];
		add_counts(tr, iv->exact, iv->pid_exact);
		for (int s = 0; s < CD_TSYS_N; s++)
			after += iv->exact[s];
		done += took;
		uint64_t wanted = cd_top_adapt_period(after - before, took, TARGET_SAMPLES);
		cd_tracer_set_period(tr, cd_top_keep_period(cd_tracer_period(tr), wanted), t);
	}
	/* Each process's exact calls, read as the interval ends. */
	iv->exact_procs = cd_tracer_exact_procs(tr, t) >= 0;
	double now = cd_mono_s();
	iv->secs = now - *mark;
	*mark = now;
	iv->when = time(NULL);
	iv->period = cd_tracer_period(tr);
}

static bool pid_exists(int pid)
{
	char path[32];
	snprintf(path, sizeof path, "/proc/%d", pid);
	return access(path, F_OK) == 0;
}

static int trace_loop(const struct top_opts *o, struct cd_tracer *tr, double call_ns)
{
	double mark = cd_mono_s();   /* cd_tracer_open read the counters just now */
	struct cd_top_table t = { 0 };
	struct cd_top_interval iv;
	memset(&iv, 0, sizeof iv);
	iv.pid = o->pid;
	iv.interval = o->interval;
	iv.call_ns = call_ns;
	iv.rows = o->rows;
	for (int s = 0; s < CD_TSYS_N; s++)
		iv.traced[s] = cd_tracer_has(tr, (enum cd_tsys)s);
	double left = o->duration > 0 ? o->duration : INFINITY;
	for (long i = 1; (o->count == 0 || i <= o->count) && left > EDGE_S && !top_stop; i++) {
		double secs = o->interval < left ? o->interval : left;
		run_interval(tr, secs, &t, &iv, &mark);
		left -= iv.secs;
		iv.index = (int)i;
		iv.t = &t;
		cd_top_finish(&t, iv.secs, isnan(call_ns) ? 0 : call_ns, iv.exact);
		if (o->pid > 0)
			cd_top_keep_pid(&t, o->pid);
		if (o->json)
			cd_top_print_json(stdout, &iv);
		else
			cd_top_print_text(stdout, &iv);
		fflush(stdout);
		if (o->pid > 0 && !pid_exists(o->pid)) {
			fprintf(stderr, "clockdoctor top: process %d has exited\n", o->pid);
			break;
		}
	}
	cd_top_table_free(&t);
	return cd_report_written("top", 0);
}

/* The programs whose time system calls no count here can hold (see
 * cd_trace_sees_program): named, so that a 0 is not read as "none".  With
 * -p such a program, false: every figure would be 0 whatever it does. */
static bool say_unseen(int pid, const struct cd_unseen u[4], int n)
{
	if (n == 0)
		return true;
	if (pid > 0) {
		fprintf(stderr, "clockdoctor top: process %d (%s) is %s program: the kernel's system-call "
		        "tracepoints do not see such a program's system calls (kernel/trace/trace_syscalls.c "
		        "ignores compat tasks), so its time system calls cannot be counted here\n",
		        u[0].pid, u[0].comm, u[0].x32 ? "an x32" : "a 32-bit");
		return false;
	}
	char list[256] = "";
	for (int i = 0; i < n && i < 4; i++) {
		size_t len = strlen(list);
		snprintf(list + len, sizeof list - len, "%s%d %s", i ? ", " : "", u[i].pid, u[i].comm);
	}
	fprintf(stderr, "clockdoctor top: %d running program%s %s 32-bit or x32 (%s%s): the kernel's "
	        "system-call tracepoints do not see their system calls (kernel/trace/trace_syscalls.c "
	        "ignores compat tasks), so their time system calls are in none of the counts below\n",
	        n, n == 1 ? "" : "s", n == 1 ? "is" : "are", list, n > 4 ? ", ..." : "");
	return true;
}

int cd_cmd_top(int argc, char **argv)
{
	struct top_opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.pid > 0 && !pid_exists(o.pid)) {
		fprintf(stderr, "clockdoctor top: no process %d\n", o.pid);
		return CD_EXIT_USAGE;
	}
	/* Measured before tracing starts: the traced call would cost more. */
	double call_ns = measure_call_ns();
	/* Looked for before tracing starts too: reading every process's ELF
	 * header while the ring buffers fill would cost samples. */
	struct cd_unseen unseen[4];
	int n_unseen = cd_trace_unseen_programs(o.pid, unseen, 4);
	struct cd_trace_opts to = { .pid = o.pid, .initial_period = INITIAL_PERIOD,
	                            .target_samples = TARGET_SAMPLES, .no_bpf = o.no_bpf };
	struct cd_trace_error e;
	struct cd_tracer *tr = cd_tracer_open(&to, &e);
	if (!tr) {
		fprintf(stderr, "clockdoctor top: %s\n", e.msg);
		return CD_EXIT_USAGE;
	}
	if (!say_unseen(o.pid, unseen, n_unseen)) {
		cd_tracer_close(tr);
		return CD_EXIT_USAGE;
	}
	cd_catch_stop(&top_stop, (const int[]){ SIGINT, SIGTERM }, 2);
	if (!o.no_bpf && cd_tracer_exact_why(tr)[0])
		fprintf(stderr, "clockdoctor top: each process's calls are sampled, not counted: %s\n",
		        cd_tracer_exact_why(tr));
	/* JSON keeps stdout for the objects. */
	fprintf(o.json ? stderr : stdout, "Tracing time system calls... Hit Ctrl-C to end.\n");
	fflush(stdout);
	rc = trace_loop(&o, tr, call_ns);
	cd_tracer_close(tr);
	return rc;
}
