/* SPDX-License-Identifier: MIT */
/*
 * signals.c: a stop signal's handler, installed without SA_RESTART, and the
 * one that sets a flag (signals.h).
 */
#include "util/signals.h"

#include <signal.h>
#include <string.h>

void cd_catch_signal(int sig, void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static volatile sig_atomic_t *stop_flag;

static void set_stop_flag(int sig)
{
	(void)sig;
	*stop_flag = 1;
}

void cd_catch_stop(volatile sig_atomic_t *flag, const int *sigs, int n)
{
	stop_flag = flag;
	for (int i = 0; i < n; i++)
		cd_catch_signal(sigs[i], set_stop_flag);
}

static void stop_then_die(int sig)
{
	if (!*stop_flag) {
		*stop_flag = 1;
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void cd_catch_stop_twice(volatile sig_atomic_t *flag, const int *sigs, int n)
{
	stop_flag = flag;
	for (int i = 0; i < n; i++)
		cd_catch_signal(sigs[i], stop_then_die);
}
