/* SPDX-License-Identifier: MIT */
/*
 * watchhook.c: watch --exec's hooks, bounded in number and time, always
 * reaped (watchhook.h).
 */
#include "watchhook.h"
#include "util/spawn.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

void cd_hooks_reap(struct cd_hooks *h, bool wait_all, double now)
{
	for (int i = 0; i < CD_HOOKS_MAX; i++) {
		pid_t pid = h->run[i].pid;
		if (pid <= 0)
			continue;
		int rc = wait_all ? cd_spawn_wait(pid, 2000) : cd_spawn_poll(pid);
		if (rc == -EAGAIN && now - h->run[i].started > h->timeout_s) {
			kill(pid, SIGKILL);
			rc = cd_spawn_wait(pid, 1000);
			fprintf(stderr, "clockdoctor watch: the hook ran over %.0f s: killed\n", h->timeout_s);
		}
		if (rc == -EAGAIN)
			continue;
		if (rc != 0 && rc != -ETIMEDOUT)
			fprintf(stderr, "clockdoctor watch: the hook exited with status %d\n", rc);
		h->run[i].pid = 0;
	}
}

int cd_hooks_place(struct cd_hooks *h, const char *what, double now)
{
	cd_hooks_reap(h, false, now);
	for (int i = 0; i < CD_HOOKS_MAX; i++)
		if (h->run[i].pid <= 0)
			return i;
	if (h->skipped++ == 0)
		fprintf(stderr, "clockdoctor watch: %d hooks still running: %s not passed to the hook\n",
		        CD_HOOKS_MAX, what);
	return -1;
}

void cd_hooks_start(struct cd_hooks *h, int i, char *const env[], double now)
{
	char *argv[] = { "/bin/sh", "-c", (char *)h->cmd, NULL };
	pid_t pid = cd_spawn(argv, env, true);
	if (pid < 0) {
		fprintf(stderr, "clockdoctor watch: cannot run the hook: %s\n", strerror((int)-pid));
		return;
	}
	h->run[i].pid = pid;
	h->run[i].started = now;
}
