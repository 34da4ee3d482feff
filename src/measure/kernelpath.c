/* SPDX-License-Identifier: MIT */
/*
 * kernelpath.c: does a time call reach the kernel?  Answered exactly, not
 * inferred from timing.
 *
 * In a forked child, a seccomp filter makes the time system calls
 * (clock_gettime, clock_gettime64, gettimeofday, time) fail with an errno no
 * clock call ever returns (EHWPOISON).  The child then calls the libc
 * functions: a call the vDSO serves never makes the system call and succeeds;
 * a call that falls back (a clocksource the vDSO cannot read, a clock id this
 * kernel's vDSO does not serve, vdso=0) returns that errno.  Timing cannot
 * tell a slow vDSO read (a trapped RDTSC, the HPET read by the vDSO on
 * kernels before FC_KV_HPET_VDSO_REMOVED) from a system call; this can.  The parent is untouched: the
 * filter lives and dies with the child.
 */
#include "measure/measure.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MARK_ERRNO EHWPOISON

#if defined(__x86_64__)
#define KP_ARCH AUDIT_ARCH_X86_64
#elif defined(__i386__)
#define KP_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define KP_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef __NR_time
#define __NR_time __NR_gettimeofday /* arm64 has no time(2): a harmless repeat */
#endif
#ifndef __NR_clock_gettime64
#define __NR_clock_gettime64 __NR_clock_gettime
#endif

#ifdef KP_ARCH
static int install_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KP_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clock_gettime, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clock_gettime64, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_gettimeofday, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_time, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (MARK_ERRNO & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof code / sizeof code[0]), code };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return -errno;
	return 0;
}
#else
static int install_filter(void)
{
	return -ENOSYS;
}
#endif

/* A failed call, in either form libc may hand it back: -1 and errno, or the
 * kernel's raw -errno.  On x86-64 glibc resolves gettimeofday and time (IFUNC)
 * straight to the vDSO's own functions, which return the raw value of their
 * fallback system call: -EHWPOISON, with errno untouched. */
static bool marked(long rc)
{
	return (rc == -1 && errno == MARK_ERRNO) || rc == -MARK_ERRNO;
}

/* One call through libc; true when it reached the (filtered) kernel. */
static bool call_reached_kernel(const struct cd_clock_spec *spec)
{
	struct timespec ts;
	struct timeval tv;
	errno = 0;
	switch (spec->kind) {
	case CD_CALL_CLOCK_GETTIME:
		return marked(clock_gettime(spec->clockid, &ts));
	case CD_CALL_GETTIMEOFDAY:
		return marked(gettimeofday(&tv, NULL));
	case CD_CALL_TIME:
		return marked((long)time(NULL));
	default:
		return false;
	}
}

static bool probeable(const struct cd_clock_spec *spec)
{
	return spec->kind == CD_CALL_CLOCK_GETTIME || spec->kind == CD_CALL_GETTIMEOFDAY ||
	       spec->kind == CD_CALL_TIME;
}

/* The child: filter, call, report one int a spec (or -errno for all), exit. */
static void child(int fd, const struct cd_clock_spec *const *specs, int n)
{
	int out[CD_KERNEL_PATH_MAX];
	int rc = install_filter();
	for (int i = 0; i < n; i++) {
		out[i] = rc < 0 ? rc : -ENOSYS;
		if (rc < 0 || !probeable(specs[i]))
			continue;
		int reached = 0;
		for (int k = 0; k < CD_KERNEL_PATH_CALLS; k++)
			reached += call_reached_kernel(specs[i]);
		out[i] = reached;
	}
	ssize_t w = write(fd, out, sizeof out[0] * (size_t)n);
	_exit(w == (ssize_t)(sizeof out[0] * (size_t)n) ? 0 : 1);
}

int cd_kernel_path(const struct cd_clock_spec *const *specs, int n, int *reached)
{
	if (n <= 0 || n > CD_KERNEL_PATH_MAX)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		reached[i] = -ENOSYS;
	int p[2];
	if (pipe(p) != 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(p[0]);
		close(p[1]);
		return e;
	}
	if (pid == 0) {
		close(p[0]);
		child(p[1], specs, n);
	}
	close(p[1]);
	/* The child makes a few thousand calls; 5 s is for a machine that is
	 * stopped, not slow. */
	int buf[CD_KERNEL_PATH_MAX];
	size_t want = sizeof buf[0] * (size_t)n, got = 0;
	int rc = 0;
	struct pollfd pfd = { p[0], POLLIN, 0 };
	while (got < want) {
		int pr = poll(&pfd, 1, 5000);
		if (pr <= 0) {
			rc = pr == 0 ? -ETIMEDOUT : -errno;
			if (rc == -EINTR)
				continue;
			break;
		}
		ssize_t r = read(p[0], (char *)buf + got, want - got);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			rc = -EIO;
			break;
		}
		got += (size_t)r;
	}
	close(p[0]);
	if (rc < 0)
		kill(pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc < 0)
		return rc;
	for (int i = 0; i < n; i++)
		reached[i] = buf[i];
	return 0;
}
