/* SPDX-License-Identifier: MIT */
/*
 * klog_live.c: reading this machine's kernel log, for klog.c to parse.
 *
 * The ring buffer (syslog(2)) is first: it is the kernel's own record.  It
 * may be closed to an ordinary user (kernel.dmesg_restrict) or may have
 * wrapped since boot, and the events that matter most happen at boot; then
 * the journal, which keeps the whole boot, is asked through journalctl, run
 * without a shell, bounded in time and size, and always reaped.
 */
#include "probe/probe.h"
#include "util/fsread.h"
#include "util/monotime.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING_MAX (64 << 20)
#define JOURNAL_MAX ((size_t)16 << 20)
#define JOURNAL_TIMEOUT_MS 5000
#define SYSLOG_ACTION_READ_ALL 3     /* not exported by <sys/klog.h> */
#define SYSLOG_ACTION_SIZE_BUFFER 10

static int ring_read(char **out, size_t *len)
{
	int size = klogctl(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0), n = -1, err;

	if (size < 0)
		return -errno;
	size = size == 0 || size > RING_MAX ? RING_MAX : size;
	char *buf = malloc((size_t)size + 1);
	if (!buf || (n = klogctl(SYSLOG_ACTION_READ_ALL, buf, size)) < 0) {
		err = buf ? -errno : -ENOMEM;
		free(buf);
		return err;
	}
	buf[n] = 0;
	*out = buf;
	*len = (size_t)n;
	return 0;
}

/* A child's output until EOF, JOURNAL_MAX bytes (*err = -EFBIG, cut after the
 * last whole line) or the deadline (*err = -ETIMEDOUT). */
static char *read_bounded(int fd, size_t *len, int *err)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1), *nb;
	double deadline = cd_mono_s() + JOURNAL_TIMEOUT_MS / 1e3, left;

	*err = buf ? 0 : -ENOMEM;
	while (buf) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int pr = (left = deadline - cd_mono_s()) > 0 ? poll(&pfd, 1, (int)ceil(left * 1e3)) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {   /* read() only when poll() said so: it could block */
			*err = pr == 0 ? -ETIMEDOUT : -errno;
			break;
		}
		if (n == cap && cap >= JOURNAL_MAX) {
			for (*err = -EFBIG; n > 0 && buf[n - 1] != '\n'; n--)
				;
			break;
		}
		if (n == cap) {
			cap = cap * 2 > JOURNAL_MAX ? JOURNAL_MAX : cap * 2;
			if (!(nb = realloc(buf, cap + 1))) {
				*err = -ENOMEM;   /* half a log would mislead */
				break;
			}
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
			break;
		n += r > 0 ? (size_t)r : 0;
	}
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

/* Reap the child: a second's grace, then SIGKILL (at once if kill_now), then
 * a second more, then give up: a process stuck in the kernel outlives even
 * SIGKILL, and we must not wait for it for ever. */
static void reap(pid_t pid, bool kill_now)
{
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int status;

	if (kill_now)
		kill(pid, SIGKILL);
	for (int i = 0; i < 200; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return;
		if (i == 100)
			kill(pid, SIGKILL);
		nanosleep(&tick, NULL);
	}
}

/* `journalctl -k -b -o short-monotonic`, with no shell, stdin and stderr on
 * /dev/null, killed at the deadline.  *err: -ENOENT when there is no
 * journalctl, -ETIMEDOUT (no text: a log cut at a random point would
 * mislead), -EFBIG (cut at JOURNAL_MAX, text still returned). */
static char *journal_read(size_t *len, int *err)
{
	char *argv[] = { "journalctl", "-k", "-b", "-o", "short-monotonic", "--no-pager", "-q", NULL };
	posix_spawn_file_actions_t fa;
	int fds[2];
	pid_t pid;

	*len = 0;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		*err = -errno;
		return NULL;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	int rc = posix_spawnp(&pid, "journalctl", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		*err = -rc;
		return NULL;
	}
	char *out = read_bounded(fds[0], len, err);
	close(fds[0]);
	reap(pid, *err != 0);
	if (*err && *err != -EFBIG) {
		free(out);
		*len = 0;
		return NULL;
	}
	return out;
}

/* Parse text into log (cleared first; a scratch struct when log is NULL) and
 * say whether it reaches back to boot.  The parse that decides is kept, so
 * cd_klog_live does not parse the chosen text a second time. */
static bool parse_reaches_boot(const char *text, size_t len, struct cd_klog *log)
{
	struct cd_klog *tmp = log ? log : calloc(1, sizeof *tmp);
	if (!tmp)
		return false;
	memset(tmp, 0, sizeof *tmp);
	cd_klog_parse(text, len, tmp);
	bool r = tmp->reaches_boot;
	if (!log)
		free(tmp);
	return r;
}

/* short-monotonic lines start with "[": without one, the journal gave nothing. */
static bool has_log_lines(const char *text, size_t len)
{
	for (size_t i = 0; text && i < len; i++)
		if (text[i] == '[' && (i == 0 || text[i - 1] == '\n'))
			return true;
	return false;
}

/* Why syslog(2) failed, plainly, with what to do about it; then more. */
static void say_why(char *why, size_t cap, int ring_err, const char *more)
{
	char restrict_val[16] = "";

	if (ring_err == -EPERM)
		cd_read_small("/", "/proc/sys/kernel/dmesg_restrict", restrict_val, sizeof restrict_val);
	if (ring_err == 0)
		snprintf(why, cap, "the ring buffer no longer reaches back to boot%s", more);
	else if (ring_err != -EPERM)
		snprintf(why, cap, "the kernel ring buffer could not be read (syslog(2): %s)%s",
			 strerror(-ring_err), more);
	else if (strcmp(restrict_val, "0") == 0)
		snprintf(why, cap, "syslog(2) refused (EPERM) although kernel.dmesg_restrict is 0: "
			 "a container or security policy withholds CAP_SYSLOG; run as root on the "
			 "host, or grant CAP_SYSLOG%s", more);
	else
		snprintf(why, cap, "the kernel log is not readable without root because "
			 "kernel.dmesg_restrict is %s: run as root, or grant CAP_SYSLOG (or set "
			 "the sysctl kernel.dmesg_restrict=0)%s", restrict_val[0] ? restrict_val : "set",
			 more);
}

/* cd_klog_live_text, keeping in *log (when not NULL) the parse of the text
 * it returns. */
static char *live_text(size_t *len, enum cd_klog_source *source, char *why_not, size_t why_cap,
                       struct cd_klog *log)
{
	char *ring = NULL, dummy[1];
	size_t rlen = 0, jlen = 0, dummy_len;
	enum cd_klog_source dummy_source;
	int jerr = 0;

	if (!why_not || why_cap == 0) {
		why_not = dummy;
		why_cap = sizeof dummy;
	}
	len = len ? len : &dummy_len;
	source = source ? source : &dummy_source;
	why_not[0] = 0;
	*len = 0;
	*source = CD_KLOG_NONE;
	int rerr = ring_read(&ring, &rlen);
	if (rerr == 0 && parse_reaches_boot(ring, rlen, log)) {
		*source = CD_KLOG_RING;
		*len = rlen;
		return ring;
	}
	/* The ring buffer has wrapped, or is closed to us: journald keeps the boot. */
	char *jour = journal_read(&jlen, &jerr);
	bool jok = has_log_lines(jour, jlen);
	const char *jwhy = jerr == -ENOENT ? "; journalctl is not installed" :
			   jerr == -ETIMEDOUT ? "; journalctl did not finish within 5 s" :
			   jerr && jerr != -EFBIG ? "; journalctl could not be run" :
			   !jok ? "; journalctl gave no kernel lines for this boot" :
			   jerr ? "; read the journal instead (cut at 16 MiB)" : "; read the journal instead";
	if (jok && (rerr != 0 || rlen == 0 || parse_reaches_boot(jour, jlen, log))) {
		say_why(why_not, why_cap, rerr, jwhy);
		free(ring);
		*source = CD_KLOG_JOURNAL;
		*len = jlen;
		return jour;
	}
	free(jour);
	say_why(why_not, why_cap, rerr, jok ? "; nor does the journal" : jwhy);
	if (rerr != 0)
		return NULL;
	*source = CD_KLOG_RING;
	*len = rlen;
	/* The ring buffer after all (it does not reach boot, nor does the journal):
	 * log may hold the journal's parse now, so parse the ring again. */
	if (log)
		parse_reaches_boot(ring, rlen, log);
	return ring;
}

char *cd_klog_live_text(size_t *len, enum cd_klog_source *source, char *why_not, size_t why_cap)
{
	return live_text(len, source, why_not, why_cap, NULL);
}

void cd_klog_live(struct cd_klog *log)
{
	enum cd_klog_source src;
	size_t len;
	char why[CD_LINE_MAX] = "";

	memset(log, 0, sizeof *log);
	char *text = live_text(&len, &src, why, sizeof why, log);
	/* live_text left the parse of the text it chose in log (or nothing). */
	if (!text)
		memset(log, 0, sizeof *log);
	snprintf(log->why_not, sizeof log->why_not, "%s", why);
	log->source = src;
	log->readable = text != NULL;
	free(text);
}
