/* SPDX-License-Identifier: MIT */
/*
 * seccomped: runs a program with the system calls a container's seccomp
 * profile commonly refuses answered by EPERM, as Docker's default profile
 * answers them: perf_event_open (the library's last source of a first
 * frequency), adjtimex and clock_adjtime (its NTP rate and TAI offset).
 *
 *   seccomped PROGRAM [ARGS...]
 *   seccomped -k PROGRAM [ARGS...]
 *
 * With -k, every system call outside systemd's @system-service set kills
 * the process instead (SECCOMP_RET_KILL_PROCESS), as
 * SystemCallFilter=@system-service does in a unit (system_service.h).
 *
 * The filter is inherited across exec (with no_new_privs set), so the
 * program and an LD_PRELOADed library start under it.  Exit 125 when the
 * filter cannot be installed, else the program's own status.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include "system_service.h"

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#define ARCH 0
#endif

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "-k")) {
		int e = system_service_filter();
		if (e != 0) {
			fprintf(stderr, "seccomped: installing the filter: %s\n", strerror(-e));
			return 125;
		}
		execvp(argv[2], argv + 2);
		perror("seccomped: exec");
		return 127;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: seccomped [-k] PROGRAM [ARGS...]\n");
		return 125;
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		/* another ABI (x32, i386 through int 0x80): allowed as it is */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		DENY(SYS_perf_event_open),
		DENY(SYS_adjtimex),
		DENY(SYS_clock_adjtime),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = (unsigned short)(sizeof f / sizeof f[0]), .filter = f };
	if (ARCH == 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("seccomped: installing the filter");
		return 125;
	}
	execvp(argv[1], argv + 1);
	perror("seccomped: exec");
	return 127;
}
