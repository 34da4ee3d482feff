/* SPDX-License-Identifier: MIT */
/*
 * altstack.h: reads of the time in a signal handler on an alternate stack
 * of a given size, above a PROT_NONE guard page (an overflow kills the
 * process: the fault's own handler would need the stack too), through the
 * slow path: a read right after start, one due to re-anchor (the line
 * past its end), one whose re-anchor also looks at sysfs (a second on),
 * and a forked child's first.  The stack is painted, and the depth the
 * reads went below the handler's frame is measured.
 *
 * Header-only, for libfastclock's (tests/unit/test_fastclock_sandbox.c,
 * altstack_gettime = fc_gettime) and the accelerator's
 * (tests/progs/altstack.c, clock_gettime) tests.
 */
#ifndef CD_ALTSTACK_H
#define CD_ALTSTACK_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The most stack a read takes below its caller, after start-up: the
 * figure docs/fastclock.3 states ("Stack use"). */
#define FC_READ_STACK_BYTES 1024
/* the handler's own frame and the kernel's alignment, beyond both */
#define ALTSTACK_HANDLER_SLACK 256

/* What the handler reads with (0: answered), and an optional forced
 * re-anchor (fc_resync) before the first sleep. */
static int (*altstack_gettime)(clockid_t, struct timespec *);
static int (*altstack_resync)(void);

enum { ALTSTACK_PAINT = 0xa5 };

static char *altstack_lo, *altstack_hi;
static volatile uintptr_t altstack_sp;   /* the handler's frame, where the reads start */
static volatile int altstack_bad;

static inline void altstack_handler(int sig)
{
	static const clockid_t ids[] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI,
		                         CLOCK_MONOTONIC_RAW };
	(void)sig;
	int saved = errno;
	char here;
	altstack_sp = (uintptr_t)&here;
	__asm__ volatile("" : : "r"(&here) : "memory");
	struct timespec ts;
	for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
		altstack_bad += altstack_gettime(ids[k], &ts) != 0;
	errno = saved;
}

static inline bool altstack_install(size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t span = ((size + (size_t)page - 1) / (size_t)page + 1) * (size_t)page;
	char *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m, (size_t)page, PROT_NONE) != 0)
		return false;
	altstack_lo = m + page;             /* the guard page right below what the stack may use */
	altstack_hi = altstack_lo + size;
	memset(altstack_lo, ALTSTACK_PAINT, (size_t)(altstack_hi - altstack_lo));
	stack_t ss = { .ss_sp = altstack_lo, .ss_size = (size_t)(altstack_hi - altstack_lo), .ss_flags = 0 };
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = altstack_handler;
	sa.sa_flags = SA_ONSTACK;
	return sigaltstack(&ss, NULL) == 0 && sigaction(SIGUSR1, &sa, NULL) == 0;
}

/* The deepest the handler's reads went below its frame, in bytes. */
static inline long altstack_depth(void)
{
	char *p = altstack_lo;
	while (p < altstack_hi && (unsigned char)*p == ALTSTACK_PAINT)
		p++;
	return (long)(altstack_sp - (uintptr_t)p);
}

static inline void altstack_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The reads, in this process: 0 when every call answered, with the
 * deepest in *depth and the kernel's signal frame with the handler's entry
 * (the top of the stack to the handler's frame) in *frame. */
static inline int altstack_reads(long *depth, long *frame)
{
	struct timespec ts;
	*depth = *frame = 0;
	(void)altstack_gettime(CLOCK_MONOTONIC, &ts);
	raise(SIGUSR1);                      /* the fast path, and a REALTIME refresh */
	if (altstack_resync)
		(void)altstack_resync();
	altstack_sleep_ms(300);              /* the line due: the handler re-anchors */
	raise(SIGUSR1);
	altstack_sleep_ms(1100);             /* ...and looks at sysfs */
	raise(SIGUSR1);
	long d = altstack_depth();
	*frame = (long)((uintptr_t)altstack_hi - altstack_sp);
	pid_t p = fork();
	if (p == 0) {
		raise(SIGUSR1);              /* a forked child's first read */
		long c = altstack_depth();
		_exit(altstack_bad ? 255 : (int)(c / 16 > 254 ? 254 : c / 16));
	}
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) == 255)
		return 1;
	long c = (long)WEXITSTATUS(st) * 16;
	*depth = d > c ? d : c;
	return altstack_bad;
}

/* The reads in a child on an alternate stack of size bytes: their depth
 * (>= 0), and in *frame (unless NULL) the kernel's frame there; -1 when the
 * child died (an overflow) or a call failed. */
static inline long altstack_run(size_t size, long *frame)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	pid_t p = fork();
	if (p == 0) {
		close(fd[0]);
		long out[2] = { -1, 0 };
		if (!altstack_install(size) || altstack_reads(&out[0], &out[1]) != 0)
			out[0] = -1;
		_exit(write(fd[1], out, sizeof out) == (ssize_t)sizeof out ? 0 : 1);
	}
	close(fd[1]);
	long out[2] = { -1, 0 };
	if (read(fd[0], out, sizeof out) != (ssize_t)sizeof out)
		out[0] = -1;
	close(fd[0]);
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	if (frame)
		*frame = out[1];
	return out[0];
}

#endif
