/* SPDX-License-Identifier: MIT */
/*
 * spawn.c: run a program, no shell, always reaped (spawn.h).
 */
#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* cd_spawn with stdout onto fd out_fd (when >= 0), close_fd closed in the
 * child, and with group, the child in a process group of its own. */
static pid_t spawn_fds(char *const argv[], char *const envp[], bool out_to_stderr, int out_fd, int close_fd,
                       bool group)
{
	if (!argv || !argv[0] || !argv[0][0])
		return -EINVAL;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	pid_t pid;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (out_to_stderr)
		posix_spawn_file_actions_adddup2(&fa, 2, 1);
	if (out_fd >= 0) {
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
		posix_spawn_file_actions_addclose(&fa, out_fd);
	}
	if (close_fd >= 0)
		posix_spawn_file_actions_addclose(&fa, close_fd);
	/* Our handlers (csswitch's restore, watch's stop flag) are not the
	 * child's: it starts with the default actions and nothing blocked. */
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	/* pgroup 0: the child's own pid, a group of its own */
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
	                         (group ? POSIX_SPAWN_SETPGROUP : 0));
	int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp ? envp : environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc == 0 ? pid : -rc;
}

pid_t cd_spawn(char *const argv[], char *const envp[], bool out_to_stderr)
{
	return spawn_fds(argv, envp, out_to_stderr, -1, -1, false);
}

pid_t cd_spawn_group(char *const argv[], char *const envp[], bool out_to_stderr)
{
	return spawn_fds(argv, envp, out_to_stderr, -1, -1, true);
}

static int decode(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -EIO;
}

int cd_spawn_poll(pid_t pid)
{
	int status;
	pid_t r;
	do
		r = waitpid(pid, &status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return -EAGAIN;
	return r < 0 ? -errno : decode(status);
}

int cd_spawn_wait(pid_t pid, int timeout_ms)
{
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int status;
	if (timeout_ms <= 0) {
		pid_t r;
		do
			r = waitpid(pid, &status, 0);
		while (r < 0 && errno == EINTR);
		return r < 0 ? -errno : decode(status);
	}
	for (long waited = 0; waited < timeout_ms; waited += 10) {
		int rc = cd_spawn_poll(pid);
		if (rc != -EAGAIN)
			return rc;
		nanosleep(&tick, NULL);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return -ETIMEDOUT;
}

int cd_spawn_and_wait(char *const argv[], char *const envp[], int timeout_ms)
{
	pid_t pid = cd_spawn(argv, envp, true);
	return pid < 0 ? pid : cd_spawn_wait(pid, timeout_ms);
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int cd_spawn_capture(char *const argv[], int timeout_ms, size_t max, char **out, size_t *len, bool *truncated)
{
	*out = NULL;
	*len = 0;
	*truncated = false;
	char *buf = malloc(max + 1);
	int fd[2];
	if (!buf)
		return -ENOMEM;
	if (pipe2(fd, O_CLOEXEC) != 0) {
		free(buf);
		return -errno;
	}
	pid_t pid = spawn_fds(argv, NULL, false, fd[1], fd[0], false);
	close(fd[1]);
	if (pid < 0) {
		close(fd[0]);
		free(buf);
		return pid;
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t n = 0;
	for (;;) {
		long left = timeout_ms - elapsed_ms(&t0);
		if (left <= 0)
			break;
		struct pollfd p = { .fd = fd[0], .events = POLLIN };
		int pr = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		char chunk[4096];
		ssize_t r = read(fd[0], chunk, sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t take = (size_t)r;
		if (take > max - n) {
			take = max - n;
			*truncated = true;
		}
		memcpy(buf + n, chunk, take);
		n += take;
	}
	close(fd[0]);
	long left = timeout_ms - elapsed_ms(&t0);
	int rc = cd_spawn_wait(pid, left > 1 ? (int)left : 1);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return rc;
}

/* The group's members are not all our children (the leader's children are
 * its own; once it has gone they are init's), so they cannot be waited
 * for: kill(-pgid, 0) says whether any is left.  The leader's pid stays
 * the group's id, never given to another process, while any member lives
 * (POSIX: a process group ID is not reused while the group exists). */
int cd_spawn_end_group(pid_t pid, int grace_ms)
{
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int rc = -EAGAIN;
	kill(-pid, SIGTERM);
	kill(pid, SIGTERM);       /* the leader, should it have left its group */
	for (long waited = 0; waited < grace_ms; waited += 10) {
		if (rc == -EAGAIN)
			rc = cd_spawn_poll(pid);
		if (rc != -EAGAIN && kill(-pid, 0) != 0)
			return rc;
		nanosleep(&tick, NULL);
	}
	kill(-pid, SIGKILL);
	if (rc == -EAGAIN) {
		int status;
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		rc = decode(status);
	}
	/* SIGKILL is delivered, not yet acted on: the members are gone once
	 * the group is empty (a zombie that init has not reaped yet still
	 * counts, hence the bound). */
	for (long waited = 0; waited < grace_ms && kill(-pid, 0) == 0; waited += 10)
		nanosleep(&tick, NULL);
	return rc;
}
