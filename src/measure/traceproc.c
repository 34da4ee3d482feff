/* SPDX-License-Identifier: MIT */
/*
 * traceproc.c: the processes `clockdoctor top` names: a process's name
 * from /proc, and the running programs whose system calls the tracepoints
 * do not see (trace.h, tracer_impl.h).
 */
#include "measure/tracer_impl.h"
#include "probe/elf.h"
#include "util/fsread.h"
#include "util/printable.h"

#include <dirent.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>

void cd_trace_read_comm(int pid, char *comm, size_t len)
{
	char path[48], buf[64];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	/* A comm is at most 15 bytes (TASK_COMM_LEN); cut anything longer.
	 * Any process may name itself with terminal escapes (prctl). */
	int n = cd_read_small("/", path, buf, sizeof buf);
	if (n > 0)
		cd_printable_copy(comm, len, buf, n < 15 ? (size_t)n : 15);
	else
		snprintf(comm, len, "?");      /* it exited before we looked */
}

bool cd_trace_sees_program(const struct cd_elf_info *e)
{
#if defined(__x86_64__) || defined(__aarch64__)
	if ((e->kind == CD_ELF_DYNAMIC || e->kind == CD_ELF_STATIC) && e->bits == 32)
		return false;
#else
	(void)e;
#endif
	return true;
}

static bool unseen(int pid, struct cd_unseen *u)
{
	char exe[48];
	struct cd_elf_info e;
	snprintf(exe, sizeof exe, "/proc/%d/exe", pid);
	if (cd_elf_classify_file(exe, &e) < 0 || cd_trace_sees_program(&e))
		return false;
	u->pid = pid;
	u->x32 = e.machine == EM_X86_64;
	cd_trace_read_comm(pid, u->comm, sizeof u->comm);
	for (char *c = u->comm; *c; c++)   /* a comm is whatever the program set */
		if (*c < 0x20 || *c >= 0x7f)
			*c = '?';
	return true;
}

int cd_trace_unseen_programs(int pid, struct cd_unseen *out, int max)
{
	struct cd_unseen u;
	if (pid > 0) {
		if (!unseen(pid, &u))
			return 0;
		if (max > 0)
			out[0] = u;
		return 1;
	}
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		int p = atoi(de->d_name);
		if (p > 0 && unseen(p, &u)) {
			if (n < max)
				out[n] = u;
			n++;
		}
	}
	closedir(d);
	return n;
}

