/*
 * csswitch.c: switch the clocksource and put it back on every exit path
 * (csswitch.h).
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
#include "measure/csswitch.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CS_SUBDIR "/devices/system/clocksource/clocksource0"
#define RECORD_HEADER "clockdoctor clocksource record 1"

/*
 * The async-signal-safe restore state: the one piece of global mutable
 * state, because a signal handler can reach nothing else.  Filled while
 * `armed` is 0 and before the handlers are installed (a signal fence keeps
 * the compiler from moving the filling past the arming); the handler reads it
 * only when `armed` is 1.  Paths and the line to write are plain arrays, so
 * the handler needs no allocation and no library call beyond open, write,
 * read, close and unlink.  With it, the actions the handlers replaced, put
 * back by cd_cs_end().
 */
static struct {
	volatile sig_atomic_t armed;
	char current_path[PATH_MAX];
	char record_path[PATH_MAX];
	char line[CD_CS_NAME_MAX + 1]; /* "tsc\n" */
	size_t line_len;
} restore_state;

/* Every signal whose default action ends the process, crashes included: a
 * crash must not leave the machine on another clocksource.  A handler that
 * is already there (a sanitizer's, the caller's) is left alone. */
static const int caught_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM,
	                              SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF,
	                              SIGIO, SIGPWR, SIGSYS, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE,
	                              SIGILL, SIGABRT };
#define N_CAUGHT ((int)(sizeof caught_signals / sizeof caught_signals[0]))
static struct sigaction saved_actions[N_CAUGHT];
static bool installed[N_CAUGHT];

static int join(char *out, size_t len, const char *a, const char *b)
{
	int n = snprintf(out, len, "%s%s", a, b);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int cd_cs_init(struct cd_cs *cs, const char *sysfs_root, const char *state_dir)
{
	memset(cs, 0, sizeof *cs);
	if (!sysfs_root)
		sysfs_root = getenv("CLOCKDOCTOR_SYSFS");
	if (!sysfs_root || !*sysfs_root)
		sysfs_root = "/sys";
	if (!state_dir)
		state_dir = getenv("CLOCKDOCTOR_STATE_DIR");
	if (!state_dir || !*state_dir)
		state_dir = "/run/clockdoctor";
	if (join(cs->current_path, sizeof cs->current_path, sysfs_root, CS_SUBDIR "/current_clocksource") ||
	    join(cs->available_path, sizeof cs->available_path, sysfs_root, CS_SUBDIR "/available_clocksource") ||
	    join(cs->state_dir, sizeof cs->state_dir, state_dir, "") ||
	    join(cs->record_path, sizeof cs->record_path, state_dir, "/" CD_CS_RECORD_NAME))
		return -ENAMETOOLONG;
	return 0;
}

bool cd_cs_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n >= CD_CS_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_-.", name[i]))
			return false;
	return true;
}

/* Read a small file whole; returns its length or -errno.  flags: extra
 * open flags (O_NOFOLLOW for the record). */
static int read_small_flags(const char *path, char *buf, size_t len, int flags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	while (got + 1 < len) {
		ssize_t r = read(fd, buf + got, len - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return (int)got;
}

static int read_small(const char *path, char *buf, size_t len)
{
	return read_small_flags(path, buf, len, 0);
}

int cd_cs_current(const struct cd_cs *cs, char *name, size_t len)
{
	char buf[256];
	int n = read_small(cs->current_path, buf, sizeof buf);
	if (n < 0)
		return n;
	buf[strcspn(buf, " \t\r\n")] = '\0';
	if (!cd_cs_name_valid(buf) || strlen(buf) >= len)
		return -EINVAL;
	strcpy(name, buf);
	return 0;
}

int cd_cs_available(const struct cd_cs *cs, char names[][CD_CS_NAME_MAX], int max)
{
	char buf[1024];
	int n = read_small(cs->available_path, buf, sizeof buf);
	if (n < 0)
		return n;
	int count = 0;
	for (char *save = NULL, *tok = strtok_r(buf, " \t\r\n", &save); tok && count < max;
	     tok = strtok_r(NULL, " \t\r\n", &save))
		if (cd_cs_name_valid(tok))
			strcpy(names[count++], tok);
	return count;
}

static bool is_available(const struct cd_cs *cs, const char *name)
{
	char names[CD_CS_MAX][CD_CS_NAME_MAX];
	int n = cd_cs_available(cs, names, CD_CS_MAX);
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

int cd_cs_writable(const struct cd_cs *cs, char *err, size_t errlen)
{
	if (access(cs->current_path, W_OK) == 0)
		return 0;
	int e = errno;
	if (e == EACCES || e == EPERM || e == EROFS)
		snprintf(err, errlen, "switching clocksources needs root (%s is not writable)", cs->current_path);
	else
		snprintf(err, errlen, "%s: %s", cs->current_path, strerror(e));
	return -e;
}

/* Write name and a newline to current_clocksource. */
static int write_current(const char *path, const char *line, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, line, len);
	int e = w < 0 ? -errno : (size_t)w != len ? -EIO : 0;
	if (close(fd) != 0 && e == 0)
		e = -errno;
	return e;
}

/* Write name, then read back what the kernel took. */
static int set_and_confirm(const struct cd_cs *cs, const char *name, char *err, size_t errlen)
{
	char line[CD_CS_NAME_MAX + 1], now[CD_CS_NAME_MAX];
	snprintf(line, sizeof line, "%s\n", name);
	int rc = write_current(cs->current_path, line, strlen(line));
	if (rc < 0) {
		snprintf(err, errlen, "cannot write %s to %s: %s", name, cs->current_path, strerror(-rc));
		return rc;
	}
	rc = cd_cs_current(cs, now, sizeof now);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read %s back: %s", cs->current_path, strerror(-rc));
		return rc;
	}
	if (strcmp(now, name) != 0) {
		snprintf(err, errlen, "the kernel did not switch to %s: the current clocksource is %s", name, now);
		return -EIO;
	}
	return 0;
}

/* Put the original back.  Writing a name pins the kernel to it for good
 * (override_name), and before the run there was usually no pin.  So when the
 * command line names no clocksource, clear the pin first (a bare newline:
 * sysfs_get_uname() leaves override_name empty and clocksource_select() picks
 * the kernel's own best) and keep that when it is the original; otherwise,
 * or when the kernel's choice differs, write the name. */
static int restore_original(const struct cd_cs *cs, const char *original, char *err, size_t errlen)
{
	char cmdline[4096], now[CD_CS_NAME_MAX];
	if (read_small("/proc/cmdline", cmdline, sizeof cmdline) >= 0 && !strstr(cmdline, "clocksource=") &&
	    write_current(cs->current_path, "\n", 1) == 0 && cd_cs_current(cs, now, sizeof now) == 0 &&
	    strcmp(now, original) == 0)
		return 0;
	return set_and_confirm(cs, original, err, errlen);
}

/* ---- the signal-safe restore ---- */

void cd_cs_restore_signal_safe(void)
{
	if (!restore_state.armed)
		return;
	int saved_errno = errno;
	if (write_current(restore_state.current_path, restore_state.line, restore_state.line_len) == 0) {
		/* Remove the record only once the kernel shows the original. */
		char back[CD_CS_NAME_MAX + 2];
		int fd = open(restore_state.current_path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, back, sizeof back) : -1;
		if (fd >= 0)
			close(fd);
		size_t want = restore_state.line_len - 1;
		if (n >= (ssize_t)want && memcmp(back, restore_state.line, want) == 0 &&
		    (n == (ssize_t)want || back[want] == '\n' || back[want] == ' ')) {
			restore_state.armed = 0;
			unlink(restore_state.record_path);
		}
	}
	errno = saved_errno;
}

static void on_fatal_signal(int sig)
{
	cd_cs_restore_signal_safe();
	/* SA_RESETHAND put the default action back: the signal now ends the
	 * process as it would have without us (the exit status says so). */
	raise(sig);
}

static void install_handlers(bool catch_sigint)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal_signal;
	sigfillset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND;
	for (int i = 0; i < N_CAUGHT; i++) {
		installed[i] = false;
		if (caught_signals[i] == SIGINT && !catch_sigint)
			continue;
		if (sigaction(caught_signals[i], NULL, &saved_actions[i]) != 0)
			continue;
		/* An ignored signal (nohup) or the caller's own handler stays. */
		if (saved_actions[i].sa_handler != SIG_DFL || (saved_actions[i].sa_flags & SA_SIGINFO))
			continue;
		if (sigaction(caught_signals[i], &sa, NULL) == 0)
			installed[i] = true;
	}
}

static void uninstall_handlers(void)
{
	for (int i = 0; i < N_CAUGHT; i++)
		if (installed[i]) {
			sigaction(caught_signals[i], &saved_actions[i], NULL);
			installed[i] = false;
		}
}

/* ---- the record ---- */

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	return rc;
}

static const char *self_comm(char *buf, size_t len)
{
	int n = read_small("/proc/self/comm", buf, len);
	if (n <= 0)
		return "clockdoctor";
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* mkdir -p: /run itself is missing on minimal systems (an initramfs).  The
 * last folder is ours alone (0700); an existing one must be a real folder,
 * owned by us and writable by nobody else, or root could be led to write
 * through someone's symlink. */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s", dir);
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(path, c == '\0' ? 0700 : 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (c == '\0')
			break;
	}
	struct stat st;
	if (lstat(dir, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

/* The boot's id, so that a record from another boot is recognised. */
static void boot_id(char *out, size_t len)
{
	if (read_small("/proc/sys/kernel/random/boot_id", out, len) <= 0)
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* A process's start time in clock ticks since boot (/proc/PID/stat field
 * 22), or 0 when unknown.  The name in field 2 may hold spaces and
 * parentheses: the fields are counted after its last ')'. */
static unsigned long long start_time(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* After ')': field 3 is the state; field 22 is 20 fields on. */
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

static int write_record(const struct cd_cs *cs, char *err, size_t errlen)
{
	int md = make_dirs(cs->state_dir);
	if (md == -EPERM) {
		snprintf(err, errlen, "%s is not a folder of ours alone (it must be owned by uid %ld and "
		         "not writable by others): not writing the record there", cs->state_dir, (long)geteuid());
		return md;
	}
	if (md < 0) {
		snprintf(err, errlen, "cannot create %s: %s", cs->state_dir, strerror(-md));
		return md;
	}
	char tmp[PATH_MAX + 32], comm[64], boot[64];
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", cs->record_path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(e));
		return -e;
	}
	boot_id(boot, sizeof boot);
	fprintf(f, RECORD_HEADER "\noriginal %s\npid %ld\ncomm %s\nsince %lld\nboot %s\nstart %llu\n",
	        cs->original, (long)getpid(), self_comm(comm, sizeof comm), (long long)time(NULL),
	        boot[0] ? boot : "unknown", start_time((long)getpid()));
	int rc = fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -errno;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && link(tmp, cs->record_path) != 0) {
		rc = -errno;
		/* A file system without hard links: a rename that, like link, never
		 * replaces another run's record. */
		if (rc != -EEXIST && renameat2(AT_FDCWD, tmp, AT_FDCWD, cs->record_path, RENAME_NOREPLACE) == 0)
			rc = 0;
		else if (rc != -EEXIST && errno == EEXIST)
			rc = -EEXIST;
	}
	int saved = rc;
	unlink(tmp);
	if (saved == -EEXIST)
		snprintf(err, errlen, "another run's record appeared at %s", cs->record_path);
	else if (saved < 0)
		snprintf(err, errlen, "cannot write the record %s: %s", cs->record_path, strerror(-saved));
	else
		fsync_dir(cs->state_dir);
	return saved;
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
	if (!r->comm[0] || read_small(path, comm, sizeof comm) <= 0)
		return true;
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, r->comm) == 0;
}

/* ---- the public steps ---- */

/* Disarm the signal-safe restore, put the signal actions back, remove the
 * record: the end of a run, whether it restored (cd_cs_end) or keeps the
 * switch (cd_cs_keep).  done says what happened, for the message when the
 * record cannot be removed. */
static int disarm(struct cd_cs *cs, const char *done, const char *name, char *err, size_t errlen)
{
	restore_state.armed = 0;
	uninstall_handlers();
	cs->begun = false;
	if (unlink(cs->record_path) != 0 && errno != ENOENT) {
		int e = errno;
		snprintf(err, errlen, "%s %s, but cannot remove %s: %s", done, name, cs->record_path,
		         strerror(e));
		return -e;
	}
	fsync_dir(cs->state_dir);
	return 0;
}

int cd_cs_begin(struct cd_cs *cs, bool catch_sigint, char *err, size_t errlen)
{
	if (cs->begun)
		return 0;
	if (access(cs->record_path, F_OK) == 0) {
		snprintf(err, errlen, "%s exists: an earlier run did not put the clocksource back "
		         "(clockdoctor bench --restore)", cs->record_path);
		return -EEXIST;
	}
	int rc = cd_cs_current(cs, cs->original, sizeof cs->original);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read %s: %s", cs->current_path, strerror(-rc));
		return rc;
	}
	rc = write_record(cs, err, errlen);
	if (rc < 0)
		return rc;
	/* Another run may have switched between our read and our record: the
	 * record must name what the kernel has now. */
	char again[CD_CS_NAME_MAX];
	if (cd_cs_current(cs, again, sizeof again) != 0 || strcmp(again, cs->original) != 0) {
		unlink(cs->record_path);
		snprintf(err, errlen, "the clocksource changed while clockdoctor was starting (another "
		         "run?): nothing switched");
		return -EBUSY;
	}
	restore_state.armed = 0;
	snprintf(restore_state.current_path, sizeof restore_state.current_path, "%s", cs->current_path);
	snprintf(restore_state.record_path, sizeof restore_state.record_path, "%s", cs->record_path);
	snprintf(restore_state.line, sizeof restore_state.line, "%s\n", cs->original);
	restore_state.line_len = strlen(restore_state.line);
	atomic_signal_fence(memory_order_seq_cst);
	restore_state.armed = 1;
	install_handlers(catch_sigint);
	cs->begun = true;
	return 0;
}

int cd_cs_switch(struct cd_cs *cs, const char *name, char *err, size_t errlen)
{
	char now[CD_CS_NAME_MAX];
	if (!cd_cs_name_valid(name)) {
		snprintf(err, errlen, "'%s' is not a clocksource name", name);
		return -EINVAL;
	}
	if (cd_cs_current(cs, now, sizeof now) == 0 && strcmp(now, name) == 0)
		return 0;
	if (!is_available(cs, name)) {
		snprintf(err, errlen, "clocksource %s is not available (%s)", name, cs->available_path);
		return -ENOENT;
	}
	if (!cs->begun) {
		snprintf(err, errlen, "internal error: switch before cd_cs_begin");
		return -EINVAL;
	}
	cs->wrote = true;
	return set_and_confirm(cs, name, err, errlen);
}

int cd_cs_end(struct cd_cs *cs, char *err, size_t errlen)
{
	if (!cs->begun)
		return 0;
	char now[CD_CS_NAME_MAX];
	int rc = 0;
	/* After a write the kernel refused, the current clocksource is the
	 * original, but the kernel's override still names the refused one (and
	 * a deferred override is taken later, once the watchdog verifies it):
	 * write the original back all the same. */
	if (cs->wrote || cd_cs_current(cs, now, sizeof now) != 0 || strcmp(now, cs->original) != 0)
		rc = restore_original(cs, cs->original, err, errlen);
	if (rc < 0)
		return rc; /* armed and recorded still: a signal or --restore tries again */
	cs->wrote = false;
	return disarm(cs, "switched back to", cs->original, err, errlen);
}

int cd_cs_keep(struct cd_cs *cs, char *err, size_t errlen)
{
	if (!cs->begun)
		return 0;
	char now[CD_CS_NAME_MAX];
	if (cd_cs_current(cs, now, sizeof now) != 0)
		snprintf(now, sizeof now, "(unreadable)");
	cs->wrote = false;
	return disarm(cs, "kept the clocksource", now, err, errlen);
}

static enum cd_cs_recovery remove_record(const struct cd_cs *cs, enum cd_cs_recovery result, char *msg,
                                         size_t msglen)
{
	if (unlink(cs->record_path) != 0 && errno != ENOENT) {
		size_t used = strlen(msg);
		snprintf(msg + used, msglen - used, " (and cannot remove %s: %s)", cs->record_path,
		         strerror(errno));
		return CD_CS_FAILED;
	}
	fsync_dir(cs->state_dir);
	return result;
}

enum cd_cs_recovery cd_cs_recover(struct cd_cs *cs, char *msg, size_t msglen)
{
	char text[1024];
	int n = read_small_flags(cs->record_path, text, sizeof text, O_NOFOLLOW);
	if (n == -ENOENT) {
		snprintf(msg, msglen, "nothing to restore: no record at %s", cs->record_path);
		return CD_CS_NO_RECORD;
	}
	if (n < 0) {
		snprintf(msg, msglen, "cannot read %s: %s", cs->record_path, strerror(-n));
		return CD_CS_FAILED;
	}
	struct record r;
	if (!parse_record(text, &r)) {
		char aside[PATH_MAX + 16];
		snprintf(aside, sizeof aside, "%s.corrupt", cs->record_path);
		bool moved = rename(cs->record_path, aside) == 0;
		snprintf(msg, msglen, "the record %s is corrupt, so the original clocksource is unknown: "
		         "%s; check %s by hand", cs->record_path, moved ? "kept it as *.corrupt" : "left it",
		         cs->current_path);
		return moved ? CD_CS_CORRUPT : CD_CS_FAILED;
	}
	char boot[64];
	boot_id(boot, sizeof boot);
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
	if (!is_available(cs, r.original)) {
		snprintf(msg, msglen, "cannot restore clocksource %s: the kernel no longer offers it (%s); "
		         "it stays %s; removed the record", r.original, cs->available_path, now);
		return remove_record(cs, CD_CS_UNAVAILABLE, msg, msglen);
	}
	char err[512];
	rc = restore_original(cs, r.original, err, sizeof err);
	if (rc < 0) {
		snprintf(msg, msglen, "cannot restore clocksource %s: %s; the record stays at %s", r.original, err,
		         cs->record_path);
		return CD_CS_FAILED;
	}
	snprintf(msg, msglen, "restored clocksource %s (it was %s, left by clockdoctor pid %ld, which did "
	         "not finish)", r.original, now, r.pid);
	return remove_record(cs, CD_CS_RESTORED, msg, msglen);
}
