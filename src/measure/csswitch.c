/* SPDX-License-Identifier: MIT */
/*
 * csswitch.c: switch the clocksource and put it back on every exit path
 * (csswitch.h).
 *
 * The normal end and errors put it back in cd_cs_end(); a signal that ends
 * the process, in its handler, with system calls only; what neither lives
 * through (SIGKILL, a crash) is left to the record, written before the
 * first switch (persist/csrestore.c).
 */
#include "measure/csswitch.h"
#include "persist/csrestore.h"
#include "persist/statedir.h"
#include "util/fsread.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CS_SUBDIR "/devices/system/clocksource/clocksource0"

/*
 * The async-signal-safe restore state: the one piece of global mutable
 * state, because a signal handler can reach nothing else.  Filled while
 * `armed` is 0 and before the handlers are installed (a signal fence keeps
 * the compiler from moving the filling past the arming); the handler reads it
 * only when `armed` is 1.  Paths and the line to write are plain arrays, so
 * the handler needs no allocation and no library call beyond open, write,
 * read, close and unlink.  owner is the process that armed it: a child it
 * forks (kernelpath.c's, whose seccomp filter and pipe outlive a parent
 * killed with SIGKILL) inherits the state and the handlers, and its own
 * SIGPIPE must not put back a switch that is its parent's to keep or to
 * undo (a run killed with -9 is put back by the next run or --restore).
 * With it, the actions the handlers replaced, put back by cd_cs_end().
 */
static struct {
	volatile sig_atomic_t armed;
	pid_t owner;
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
		state_dir = cd_state_dir();
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

int cd_cs_current(const struct cd_cs *cs, char *name, size_t len)
{
	char buf[256];
	int n = cd_read_raw(cs->current_path, buf, sizeof buf, 0);
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
	int n = cd_read_raw(cs->available_path, buf, sizeof buf, 0);
	if (n < 0)
		return n;
	int count = 0;
	for (char *save = NULL, *tok = strtok_r(buf, " \t\r\n", &save); tok && count < max;
	     tok = strtok_r(NULL, " \t\r\n", &save))
		if (cd_cs_name_valid(tok))
			strcpy(names[count++], tok);
	return count;
}

bool cd_cs_is_available(const struct cd_cs *cs, const char *name)
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

/* Writing a name pins the kernel to it for good (override_name), and
 * before the run there was usually no pin.  So when the command line names
 * no clocksource, clear the pin first (a bare newline: sysfs_get_uname()
 * leaves override_name empty and clocksource_select() picks the kernel's
 * own best) and keep that when it is the original; otherwise, or when the
 * kernel's choice differs, write the name. */
int cd_cs_put_back(const struct cd_cs *cs, const char *original, char *err, size_t errlen)
{
	char cmdline[4096], now[CD_CS_NAME_MAX];
	if (cd_read_raw("/proc/cmdline", cmdline, sizeof cmdline, 0) >= 0 && !strstr(cmdline, "clocksource=") &&
	    write_current(cs->current_path, "\n", 1) == 0 && cd_cs_current(cs, now, sizeof now) == 0 &&
	    strcmp(now, original) == 0)
		return 0;
	return set_and_confirm(cs, original, err, errlen);
}

/* ---- the signal-safe restore ---- */

void cd_cs_restore_signal_safe(void)
{
	if (!restore_state.armed || getpid() != restore_state.owner)
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
	int rc = cd_cs_record_remove(cs);
	if (rc < 0)
		snprintf(err, errlen, "%s %s, but cannot remove %s: %s", done, name, cs->record_path,
		         strerror(-rc));
	return rc;
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
	rc = cd_cs_record_write(cs, err, errlen);
	if (rc < 0)
		return rc;
	/* Another run may have switched between our read and our record: the
	 * record must name what the kernel has now. */
	char again[CD_CS_NAME_MAX];
	if (cd_cs_current(cs, again, sizeof again) != 0 || strcmp(again, cs->original) != 0) {
		cd_cs_record_remove(cs);
		snprintf(err, errlen, "the clocksource changed while clockdoctor was starting (another "
		         "run?): nothing switched");
		return -EBUSY;
	}
	restore_state.armed = 0;
	snprintf(restore_state.current_path, sizeof restore_state.current_path, "%s", cs->current_path);
	snprintf(restore_state.record_path, sizeof restore_state.record_path, "%s", cs->record_path);
	snprintf(restore_state.line, sizeof restore_state.line, "%s\n", cs->original);
	restore_state.line_len = strlen(restore_state.line);
	restore_state.owner = getpid();
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
	if (!cd_cs_is_available(cs, name)) {
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
		rc = cd_cs_put_back(cs, cs->original, err, errlen);
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
