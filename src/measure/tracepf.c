/* SPDX-License-Identifier: MIT */
/*
 * tracepf.c: the kernel half of `clockdoctor top`: perf_event_open on the
 * syscall tracepoints (tracer_impl.h lists the other parts).
 *
 * No BPF toolchain: one perf event per (online CPU, traced system call),
 * system-wide (pid -1).  Each is a sampling event, and reading the event's
 * file descriptor gives its exact count of calls whatever the period, so one
 * event serves both the exact totals and the sampled per-process split
 * (tracering.c reads the samples).  Every event of a CPU writes into that
 * CPU's one ring buffer (PERF_EVENT_IOC_SET_OUTPUT), mapped here.
 */
#include "measure/tracer_impl.h"
#include "measure/bpfcount.h"
#include "util/fsread.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_CPUS 4096
#define RING_PAGES 16           /* 64 KiB a CPU: 0.1 s of a few thousand samples, many times over */

static long perf_open(struct perf_event_attr *a, int pid, int cpu)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ---- events ---- */

static void fill_attr(struct perf_event_attr *a, long id, uint64_t period)
{
	memset(a, 0, sizeof *a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->size = sizeof *a;
	a->config = (uint64_t)id;
	a->sample_period = period;
	if (period)
		a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
}

static void open_error(struct cd_trace_error *e, int err)
{
	e->err = -err;
	int paranoid = 99;
	char buf[32];
	if (cd_read_small("/", "/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf) > 0)
		paranoid = atoi(buf);
	if (err == EACCES || err == EPERM)
		snprintf(e->msg, sizeof e->msg,
		         "perf_event_open refused to trace system calls (%s).\n"
		         "System-wide tracepoints need root or CAP_PERFMON (kernel.perf_event_paranoid\n"
		         "is %d; a container's seccomp profile may also forbid perf_event_open).\n"
		         "Run it as root: sudo clockdoctor top", strerror(err), paranoid);
	else if (err == ENOSYS)
		snprintf(e->msg, sizeof e->msg,
		         "this kernel has no perf events (CONFIG_PERF_EVENTS off): top cannot trace here");
	else
		snprintf(e->msg, sizeof e->msg,
		         "perf_event_open on the syscall tracepoints failed: %s (a kernel without\n"
		         "CONFIG_FTRACE_SYSCALLS, or too many open files: ulimit -n)", strerror(err));
}

static int open_cpu_events(struct cd_tracer *tr, int ci, struct cd_trace_error *e)
{
	int leader = -1;
	for (int s = 0; s < CD_TSYS_N; s++) {
		int *fd = &tr->fd[ci * CD_TSYS_N + s];
		if (!tr->tp[s].have)
			continue;
		struct perf_event_attr a;
		fill_attr(&a, tr->tp[s].id, tr->period);
		long r = perf_open(&a, -1, tr->cpus[ci]);
		if (r < 0) {
			open_error(e, errno);
			return e->err;
		}
		*fd = (int)r;
		if (leader < 0) {
			leader = *fd;
			void *m = mmap(NULL, tr->ring_len + tr->page, PROT_READ | PROT_WRITE, MAP_SHARED,
			               leader, 0);
			tr->ring[ci] = m == MAP_FAILED ? NULL : m;
			if (!tr->ring[ci]) {
				int err = errno;
				e->err = -err;
				snprintf(e->msg, sizeof e->msg,
				         "cannot map the perf ring buffer of CPU %d (mmap: %s): the memory perf may\n"
				         "lock is exhausted (sysctl kernel.perf_event_mlock_kb, ulimit -l).",
				         tr->cpus[ci], strerror(err));
				return e->err;
			}
		} else if (ioctl(*fd, PERF_EVENT_IOC_SET_OUTPUT, leader) != 0) {
			open_error(e, errno);
			return e->err;
		}
	}
	return 0;
}

/* -p: exact counts of the process's threads as they are now (a thread
 * started later is only sampled). */
static void open_pid_counters(struct cd_tracer *tr)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task", tr->pid);
	DIR *d = opendir(dir);
	if (!d)
		return;
	tr->pid_counted = true;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		int tid = atoi(de->d_name);
		if (tid <= 0)
			continue;
		for (int s = 0; s < CD_TSYS_N; s++) {
			if (!tr->tp[s].have)
				continue;
			int *nfd = realloc(tr->pid_fd, (tr->n_pid_fd + 1) * sizeof *nfd);
			if (nfd)
				tr->pid_fd = nfd;
			enum cd_tsys *nk = realloc(tr->pid_kind, (tr->n_pid_fd + 1) * sizeof *nk);
			if (nk)
				tr->pid_kind = nk;
			uint64_t *nl = realloc(tr->pid_last, (tr->n_pid_fd + 1) * sizeof *nl);
			if (nl)
				tr->pid_last = nl;
			struct perf_event_attr a;
			fill_attr(&a, tr->tp[s].id, 0);
			long r = nfd && nk && nl ? perf_open(&a, tid, -1) : -1;
			if (r < 0) {
				/* A thread that exited in between is fine; anything else
				 * makes the exact count incomplete. */
				if (errno != ESRCH)
					tr->pid_counted = false;
				continue;
			}
			tr->pid_fd[tr->n_pid_fd] = (int)r;
			tr->pid_kind[tr->n_pid_fd] = (enum cd_tsys)s;
			tr->pid_last[tr->n_pid_fd] = 0;
			tr->n_pid_fd++;
		}
	}
	closedir(d);
}

static int read_cpus(struct cd_tracer *tr)
{
	char buf[4096];
	int n = cd_read_small("/", "/sys/devices/system/cpu/online", buf, sizeof buf);
	tr->cpus = calloc(MAX_CPUS, sizeof *tr->cpus);
	if (!tr->cpus)
		return -ENOMEM;
	n = n > 0 ? cd_parse_cpu_list(buf, tr->cpus, MAX_CPUS) : -EINVAL;
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c > 0 && c <= MAX_CPUS ? (int)c : 1;
		for (int i = 0; i < n; i++)
			tr->cpus[i] = i;
	}
	tr->ncpus = n;
	return 0;
}

static int out_of_memory(struct cd_trace_error *e)
{
	e->err = -ENOMEM;
	snprintf(e->msg, sizeof e->msg, "out of memory");
	return e->err;
}

/* Each traced call's tracepoint; clock_gettime's (or clock_gettime64's)
 * must be there. */
static int read_tracepoints(struct cd_tracer *tr, struct cd_trace_error *e)
{
	for (int s = 0; s < CD_TSYS_N; s++)
		cd_tracer_read_tracepoint(tr, (enum cd_tsys)s);
	if (tr->tp[CD_TSYS_CLOCK_GETTIME].have || tr->tp[CD_TSYS_CLOCK_GETTIME64].have)
		return 0;
	e->err = -ENOENT;
	snprintf(e->msg, sizeof e->msg,
	         "%s/events/syscalls/sys_enter_clock_gettime is missing or unreadable: this\n"
	         "kernel has no syscall tracepoints for it (CONFIG_FTRACE_SYSCALLS=y is needed).",
	         tr->tracefs);
	return e->err;
}

/* The tables by CPU and event: no event open yet. */
static int alloc_events(struct cd_tracer *tr, struct cd_trace_error *e)
{
	size_t nfd = (size_t)tr->ncpus * CD_TSYS_N;
	tr->fd = malloc(nfd * sizeof *tr->fd);
	tr->last = calloc(nfd, sizeof *tr->last);
	tr->ring = calloc((size_t)tr->ncpus, sizeof *tr->ring);
	tr->cpu_period = calloc((size_t)tr->ncpus, sizeof *tr->cpu_period);
	tr->fresh = calloc(nfd, sizeof *tr->fresh);
	tr->offline = calloc((size_t)tr->ncpus, sizeof *tr->offline);
	tr->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	if (!tr->fd || !tr->last || !tr->ring || !tr->cpu_period || !tr->fresh || !tr->offline)
		return out_of_memory(e);
	for (size_t i = 0; i < nfd; i++)
		tr->fd[i] = -1;
	return 0;
}

/* Exact calls per process: a program on each tracepoint, attached through
 * the first CPU's events (it runs on every CPU's hits). */
static void open_bpf(struct cd_tracer *tr, bool no_bpf)
{
	if (no_bpf) {
		snprintf(tr->bpf_why, sizeof tr->bpf_why, "--no-bpf");
		return;
	}
	int first[CD_TSYS_N];
	for (int s = 0; s < CD_TSYS_N; s++)
		first[s] = tr->fd[s];
	tr->bpf = cd_bpfcount_open(first, tr->bpf_why, sizeof tr->bpf_why);
}

static void ignore_counts(void *arg, int pid, const uint64_t calls[CD_TSYS_N])
{
	(void)arg, (void)pid, (void)calls;
}

/* The counts start now: what the events and the programs counted so far is
 * read and dropped. */
static void start_counts(struct cd_tracer *tr)
{
	uint64_t all[CD_TSYS_N];
	int64_t pc[CD_TSYS_N];
	cd_tracer_counts(tr, all, pc);
	if (tr->bpf)
		cd_bpfcount_read(tr->bpf, ignore_counts, NULL);
}

struct cd_tracer *cd_tracer_open(const struct cd_trace_opts *o, struct cd_trace_error *e)
{
	memset(e, 0, sizeof *e);
	struct cd_tracer *tr = calloc(1, sizeof *tr);
	if (!tr || read_cpus(tr) != 0) {
		free(tr);
		out_of_memory(e);
		return NULL;
	}
	tr->pid = o->pid;
	tr->period = o->initial_period ? o->initial_period : 1;
	tr->page = (size_t)sysconf(_SC_PAGESIZE);
	tr->ring_len = RING_PAGES * tr->page;
	if (cd_tracer_find_tracefs(tr, e) != 0 || read_tracepoints(tr, e) != 0 || alloc_events(tr, e) != 0)
		goto fail;
	for (int ci = 0; ci < tr->ncpus; ci++)
		if (open_cpu_events(tr, ci, e) != 0)
			goto fail;
	if (tr->pid > 0)
		open_pid_counters(tr);
	open_bpf(tr, o->no_bpf);
	start_counts(tr);
	return tr;
fail:
	cd_tracer_close(tr);
	return NULL;
}

void cd_tracer_close(struct cd_tracer *tr)
{
	if (!tr)
		return;
	cd_bpfcount_close(tr->bpf);
	for (int ci = 0; tr->ring && ci < tr->ncpus; ci++)
		if (tr->ring[ci])
			munmap(tr->ring[ci], tr->ring_len + tr->page);
	for (int i = 0; tr->fd && i < tr->ncpus * CD_TSYS_N; i++)
		if (tr->fd[i] >= 0)
			close(tr->fd[i]);
	for (int i = 0; i < tr->n_pid_fd; i++)
		close(tr->pid_fd[i]);
	free(tr->pid_fd);
	free(tr->pid_kind);
	free(tr->pid_last);
	free(tr->ring);
	free(tr->cpu_period);
	free(tr->fresh);
	free(tr->offline);
	free(tr->fd);
	free(tr->last);
	free(tr->cpus);
	free(tr);
}

/* ---- CPUs taken offline and brought back ---- */

/* The kernel detaches a CPU's events when it goes offline
 * (perf_event_exit_cpu_context) and does not bring them back with it: each
 * CPU seen offline has its events opened again once it is online.  A CPU
 * that was not online when top started has no events: counted in *untraced.
 * Returns how many CPUs' events were opened again, or -errno. */
int cd_tracer_follow_cpus(struct cd_tracer *tr, int *untraced, struct cd_trace_error *e)
{
	char buf[4096];
	int online[MAX_CPUS];
	*untraced = 0;
	int n = cd_read_small("/", "/sys/devices/system/cpu/online", buf, sizeof buf);
	n = n > 0 ? cd_parse_cpu_list(buf, online, MAX_CPUS) : -EINVAL;
	if (n <= 0)
		return 0;
	int reopened = 0;
	for (int ci = 0; ci < tr->ncpus; ci++) {
		bool on = false;
		for (int i = 0; i < n; i++)
			on |= online[i] == tr->cpus[ci];
		if (!on) {
			tr->offline[ci] = true;
			continue;
		}
		/* The first CPU's events carry the BPF programs: never reopened
		 * (CPU 0 cannot go offline on x86). */
		if (!tr->offline[ci] || ci == 0)
			continue;
		if (tr->ring[ci])
			munmap(tr->ring[ci], tr->ring_len + tr->page);
		tr->ring[ci] = NULL;
		for (int s = 0; s < CD_TSYS_N; s++) {
			int i = ci * CD_TSYS_N + s;
			if (tr->fd[i] >= 0)
				close(tr->fd[i]);
			tr->fd[i] = -1;
			tr->last[i] = 0;
			tr->fresh[i] = false;
		}
		if (open_cpu_events(tr, ci, e) != 0)
			return e->err;
		tr->offline[ci] = false;
		reopened++;
	}
	for (int i = 0; i < n; i++) {
		bool known = false;
		for (int ci = 0; ci < tr->ncpus; ci++)
			known |= tr->cpus[ci] == online[i];
		*untraced += !known;
	}
	return reopened;
}

/* ---- reading ---- */

static uint64_t read_delta(int fd, uint64_t *last)
{
	uint64_t v;
	if (read(fd, &v, sizeof v) != (ssize_t)sizeof v)
		return 0;
	uint64_t d = v >= *last ? v - *last : 0;
	*last = v;
	return d;
}

void cd_tracer_counts(struct cd_tracer *tr, uint64_t all[CD_TSYS_N], int64_t pid_calls[CD_TSYS_N])
{
	for (int s = 0; s < CD_TSYS_N; s++) {
		all[s] = 0;
		pid_calls[s] = tr->pid_counted ? 0 : -1;
	}
	/* The process's counters first: a call they hold is then in the
	 * system-wide ones too, so the total is not below the process's. */
	for (int i = 0; i < tr->n_pid_fd; i++) {
		uint64_t d = read_delta(tr->pid_fd[i], &tr->pid_last[i]);
		if (tr->pid_counted)
			pid_calls[tr->pid_kind[i]] += (int64_t)d;
	}
	for (int i = 0; i < tr->ncpus * CD_TSYS_N; i++)
		if (tr->fd[i] >= 0)
			all[i % CD_TSYS_N] += read_delta(tr->fd[i], &tr->last[i]);
}

uint64_t cd_tracer_period(const struct cd_tracer *tr) { return tr->period; }
int cd_tracer_ncpus(const struct cd_tracer *tr) { return tr->ncpus; }
bool cd_tracer_has(const struct cd_tracer *tr, enum cd_tsys s)
{
	return (unsigned)s < CD_TSYS_N && tr->tp[s].have;
}
const char *cd_tracer_tracefs(const struct cd_tracer *tr) { return tr->tracefs; }

struct exact_fill {
	struct cd_tracer *tr;
	struct cd_top_table *t;
};

static void fill_exact(void *arg, int pid, const uint64_t calls[CD_TSYS_N])
{
	struct exact_fill *x = arg;
	struct cd_top_proc *p = cd_top_proc_get(x->t, pid);
	if (!p)
		return;
	if (!p->comm[0])
		cd_trace_read_comm(pid, p->comm, sizeof p->comm);
	p->exact = true;
	for (int s = 0; s < CD_TSYS_N; s++)
		p->calls[s] = (double)calls[s];
}

int cd_tracer_exact_procs(struct cd_tracer *tr, struct cd_top_table *t)
{
	if (!tr->bpf)
		return -ENOTSUP;
	struct exact_fill x = { tr, t };
	return cd_bpfcount_read(tr->bpf, fill_exact, &x);
}

const char *cd_tracer_exact_why(const struct cd_tracer *tr) { return tr->bpf ? "" : tr->bpf_why; }
