/* SPDX-License-Identifier: MIT */
/* Unit tests of signals.c: the stop handler runs, and a call it interrupts
 * is not resumed (no SA_RESTART): a sleep ends at once. */
#include "util/signals.h"
#include "unit.h"

#include <errno.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopped;

static void on_stop(int sig)
{
	stopped = sig;
}

int main(void)
{
	cd_catch_signal(SIGUSR1, on_stop);
	struct sigaction sa;
	CHECK_INT(sigaction(SIGUSR1, NULL, &sa), 0);
	CHECK(sa.sa_handler == on_stop);
	CHECK_INT(sa.sa_flags & SA_RESTART, 0);
	raise(SIGUSR1);
	CHECK_INT(stopped, SIGUSR1);

	/* A timer's signal in the middle of a 5 s sleep ends the sleep. */
	stopped = 0;
	cd_catch_signal(SIGALRM, on_stop);
	struct itimerval it = { .it_value = { .tv_usec = 50000 } };
	CHECK_INT(setitimer(ITIMER_REAL, &it, NULL), 0);
	struct timespec nap = { .tv_sec = 5 }, left;
	CHECK_INT(nanosleep(&nap, &left), -1);
	CHECK_INT(errno, EINTR);
	CHECK_INT(stopped, SIGALRM);
	CHECK(left.tv_sec >= 3);
	signal(SIGALRM, SIG_DFL);

	/* cd_catch_stop: each of its signals sets the flag, without SA_RESTART */
	static volatile sig_atomic_t flag;
	cd_catch_stop(&flag, (const int[]){ SIGUSR1, SIGUSR2 }, 2);
	raise(SIGUSR2);
	CHECK_INT(flag, 1);
	flag = 0;
	raise(SIGUSR1);
	CHECK_INT(flag, 1);
	CHECK_INT(sigaction(SIGUSR2, NULL, &sa), 0);
	CHECK_INT(sa.sa_flags & SA_RESTART, 0);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
	return unit_done("signals");
}
