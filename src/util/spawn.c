/* SPDX-License-Identifier: MIT */
/*
 * spawn.c: run a program, no shell, always reaped (spawn.h).
 */
#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

pid_t cd_spawn(char *const argv[], char *const envp[], bool out_to_stderr)
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
	/* Our handlers (csswitch's restore, watch's stop flag) are not the
	 * child's: it starts with the default actions and nothing blocked. */
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp ? envp : environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc == 0 ? pid : -rc;
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
