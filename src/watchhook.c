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
#include <time.h>

/* A hook's shell leads a process group of its own (cd_spawn_group): what
 * the command starts in the background is ended with it, never left behind
 * when it runs over its time or watch ends. */
#define GRACE_MS 1000      /* after SIGTERM, before SIGKILL */
#define END_WAIT_MS 2000   /* at the end, for all of them together */

/* Whether place i's hook ended (reaped: its status in *rc). */
static bool ended(struct cd_hooks *h, int i, int *rc)
{
	*rc = cd_spawn_poll(h->run[i].pid);
	return *rc != -EAGAIN;
}

static void done(struct cd_hooks *h, int i, int rc)
{
	if (rc != 0 && rc != -ETIMEDOUT)
		fprintf(stderr, "clockdoctor watch: the hook exited with status %d\n", rc);
	h->run[i].pid = 0;
}

void cd_hooks_reap(struct cd_hooks *h, bool wait_all, double now)
{
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int rc;
	for (long waited = 0; wait_all && waited < END_WAIT_MS; waited += 10) {
		bool left = false;
		for (int i = 0; i < CD_HOOKS_MAX; i++)
			if (h->run[i].pid > 0 && !(ended(h, i, &rc) ? (done(h, i, rc), true) : false))
				left = true;
		if (!left)
			return;
		nanosleep(&tick, NULL);
	}
	for (int i = 0; i < CD_HOOKS_MAX; i++) {
		if (h->run[i].pid <= 0 || (!ended(h, i, &rc) && !wait_all && now - h->run[i].started <= h->timeout_s))
			continue;
		if (rc == -EAGAIN) {
			rc = cd_spawn_end_group(h->run[i].pid, GRACE_MS);
			if (wait_all)
				fprintf(stderr, "clockdoctor watch: the hook was still running at the end: ended\n");
			else
				fprintf(stderr, "clockdoctor watch: the hook ran over %.0f s: killed\n", h->timeout_s);
			rc = -ETIMEDOUT;
		}
		done(h, i, rc);
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
	pid_t pid = cd_spawn_group(argv, env, true);
	if (pid < 0) {
		fprintf(stderr, "clockdoctor watch: cannot run the hook: %s\n", strerror((int)-pid));
		return;
	}
	h->run[i].pid = pid;
	h->run[i].started = now;
}
