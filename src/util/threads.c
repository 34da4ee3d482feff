/* SPDX-License-Identifier: MIT */
/*
 * threads.c: threads started with every signal blocked (threads.h).
 */
#include "util/threads.h"

#include <signal.h>

int cd_threads_start(pthread_t *tid, int n, void *(*fn)(void *), void *args, size_t stride, int *err)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int started = 0;
	*err = 0;
	for (; started < n; started++) {
		int rc = pthread_create(&tid[started], NULL, fn, (char *)args + (size_t)started * stride);
		if (rc != 0) {
			*err = -rc;
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return started;
}
