/* SPDX-License-Identifier: MIT */
/*
 * sigforkexec: the accelerator where programs are hard on it.  Run under
 * libfastclock-preload.so.  For SECONDS:
 *
 *   - a timer signal every 200 us whose handler reads clock_gettime
 *     (MONOTONIC, REALTIME), gettimeofday and time: the library must be
 *     async-signal-safe, even when the signal lands inside one of its
 *     reads or re-anchors;
 *   - a second thread reading MONOTONIC back to back, so that a fork can
 *     happen while it is inside the library;
 *   - every 10 ms a fork: the child reads the clocks (its first MONOTONIC
 *     must not be below the parent's last before the fork), then half the
 *     children exec this program again with --child (the preload starts
 *     anew in the new image, in a process whose parent was accelerated).
 *
 * Every child must exit 0; MONOTONIC must never go backwards in the main
 * thread, the handler, or a child.  Prints one line, exit 0 on success.
 * A hang is caught by the caller's timeout.
 *
 * usage: sigforkexec [-t SECONDS]       sigforkexec --child PARENT_NS
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t signals, handler_back;
static int64_t handler_last;  /* touched only by the handler */
static atomic_bool stop;

static int64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	struct timespec ts;
	struct timeval tv;
	int64_t m = mono();
	if (m < handler_last)
		handler_back = 1;
	handler_last = m;
	clock_gettime(CLOCK_REALTIME, &ts);
	gettimeofday(&tv, NULL);
	(void)time(NULL);
	signals++;
	errno = saved;
}

static void *reader(void *arg)
{
	(void)arg;
	int64_t last = 0;
	long back = 0;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int64_t m = mono();
		if (m < last)
			back++;
		last = m;
	}
	return (void *)back;
}

/* In a child, forked or exec'd: the clocks read, never below the parent. */
static int child_reads(int64_t parent_ns)
{
	int64_t last = parent_ns;
	for (int i = 0; i < 2000; i++) {
		struct timespec ts;
		struct timeval tv;
		int64_t m = mono();
		if (m < last)
			return 3;
		last = m;
		if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || gettimeofday(&tv, NULL) != 0 || time(NULL) <= 0)
			return 4;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return child_reads(atoll(argv[2]));
	double seconds = 2;
	if (argc == 3 && strcmp(argv[1], "-t") == 0)
		seconds = atof(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: sigforkexec [-t SECONDS]\n");
		return 2;
	}
	sigaction(SIGALRM, &(struct sigaction){ .sa_handler = on_alarm, .sa_flags = SA_RESTART }, NULL);
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 200 }, { 0, 200 } }, NULL);
	/* The reader thread starts with SIGALRM blocked, so that the handler
	 * runs on the main thread only: handler_last is then read and written
	 * in order (two handlers on two threads could interleave, and a
	 * preempted one would compare an older reading with a newer one). */
	sigset_t alrm, old_mask;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &old_mask);
	pthread_t th;
	int have_thread = pthread_create(&th, NULL, reader, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);

	int64_t start = mono(), last = start, main_back = 0, next_fork = start;
	long forks = 0, execs = 0, failures = 0;
	while (mono() - start < (int64_t)(seconds * 1e9)) {
		int64_t m = mono();
		if (m < last)
			main_back++;
		last = m;
		if (m < next_fork)
			continue;
		next_fork = m + 10000000;
		char arg[32];
		snprintf(arg, sizeof arg, "%lld", (long long)mono());
		bool do_exec = forks % 2 == 1;
		pid_t pid = fork();
		if (pid == 0) {
			if (do_exec) {
				execl("/proc/self/exe", argv[0], "--child", arg, (char *)NULL);
				_exit(5);
			}
			_exit(child_reads(atoll(arg)));
		}
		if (pid < 0) {
			failures++;
			continue;
		}
		forks++;
		execs += do_exec;
		int status;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			failures++;
			fprintf(stderr, "sigforkexec: child %ld (%s) ended with status 0x%x\n", forks,
			        do_exec ? "exec" : "fork", status);
		}
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	atomic_store(&stop, true);
	void *thread_back = NULL;
	if (have_thread)
		pthread_join(th, &thread_back);
	bool ok = failures == 0 && main_back == 0 && !handler_back && thread_back == NULL && signals > 0 && forks > 0;
	printf("signals=%ld forks=%ld execs=%ld child_failures=%ld backwards=%lld handler_backwards=%d "
	       "thread_backwards=%ld %s\n", (long)signals, forks, execs, failures, (long long)main_back,
	       (int)handler_back, (long)thread_back, ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
