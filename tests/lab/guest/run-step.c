/* SPDX-License-Identifier: MIT */
/*
 * run-step: run one lab step with a time limit that kills all of it.
 *
 * usage: run-step LIMIT_S CMD [ARGS...]
 *
 * Busybox's timeout signals only the process it started: a step `sh script`
 * killed that way leaves the script's children running, still holding the
 * step's stdout open, so the step would go on to its natural end anyway.
 * Here the step gets its own process group and the whole group is sent
 * SIGTERM at the limit, then SIGKILL 3 s later.
 *
 * Exit status: the command's, 128+N when a signal N ended it, 124 when the
 * limit was reached (and a line on stderr saying so).  A step that ends in
 * time may leave background processes running for later steps: they must
 * not hold the step's stdout, or the step's output never ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t alarmed;

static void on_alarm(int sig)
{
	(void)sig;
	alarmed++;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: run-step LIMIT_S CMD [ARGS...]\n");
		return 125;
	}
	unsigned limit = (unsigned)strtoul(argv[1], NULL, 10);
	pid_t pid = fork();
	if (pid < 0) {
		perror("run-step: fork");
		return 125;
	}
	if (pid == 0) {
		setpgid(0, 0);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "run-step: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);   /* also here: no race with the child's own call */

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;   /* no SA_RESTART: waitpid must see EINTR */
	sigaction(SIGALRM, &sa, NULL);
	alarm(limit ? limit : 1);

	int status, timed_out = 0;
	for (;;) {
		if (waitpid(pid, &status, 0) == pid)
			break;
		if (errno != EINTR) {
			perror("run-step: waitpid");
			return 125;
		}
		if (alarmed == 1 && !timed_out) {
			timed_out = 1;
			fprintf(stderr, "run-step: time limit of %u s reached: "
			        "SIGTERM to the step's process group\n", limit);
			kill(-pid, SIGTERM);
			alarm(3);
		} else if (alarmed >= 2) {
			kill(-pid, SIGKILL);
		}
	}
	if (timed_out) {
		kill(-pid, SIGKILL);   /* whatever ignored SIGTERM */
		return 124;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
