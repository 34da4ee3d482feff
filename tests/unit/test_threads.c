/* SPDX-License-Identifier: MIT */
/*
 * test_threads.c: cd_threads_start starts each thread on its own argument,
 * with every signal blocked, and gives the caller its own mask back.
 */
#include "unit.h"
#include "util/threads.h"

#include <signal.h>

struct arg {
	int index;
	int int_blocked, term_blocked, usr1_blocked;
};

static void *record_mask(void *p)
{
	struct arg *a = p;
	sigset_t now;
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	a->int_blocked = sigismember(&now, SIGINT);
	a->term_blocked = sigismember(&now, SIGTERM);
	a->usr1_blocked = sigismember(&now, SIGUSR1);
	a->index *= 10;
	return NULL;
}

int main(void)
{
	sigset_t mine, after;
	sigemptyset(&mine);
	sigaddset(&mine, SIGUSR1);
	pthread_sigmask(SIG_SETMASK, &mine, NULL);

	struct arg a[3] = { { .index = 1 }, { .index = 2 }, { .index = 3 } };
	pthread_t tid[3];
	int err = 99;
	int n = cd_threads_start(tid, 3, record_mask, a, sizeof a[0], &err);
	CHECK_INT(n, 3);
	CHECK_INT(err, 0);
	for (int i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(a[i].index, (i + 1) * 10);   /* each on its own argument */
		CHECK_INT(a[i].int_blocked, 1);
		CHECK_INT(a[i].term_blocked, 1);
		CHECK_INT(a[i].usr1_blocked, 1);
	}
	/* the caller's mask as it was: SIGUSR1 blocked, SIGINT not */
	pthread_sigmask(SIG_SETMASK, NULL, &after);
	CHECK_INT(sigismember(&after, SIGUSR1), 1);
	CHECK_INT(sigismember(&after, SIGINT), 0);

	/* none asked: none started, no error */
	err = 99;
	CHECK_INT(cd_threads_start(tid, 0, record_mask, a, sizeof a[0], &err), 0);
	CHECK_INT(err, 0);
	return unit_done("test_threads");
}
