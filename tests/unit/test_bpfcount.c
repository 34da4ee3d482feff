/* SPDX-License-Identifier: MIT */
/*
 * test_bpfcount.c: the counting program is well formed (its jumps land
 * inside it, it ends by returning 1, it adds at the call kind's slot), and,
 * where BPF can be loaded here (root, tracefs), it counts this process's own
 * forced clock_gettime calls exactly, whichever CPU they run on.
 */
#include "measure/bpfcount.h"
#include "unit.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void test_program_shape(void)
{
	struct bpf_insn p[64];
	for (int s = 0; s < CD_TSYS_N; s++) {
		int n = cd_bpfcount_program((enum cd_tsys)s, 7, p, sizeof p);
		CHECK(n > 10 && n < 64);
		CHECK_INT(p[n - 1].code, BPF_JMP | BPF_EXIT);
		CHECK_INT(p[n - 2].code, BPF_ALU64 | BPF_MOV | BPF_K);
		CHECK_INT(p[n - 2].imm, 1);                       /* the perf event goes on */
		int adds = 0, maps = 0;
		for (int i = 0; i < n; i++) {
			if ((p[i].code & 0x07) == BPF_JMP && p[i].code != (BPF_JMP | BPF_CALL) &&
			    p[i].code != (BPF_JMP | BPF_EXIT))
				CHECK(i + 1 + p[i].off > i && i + 1 + p[i].off < n);
			if (p[i].code == (BPF_STX | BPF_ATOMIC | BPF_DW)) {
				adds++;
				CHECK_INT(p[i].off, 8 * s);
				CHECK_INT(p[i].imm, BPF_ADD);
			}
			if (p[i].code == (BPF_LD | BPF_DW | BPF_IMM)) {
				maps++;
				CHECK_INT(p[i].src_reg, BPF_PSEUDO_MAP_FD);
				CHECK_INT(p[i].imm, 7);
			}
		}
		CHECK_INT(adds, 1);
		CHECK_INT(maps, 3);
	}
	CHECK_INT(cd_bpfcount_program(CD_TSYS_TIME, 7, p, 8), -ENOSPC);
}

struct seen {
	int pid;
	uint64_t calls;
};

static void note(void *arg, int pid, const uint64_t calls[CD_TSYS_N])
{
	struct seen *s = arg;
	if (pid == s->pid)
		s->calls += calls[CD_TSYS_CLOCK_GETTIME];
}

static long tracepoint_id(void)
{
	const char *dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	for (int i = 0; i < 2; i++) {
		char path[128];
		snprintf(path, sizeof path, "%s/events/syscalls/sys_enter_clock_gettime/id", dirs[i]);
		FILE *f = fopen(path, "r");
		long id;
		if (f && fscanf(f, "%ld", &id) == 1) {
			fclose(f);
			return id;
		}
		if (f)
			fclose(f);
	}
	return -1;
}

static void test_counts_exactly(void)
{
	long id = tracepoint_id();
	if (geteuid() != 0 || id < 0) {
		printf("test_bpfcount: not root or no tracefs: the program is not loaded here\n");
		return;
	}
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof a;
	a.config = (uint64_t)id;
	int fd = (int)syscall(__NR_perf_event_open, &a, -1, 0, -1, 0);
	CHECK(fd >= 0);
	int fds[CD_TSYS_N];
	for (int s = 0; s < CD_TSYS_N; s++)
		fds[s] = s == CD_TSYS_CLOCK_GETTIME ? fd : -1;
	char why[512] = "";
	struct cd_bpfcount *b = cd_bpfcount_open(fds, why, sizeof why);
	if (!b)
		fprintf(stderr, "cd_bpfcount_open: %s\n", why);
	CHECK(b != NULL);
	if (!b) {
		close(fd);
		return;
	}
	struct seen s = { .pid = getpid() };
	cd_bpfcount_read(b, note, &s);                    /* whatever came before */
	s.calls = 0;
	struct timespec ts;
	for (int i = 0; i < 12345; i++)
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	CHECK(cd_bpfcount_read(b, note, &s) >= 1);
	CHECK_INT(s.calls, 12345);
	s.calls = 0;
	cd_bpfcount_read(b, note, &s);                    /* nothing new */
	CHECK_INT(s.calls, 0);
	cd_bpfcount_close(b);
	close(fd);
}

int main(void)
{
	test_program_shape();
	test_counts_exactly();
	return unit_done("test_bpfcount");
}
