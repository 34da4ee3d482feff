/*
 * tracepf.c: the kernel half of `clockdoctor top`: tracefs, perf_event_open
 * on the syscall tracepoints, and the per-CPU ring buffers.
 *
 * No BPF toolchain: one perf event per (online CPU, traced system call),
 * system-wide (pid -1).  Each is a sampling event, and reading the event's
 * file descriptor gives its exact count of calls whatever the period, so one
 * event serves both the exact totals and the sampled per-process split.
 * Every event of a CPU writes into that CPU's one ring buffer
 * (PERF_EVENT_IOC_SET_OUTPUT); a sample carries the process and the raw
 * tracepoint record, whose first field (common_type) says which system call
 * it was and whose which_clock field, at the offset the format file gives,
 * the clock id.  PERF_SAMPLE_PERIOD is not asked for: on a software event
 * it makes the kernel record every event (perf_swevent_event), whatever
 * the period.  A sample stands for the period in force when it is read; the
 * ring buffers are drained before the period changes.
 *
 * PERF_EVENT_IOC_PERIOD zeroes the kernel's count to the next sample
 * (__perf_event_period), so the event's next hit is sampled at once: that
 * sample stands for one call, not a period.  Weighed as a period, it biased
 * whichever process called first after each change (redithered every 50 ms
 * at a period near 490, a process making 20000 calls a second came out 20-28%
 * over, one making 50 about 190 times over), so each event's first sample
 * after a change weighs 1 and the period is changed seldom: when the counts
 * say it is off by more than 2x (top.c), and redithered once a second.  (A
 * regular sample written between a CPU's drain and its ioctl, a window of
 * microseconds, is taken for the forced one: rare, and off by one period.)
 */
#include "measure/trace.h"
#include "probe/elf.h"
#include "measure/bpfcount.h"
#include "util/fsread.h"
#include "util/monotime.h"
#include "util/printable.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 4096
#define RING_PAGES 16           /* 64 KiB a CPU: 0.1 s of a few thousand samples, many times over */
#define POLL_NS 50000000L       /* the ring buffers are drained every 50 ms */
#define REDITHER_S 1.0          /* and the periods redithered at most this often */

struct tracepoint {
	bool have;
	long id;
	int clock_off, clock_size;  /* which_clock; clock_size 0 when the call has none */
};

struct cd_tracer {
	char tracefs[64];
	struct tracepoint tp[CD_TSYS_N];
	int ncpus;
	int *cpus;
	int *fd;                    /* [cpu index * CD_TSYS_N + syscall], -1 when absent */
	uint64_t *last;             /* the count read last time, per fd */
	void **ring;                /* per CPU, NULL when it could not be mapped */
	size_t page, ring_len;
	int *pid_fd;                /* -p: counting events on the process's threads */
	enum cd_tsys *pid_kind;
	uint64_t *pid_last;
	int n_pid_fd;
	bool pid_counted;
	int pid;
	uint64_t period;            /* the period aimed at (cd_tracer_set_period) */
	/* Each CPU's period in force, dithered around `period`: a fixed "every
	 * P-th event" locks onto a loop that makes k calls a turn (P and k with a
	 * common factor always sample the same call), so every REDITHER_S each
	 * CPU gets a new prime period in [P/2, 3P/2).  Its samples are weighted
	 * by it, except the first of each event after the change (fresh). */
	uint64_t *cpu_period;
	bool *fresh;                /* per fd: its next sample is the forced one */
	bool *offline;              /* per CPU: seen offline since its events were opened */
	struct cd_bpfcount *bpf;    /* exact calls per process; NULL: sampled only */
	char bpf_why[600];          /* why not */
	double dithered_at;         /* POLL_CLOCK time of the last redither */
	uint64_t rng;
};

/* The polling reads CLOCK_MONOTONIC_COARSE, which the vDSO serves on every
 * clocksource, so that on hpet top does not show up in its own table at 20
 * system calls a second; its few ms of granularity do not matter to a
 * slice of 0.2 s (top.c times whole intervals with CLOCK_MONOTONIC). */
#define POLL_CLOCK CLOCK_MONOTONIC_COARSE

static long perf_open(struct perf_event_attr *a, int pid, int cpu)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ---- tracefs ---- */

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

/* CLOCKDOCTOR_TRACEFS names the tracefs to use, never mounted (the tests
 * give a folder without the syscall tracepoints, or with odd ones). */
static int forced_tracefs(struct cd_tracer *tr, const char *dir, struct cd_trace_error *e)
{
	int err = 0;
	char p[128];
	struct stat st;
	snprintf(tr->tracefs, sizeof tr->tracefs, "%s", dir);
	if (has_syscall_events(dir, &err))
		return 0;
	snprintf(p, sizeof p, "%s/events", dir);
	e->err = -ENOENT;
	if (stat(p, &st) == 0)
		snprintf(e->msg, sizeof e->msg,
		         "this kernel has no syscall tracepoints (%s/events/syscalls is missing):\n"
		         "it was built without CONFIG_FTRACE_SYSCALLS.", dir);
	else
		snprintf(e->msg, sizeof e->msg, "no tracefs at %s (CLOCKDOCTOR_TRACEFS)", dir);
	return e->err;
}

/* Finds tracefs, mounting it where it belongs when it is not mounted. */
static int find_tracefs(struct cd_tracer *tr, struct cd_trace_error *e)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *forced = getenv("CLOCKDOCTOR_TRACEFS");
	if (forced && *forced)
		return forced_tracefs(tr, forced, e);
	int err = 0;
	for (int i = 0; i < 2; i++)
		if (has_syscall_events(dirs[i], &err)) {
			snprintf(tr->tracefs, sizeof tr->tracefs, "%s", dirs[i]);
			return 0;
		}
	for (int i = 0; i < 2 && err != -EACCES; i++) {
		char p[128];
		struct stat st;
		snprintf(p, sizeof p, "%s/events", dirs[i]);
		if (stat(p, &st) != 0)
			continue;
		/* tracefs is there, the syscall tracepoints are not. */
		e->err = -ENOENT;
		snprintf(e->msg, sizeof e->msg,
		         "this kernel has no syscall tracepoints (%s/events/syscalls is missing):\n"
		         "it was built without CONFIG_FTRACE_SYSCALLS.  A distribution kernel (Debian,\n"
		         "Ubuntu, Fedora, RHEL) has them; without them, perf trace and bcc's syscount\n"
		         "cannot see system calls by name either.", dirs[i]);
		return e->err;
	}
	if (err == -EACCES) {
		e->err = -EACCES;
		snprintf(e->msg, sizeof e->msg,
		         "cannot read tracefs (%s: permission denied).\n"
		         "Tracing system calls needs root, or CAP_PERFMON with tracefs made readable.\n"
		         "Run it as root: sudo clockdoctor top", dirs[0]);
		return e->err;
	}
	/* The flags systemd mounts these with. */
	const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	int merr = 0;
	if (mount("nodev", dirs[0], "tracefs", flags, NULL) != 0) {
		merr = errno;
	} else {
		fprintf(stderr, "clockdoctor top: mounted tracefs at %s (left mounted)\n", dirs[0]);
		if (has_syscall_events(dirs[0], &err)) {
			snprintf(tr->tracefs, sizeof tr->tracefs, "%s", dirs[0]);
			return 0;
		}
	}
	/* Old kernels have tracefs only inside debugfs; mount it only where it
	 * is not mounted yet (a second mount would stack on the first). */
	struct stat dbg;
	if (stat("/sys/kernel/debug/tracing", &dbg) != 0 &&
	    mount("nodev", "/sys/kernel/debug", "debugfs", flags, NULL) == 0)
		fprintf(stderr, "clockdoctor top: mounted debugfs at /sys/kernel/debug (left mounted)\n");
	if (has_syscall_events(dirs[1], &err)) {
		snprintf(tr->tracefs, sizeof tr->tracefs, "%s", dirs[1]);
		return 0;
	}
	struct stat st;
	bool have_tracing = stat(dirs[0], &st) == 0 || stat(dirs[1], &st) == 0;
	e->err = -ENOENT;
	snprintf(e->msg, sizeof e->msg,
	         "cannot trace system calls: no tracefs with syscall tracepoints.\n"
	         "  %s is not mounted and mounting it failed (%s).\n"
	         "%s"
	         "To get it: on the host (or in a container with --privileged), as root:\n"
	         "  mount -t tracefs nodev /sys/kernel/tracing\n"
	         "and a kernel built with CONFIG_FTRACE_SYSCALLS=y (Debian, Ubuntu, Fedora and RHEL\n"
	         "kernels are); /sys/kernel/tracing/events/syscalls/ must exist.",
	         dirs[0], merr ? strerror(merr) : "mounted, but no events/syscalls",
	         have_tracing ? "" : "  This kernel shows no tracing folder at all (CONFIG_FTRACE off, or\n"
	                              "  a container that hides /sys/kernel).\n");
	return e->err;
}

/* Reads the id and the which_clock field of one sys_enter tracepoint. */
static void read_tracepoint(struct cd_tracer *tr, enum cd_tsys s)
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

static void ignore_counts(void *arg, int pid, const uint64_t calls[CD_TSYS_N])
{
	(void)arg, (void)pid, (void)calls;
}

struct cd_tracer *cd_tracer_open(const struct cd_trace_opts *o, struct cd_trace_error *e)
{
	memset(e, 0, sizeof *e);
	struct cd_tracer *tr = calloc(1, sizeof *tr);
	if (!tr || read_cpus(tr) != 0) {
		free(tr);
		e->err = -ENOMEM;
		snprintf(e->msg, sizeof e->msg, "out of memory");
		return NULL;
	}
	tr->pid = o->pid;
	tr->period = o->initial_period ? o->initial_period : 1;
	tr->page = (size_t)sysconf(_SC_PAGESIZE);
	tr->ring_len = RING_PAGES * tr->page;
	if (find_tracefs(tr, e) != 0)
		goto fail;
	for (int s = 0; s < CD_TSYS_N; s++)
		read_tracepoint(tr, (enum cd_tsys)s);
	if (!tr->tp[CD_TSYS_CLOCK_GETTIME].have && !tr->tp[CD_TSYS_CLOCK_GETTIME64].have) {
		e->err = -ENOENT;
		snprintf(e->msg, sizeof e->msg,
		         "%s/events/syscalls/sys_enter_clock_gettime is missing or unreadable: this\n"
		         "kernel has no syscall tracepoints for it (CONFIG_FTRACE_SYSCALLS=y is needed).",
		         tr->tracefs);
		goto fail;
	}
	size_t nfd = (size_t)tr->ncpus * CD_TSYS_N;
	tr->fd = malloc(nfd * sizeof *tr->fd);
	tr->last = calloc(nfd, sizeof *tr->last);
	tr->ring = calloc((size_t)tr->ncpus, sizeof *tr->ring);
	tr->cpu_period = calloc((size_t)tr->ncpus, sizeof *tr->cpu_period);
	tr->fresh = calloc(nfd, sizeof *tr->fresh);
	tr->offline = calloc((size_t)tr->ncpus, sizeof *tr->offline);
	tr->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	if (!tr->fd || !tr->last || !tr->ring || !tr->cpu_period || !tr->fresh || !tr->offline) {
		e->err = -ENOMEM;
		snprintf(e->msg, sizeof e->msg, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nfd; i++)
		tr->fd[i] = -1;
	for (int ci = 0; ci < tr->ncpus; ci++)
		if (open_cpu_events(tr, ci, e) != 0)
			goto fail;
	if (tr->pid > 0)
		open_pid_counters(tr);
	/* Exact calls per process: a program on each tracepoint, attached
	 * through the first CPU's events (it runs on every CPU's hits). */
	if (o->no_bpf) {
		snprintf(tr->bpf_why, sizeof tr->bpf_why, "--no-bpf");
	} else {
		int first[CD_TSYS_N];
		for (int s = 0; s < CD_TSYS_N; s++)
			first[s] = tr->fd[s];
		tr->bpf = cd_bpfcount_open(first, tr->bpf_why, sizeof tr->bpf_why);
	}
	/* The counts start now. */
	uint64_t all[CD_TSYS_N];
	int64_t pc[CD_TSYS_N];
	cd_tracer_counts(tr, all, pc);
	if (tr->bpf)
		cd_bpfcount_read(tr->bpf, ignore_counts, NULL);
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

static void read_comm(int pid, char *comm, size_t len)
{
	char path[48], buf[64];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	/* A comm is at most 15 bytes (TASK_COMM_LEN); cut anything longer.
	 * Any process may name itself with terminal escapes (prctl). */
	int n = cd_read_small("/", path, buf, sizeof buf);
	if (n > 0)
		cd_printable_copy(comm, len, buf, n < 15 ? (size_t)n : 15);
	else
		snprintf(comm, len, "?");      /* it exited before we looked */
}

bool cd_trace_sees_program(const struct cd_elf_info *e)
{
#if defined(__x86_64__) || defined(__aarch64__)
	if ((e->kind == CD_ELF_DYNAMIC || e->kind == CD_ELF_STATIC) && e->bits == 32)
		return false;
#else
	(void)e;
#endif
	return true;
}

static bool unseen(int pid, struct cd_unseen *u)
{
	char exe[48];
	struct cd_elf_info e;
	snprintf(exe, sizeof exe, "/proc/%d/exe", pid);
	if (cd_elf_classify_file(exe, &e) < 0 || cd_trace_sees_program(&e))
		return false;
	u->pid = pid;
	u->x32 = e.machine == EM_X86_64;
	read_comm(pid, u->comm, sizeof u->comm);
	for (char *c = u->comm; *c; c++)   /* a comm is whatever the program set */
		if (*c < 0x20 || *c >= 0x7f)
			*c = '?';
	return true;
}

int cd_trace_unseen_programs(int pid, struct cd_unseen *out, int max)
{
	struct cd_unseen u;
	if (pid > 0) {
		if (!unseen(pid, &u))
			return 0;
		if (max > 0)
			out[0] = u;
		return 1;
	}
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		int p = atoi(de->d_name);
		if (p > 0 && unseen(p, &u)) {
			if (n < max)
				out[n] = u;
			n++;
		}
	}
	closedir(d);
	return n;
}

/* One PERF_RECORD_SAMPLE of CPU index ci: u32 pid, tid; u32 size; raw
 * data.  It weighs the CPU's period, or 1 when it is its event's first
 * since the period was set (see the top of the file). */
static void take_sample(struct cd_tracer *tr, int ci, const unsigned char *rec, size_t len,
                        struct cd_top_table *t)
{
	const size_t hdr = sizeof(struct perf_event_header);
	if (len < hdr + 8 + 4)
		return;
	uint32_t pid, raw_size;
	memcpy(&pid, rec + hdr, 4);
	memcpy(&raw_size, rec + hdr + 8, 4);
	const unsigned char *raw = rec + hdr + 12;
	if (raw_size > len - (hdr + 12))
		return;
	long long type;
	if (!cd_tp_read_int(raw, raw_size, 0, 2, false, &type))
		return;
	for (int s = 0; s < CD_TSYS_N; s++) {
		const struct tracepoint *tp = &tr->tp[s];
		if (!tp->have || tp->id != type)
			continue;
		long long clk = -1;
		if (tp->clock_size)
			cd_tp_read_int(raw, raw_size, tp->clock_off, tp->clock_size, false, &clk);
		uint64_t period = tr->cpu_period[ci] ? tr->cpu_period[ci] : tr->period;
		bool *fresh = &tr->fresh[ci * CD_TSYS_N + s];
		if (*fresh) {
			period = 1;
			*fresh = false;
		}
		size_t before = t->n;
		cd_top_add_sample(t, (int)pid, (enum cd_tsys)s, clk, period);
		if (t->n > before)
			read_comm((int)pid, t->p[t->n - 1].comm, sizeof t->p[t->n - 1].comm);
		return;
	}
}

static void drain(struct cd_tracer *tr, int ci, struct cd_top_table *t)
{
	struct perf_event_mmap_page *mp = tr->ring[ci];
	if (!mp)
		return;
	const unsigned char *data = (const unsigned char *)mp + tr->page;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	unsigned char rec[65536];
	while (tail < head) {
		struct perf_event_header h;
		size_t off = (size_t)(tail % tr->ring_len);
		for (size_t i = 0; i < sizeof h; i++)
			((unsigned char *)&h)[i] = data[(off + i) % tr->ring_len];
		if (h.size < sizeof h || tail + h.size > head)
			break;
		/* A record may wrap around the end of the buffer: copy it whole. */
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(off + i) % tr->ring_len];
		if (h.type == PERF_RECORD_SAMPLE)
			take_sample(tr, ci, rec, h.size, t);
		else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
			uint64_t lost;
			memcpy(&lost, rec + sizeof h + 8, 8);
			t->lost += lost;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
}

static bool is_prime(uint64_t n)
{
	if (n < 2)
		return false;
	for (uint64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return false;
	return true;
}

/* A prime period in about [p/2, 3p/2).  Prime, because a loop of k calls
 * (k < period) is then sampled at every one of its k positions in turn:
 * the sample's position in the loop advances by period mod k, which shares
 * no factor with k.  Random within the range (xorshift64), so that longer
 * patterns do not lock on either. */
static uint64_t dithered(struct cd_tracer *tr, uint64_t p)
{
	tr->rng ^= tr->rng << 13;
	tr->rng ^= tr->rng >> 7;
	tr->rng ^= tr->rng << 17;
	if (p < 2)
		return p;
	uint64_t q = p / 2 + tr->rng % p;
	if (q < 3)
		q = 3;          /* 2 is prime but even: it would lock onto a two-call loop */
	while (!is_prime(q))
		q++;
	return q;
}

/* Drain one CPU, then give its events a new dithered period: the samples
 * drained were all taken under the period recorded for them.  An event
 * whose period was set takes its next hit at once: that sample is fresh.
 * (An event whose ioctl failed keeps the old period; the CPU's samples are
 * then weighed by the new one, so a failure is not expected to be partial:
 * the same call on the same kind of event.) */
static void drain_and_redither(struct cd_tracer *tr, int ci, struct cd_top_table *t)
{
	drain(tr, ci, t);
	if (!tr->ring[ci])
		return;
	uint64_t p = dithered(tr, tr->period);
	if (p == (tr->cpu_period[ci] ? tr->cpu_period[ci] : tr->period))
		return;                 /* period 1, or the same prime: no reset */
	bool ok = true;
	for (int s = 0; s < CD_TSYS_N; s++) {
		int i = ci * CD_TSYS_N + s;
		if (tr->fd[i] < 0)
			continue;
		if (ioctl(tr->fd[i], PERF_EVENT_IOC_PERIOD, &p) == 0)
			tr->fresh[i] = true;
		else
			ok = false;
	}
	if (ok)
		tr->cpu_period[ci] = p;
}

static void redither_all(struct cd_tracer *tr, struct cd_top_table *t)
{
	for (int ci = 0; ci < tr->ncpus; ci++)
		drain_and_redither(tr, ci, t);
	tr->dithered_at = cd_clock_s(POLL_CLOCK);
}

double cd_tracer_collect(struct cd_tracer *tr, double secs, const volatile sig_atomic_t *stop,
                         struct cd_top_table *t)
{
	double t0 = cd_clock_s(POLL_CLOCK);
	for (;;) {
		if (cd_clock_s(POLL_CLOCK) - tr->dithered_at >= REDITHER_S)
			redither_all(tr, t);
		else
			for (int ci = 0; ci < tr->ncpus; ci++)
				drain(tr, ci, t);
		double left = secs - (cd_clock_s(POLL_CLOCK) - t0);
		if (left <= 0 || (stop && *stop))
			break;
		long ns = left * 1e9 < POLL_NS ? (long)(left * 1e9) : POLL_NS;
		struct timespec ts = { 0, ns };
		nanosleep(&ts, NULL);   /* EINTR (Ctrl-C) is fine: the loop checks stop */
	}
	return cd_clock_s(POLL_CLOCK) - t0;
}

void cd_tracer_set_period(struct cd_tracer *tr, uint64_t period, struct cd_top_table *t)
{
	if (period == 0 || period == tr->period)
		return;
	/* The samples waiting in the buffers stand for the old period; each
	 * CPU then gets a dithered new one. */
	tr->period = period;
	redither_all(tr, t);
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
		read_comm(pid, p->comm, sizeof p->comm);
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
