/* SPDX-License-Identifier: MIT */
/*
 * signals.h: catching the signals that ask a command to stop (Ctrl-C,
 * SIGTERM, SIGHUP), so that it stops the way it chooses: a handler sets a
 * flag and the command's loop sees it.
 *
 * The handler goes in without SA_RESTART: a sleep, poll or read in progress
 * ends at once (EINTR) instead of resuming, so the flag is seen without
 * waiting for the next tick.  (pthread_join is never interrupted: threads
 * must check the flag themselves.)
 */
#ifndef CD_SIGNALS_H
#define CD_SIGNALS_H

#include <signal.h>

/* Install handler for sig, every other signal unblocked while it runs. */
void cd_catch_signal(int sig, void (*handler)(int));

/* The commonest handler: each of the n signals in sigs sets *flag to 1,
 * which the command's loop watches (one flag a process: a second call
 * replaces the first's). */
void cd_catch_stop(volatile sig_atomic_t *flag, const int *sigs, int n);

/* A measurement's Ctrl-C: the first of the n signals in sigs sets *flag
 * (the command reports what it measured so far); the next one ends the
 * process at once, as that signal's default does (a shell shows 130 for
 * SIGINT).  One flag a process, as above. */
void cd_catch_stop_twice(volatile sig_atomic_t *flag, const int *sigs, int n);

#endif
