/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h: may libfastclock make a system call that a seccomp filter may
 * answer by killing the process?
 *
 * The library lives in sandboxed services: systemd's
 * SystemCallFilter=@system-service (Debian's redis-server.service, for
 * one) kills a process on any call outside that set (systemd,
 * src/shared/seccomp-util.c, SYSCALL_FILTER_SET_SYSTEM_SERVICE).  Every
 * call on a path of a read is inside it:
 *
 *   clock_gettime           where the vDSO lacks the entry or the
 *                           clocksource (the vDSO falls back itself), and
 *                           12 times at start-up, to measure what one costs
 *                           (readcost.h)
 *   openat, read, close     sysfs clocksource files, once a second in a
 *                           re-anchor (start-up: also the verdict file and
 *                           /proc/sys/kernel/random/boot_id)
 *   prctl                   PR_GET_SECCOMP (here), PR_GET_TSC at start-up
 *   newfstatat or statx, geteuid, uname, mmap, madvise
 *                           start-up only
 *   getpid                  tests' FASTCLOCK_TEST_WRITER_DELAY_US only
 *   write                   the accelerator's FASTCLOCK_INFO line only
 *
 * and two outside it, made only where fc_unfiltered() says no filter is
 * installed, right before each: adjtimex (@clock; glibc's is the
 * clock_adjtime system call: the kernel's NTP rate, at a re-anchor) and
 * perf_event_open with its mmap, munmap and close (@debug: the kernel's TSC
 * frequency, at start-up).  (`strace -f` of test_fastclock_sandbox
 * --paths, unfiltered, shows these and the dynamic loader's and the test's
 * own: access, arch_prctl, brk, clone, clone3, execve, futex, getrandom,
 * mprotect, munmap, pread64, prlimit64, rseq, rt_sigaction,
 * rt_sigprocmask, set_robust_list, set_tid_address, clock_nanosleep,
 * wait4.)  Without them the
 * library measures instead (docs/fastclock.3, "System calls and
 * sandboxes").  tests/unit/test_fastclock_sandbox.c runs every path under
 * a filter that kills on any call outside @system-service.
 */
#ifndef FC_SANDBOX_H
#define FC_SANDBOX_H

#include <stdbool.h>

/* True when no seccomp filter is installed on this thread: prctl
 * PR_GET_SECCOMP (in @system-service) says 0.  A filter, once seen, is
 * there for good (none can be removed, and forked children inherit it):
 * from then on false without asking.  errno is left alone. */
bool fc_unfiltered(void);

#endif
