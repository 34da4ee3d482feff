/* SPDX-License-Identifier: MIT */
/*
 * watchhook.h: watch --exec: a command run with /bin/sh -c for each event,
 * the event in its environment; at most CD_HOOKS_MAX at once (an event
 * beyond them is not passed on, and that is said once), each killed when
 * it runs over its time, and every one reaped.  Times are CLOCK_MONOTONIC
 * seconds, given by the caller.
 */
#ifndef CD_WATCHHOOK_H
#define CD_WATCHHOOK_H

#include <stdbool.h>
#include <sys/types.h>

#define CD_HOOKS_MAX 4

struct cd_hooks {
	const char *cmd;           /* given to /bin/sh -c */
	double timeout_s;
	struct {
		pid_t pid;         /* 0: a free place */
		double started;
	} run[CD_HOOKS_MAX];
	int skipped;               /* events not passed on: every place taken */
};

/* A free place for one more hook, once those that ended are reaped: its
 * index, or -1 when all are taken (said on stderr the first time; what:
 * the event's type). */
int cd_hooks_place(struct cd_hooks *h, const char *what, double now);

/* Starts h->cmd in place i with the environment env (said on stderr when
 * it cannot be). */
void cd_hooks_start(struct cd_hooks *h, int i, char *const env[], double now);

/* Reaps the hooks that ended (a status other than 0 is said) and kills
 * those over timeout_s; with wait_all, waits for each, 2 s at most. */
void cd_hooks_reap(struct cd_hooks *h, bool wait_all, double now);

#endif
