/* SPDX-License-Identifier: MIT */
/*
 * test_fastclock_sandbox.c: libfastclock in the places a process puts it.
 *
 *   - Under a seccomp filter that kills the process on any system call
 *     outside systemd's @system-service set (../progs/system_service.h):
 *     installed before the library starts (this program re-executed under
 *     it) and after (a program that sandboxes itself once running), every
 *     path of a read runs (start-up, fast and slow paths, checks, re-anchors
 *     due and forced, the once-a-second look at sysfs, REALTIME's refresh,
 *     BOOTTIME's follow, a forked child's first read, threads) and the
 *     process lives.
 *   - In a signal handler on an alternate stack, through the slow path (a
 *     re-anchor with the look at sysfs, a REALTIME refresh, a forked
 *     child's first read): the stack the read path uses, measured by
 *     painting the stack, within FC_READ_STACK_BYTES (the figure
 *     docs/fastclock.3 states), and no overflow on a stack of the kernel's
 *     AT_MINSIGSTKSZ (the signal frame) plus that figure plus the handler's
 *     own, with a guard page below.  Plain builds only: AddressSanitizer's
 *     frames are larger by design.
 */
#include "fastclock.h"
#include "unit.h"

#include "../progs/altstack.h"
#include "../progs/system_service.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif


static const clockid_t ids[] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI, CLOCK_MONOTONIC_RAW };

/* Every served id and the other calls, n rounds. */
static int read_all(int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++) {
		struct timespec ts;
		for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
			bad += fc_gettime(ids[k], &ts) != 0;
		(void)fc_now_ns();
		(void)fc_now_ns_unordered();
		(void)fc_realtime_ns();
		(void)fc_coarse_ns();
		(void)fc_cycles_to_ns(fc_cycles());
	}
	return bad;
}

static atomic_int stop_threads;

static void *thread_reads(void *arg)
{
	(void)arg;
	long bad = 0;
	while (!atomic_load(&stop_threads))
		bad += read_all(100);
	return (void *)bad;
}

/* Every path of a read, in this process: 0 when every call answered. */
static int paths(void)
{
	int bad = read_all(1000);            /* fast path, checks, REALTIME refreshes */
	for (int i = 0; i < 20; i++) {
		fc_resync();                 /* forced re-anchors */
		bad += read_all(10);
	}
	altstack_sleep_ms(300);                       /* past the line's end: the read re-anchors */
	bad += read_all(10);
	altstack_sleep_ms(1100);                      /* a second on: the re-anchor reads sysfs again */
	bad += read_all(10);
	struct fc_info in;
	bad += fc_info(&in) != 0;
	pthread_t t[3];
	atomic_store(&stop_threads, 0);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, thread_reads, NULL);
	int64_t end = fc_now_ns() + 200000000;
	while (fc_now_ns() < end)
		fc_resync();
	atomic_store(&stop_threads, 1);
	for (int i = 0; i < 3; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad += r != NULL;
	}
	pid_t p = fork();                    /* a forked child's first read */
	if (p == 0)
		_exit(read_all(100) == 0 && fc_info(&in) == 0 ? 0 : 1);
	int st = 0;
	bad += p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	return bad;
}

/* A child under the filter: 0 when it lived and every call answered, else
 * the signal that killed it (SIGSYS: a call outside the set) or 100 + its
 * status. */
static int filtered_child(bool before_start)
{
	pid_t p = fork();
	if (p == 0) {
		int e = system_service_filter();
		if (e != 0)
			_exit(125);
		if (before_start) {
			/* the library's start-up under the filter, forced onto the counter */
			char *argv[] = { "test_fastclock_sandbox", "--paths", NULL };
			char *envp[] = { "FASTCLOCK=force", "ASAN_OPTIONS=detect_leaks=0", NULL };
			execve("/proc/self/exe", argv, envp);
			_exit(127);
		}
		_exit(paths() == 0 ? 0 : 1);
	}
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	if (WIFSIGNALED(st))
		return WTERMSIG(st);
	return WEXITSTATUS(st) == 0 ? 0 : 100 + WEXITSTATUS(st);
}

static void test_system_service_filter(void)
{
	if (SYSTEM_SERVICE_ARCH == 0) {
		printf("  no seccomp filter for this architecture: skipped\n");
		return;
	}
	/* the filter is real: a call outside the set kills */
	pid_t p = fork();
	if (p == 0) {
		if (system_service_filter() != 0)
			_exit(125);
		syscall(SYS_adjtimex, NULL);
		_exit(0);
	}
	int st = 0;
	waitpid(p, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	/* the library started (adjtimex and perf allowed), then the filter */
	(void)read_all(10);
	fc_resync();
	CHECK_INT(filtered_child(false), 0);
	/* the filter first, then the library's start-up */
	CHECK_INT(filtered_child(true), 0);
}

/* ---- stack ---- */

static void test_alternate_stack(void)
{
#ifdef UNDER_ASAN
	printf("  stack: under AddressSanitizer, whose frames are larger by design: skipped\n");
#else
	altstack_gettime = fc_gettime;
	altstack_resync = fc_resync;
	long frame = 0;
	long depth = altstack_run(65536, &frame);
	printf("  stack: the read path used %ld bytes below the handler's frame (at most %d); the kernel's "
	       "signal frame %ld bytes, AT_MINSIGSTKSZ %lu\n", depth, FC_READ_STACK_BYTES, frame,
	       getauxval(AT_MINSIGSTKSZ));
	CHECK(depth > 0);
	CHECK(depth <= FC_READ_STACK_BYTES);
	/* The smallest stack docs/fastclock.3 promises a handler that reads the
	 * time: the larger of the classic MINSIGSTKSZ (2048) and the kernel's
	 * AT_MINSIGSTKSZ (the signal frame at its largest: the larger on
	 * x86-64 since AVX-512), plus the read path, plus the handler's own. */
	size_t base = (size_t)getauxval(AT_MINSIGSTKSZ);
	if (base < 2048)
		base = 2048;
	CHECK(altstack_run(base + FC_READ_STACK_BYTES + ALTSTACK_HANDLER_SLACK, NULL) > 0);
	/* glibc's MINSIGSTKSZ as this program is compiled (_GNU_SOURCE:
	 * sysconf(_SC_SIGSTKSZ), four times that) */
	CHECK(altstack_run((size_t)MINSIGSTKSZ, NULL) > 0);
	/* 4 KiB, where the kernel's frame and the handler's entry (frame)
	 * leave the read path its room, as on x86-64 with AVX-512 */
	if (frame > 0 && frame + FC_READ_STACK_BYTES <= 4096)
		CHECK(altstack_run(4096, NULL) > 0);
	else
		printf("  stack: the signal frame leaves 4 KiB too little room: not tried\n");
#endif
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--paths"))
		_exit(paths() == 0 ? 0 : 1);  /* no exit handlers: LeakSanitizer's would ptrace */
	test_system_service_filter();
	test_alternate_stack();
	return unit_done("test_fastclock_sandbox");
}
