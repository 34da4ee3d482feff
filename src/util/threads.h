/* SPDX-License-Identifier: MIT */
/*
 * threads.h: starting the measuring threads of a command (accuracy's
 * readers, bench's scaling workers) so that Ctrl-C still reaches the
 * command's own thread.
 */
#ifndef CD_UTIL_THREADS_H
#define CD_UTIL_THREADS_H

#include <pthread.h>
#include <stddef.h>

/* Starts n threads, the i-th running fn((char *)args + i * stride), with
 * every signal blocked (a thread inherits its creator's mask: a signal
 * sent to the process then goes to the calling thread, whose mask is put
 * back before this returns).  Returns how many started, the first ones;
 * *err is 0, or -errno of the first that could not be started. */
int cd_threads_start(pthread_t *tid, int n, void *(*fn)(void *), void *args, size_t stride, int *err);

#endif
