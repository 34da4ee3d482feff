/* SPDX-License-Identifier: MIT */
/*
 * bpfcount.c: exact time system calls per process (bpfcount.h).
 *
 * The program, for call kind K (value: CD_TSYS_N counters of 8 bytes):
 *
 *   key = bpf_get_current_pid_tgid() >> 32          the process (tgid)
 *   v = map_lookup(key)
 *   if (!v) { map_update(key, zeros, BPF_NOEXIST); v = map_lookup(key); }
 *   if (v) atomic v[K] += 1
 *   return 1                                       the perf event goes on
 *
 * A syscall tracepoint runs the programs attached to it once a hit
 * (perf_syscall_enter, kernel/trace/trace_syscalls.c), before the perf
 * events; a program returning 0 would drop the hit from them, so it returns
 * 1 and top's exact totals and samples are as they were.
 */
#include "measure/bpfcount.h"

#include "clockfacts.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_INSNS 64

struct counted {
	uint32_t pid;
	uint64_t v[CD_TSYS_N];
};

struct cd_bpfcount {
	int map_fd;
	int prog_fd[CD_TSYS_N];
	struct counted *last;       /* the counts read last, sorted by pid */
	size_t n_last;
};

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof *attr);
}

/* ---- the program ---- */

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i;
	memset(&i, 0, sizeof i);
	i.code = code;
	i.dst_reg = dst & 0xf;
	i.src_reg = src & 0xf;
	i.off = off;
	i.imm = imm;
	return i;
}

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R3 BPF_REG_3
#define R4 BPF_REG_4
#define FP BPF_REG_10
#define VALUE_SIZE (8 * CD_TSYS_N)
#define KEY_OFF (-4)
#define ZEROS_OFF (-8 - VALUE_SIZE)

static int call(struct bpf_insn *p, int n, int fn)
{
	p[n] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, fn);
	return n + 1;
}

/* r1 = the map (a 16-byte load whose source register marks the fd). */
static int load_map(struct bpf_insn *p, int n, int map_fd)
{
	p[n] = insn(BPF_LD | BPF_DW | BPF_IMM, R1, BPF_PSEUDO_MAP_FD, 0, map_fd);
	p[n + 1] = insn(0, 0, 0, 0, 0);
	return n + 2;
}

/* r2 = &key */
static int key_ptr(struct bpf_insn *p, int n)
{
	p[n] = insn(BPF_ALU64 | BPF_MOV | BPF_X, R2, FP, 0, 0);
	p[n + 1] = insn(BPF_ALU64 | BPF_ADD | BPF_K, R2, 0, 0, KEY_OFF);
	return n + 2;
}

int cd_bpfcount_program(enum cd_tsys s, int map_fd, void *out, size_t cap)
{
	struct bpf_insn p[MAX_INSNS];
	int n = 0;
	n = call(p, n, BPF_FUNC_get_current_pid_tgid);
	p[n++] = insn(BPF_ALU64 | BPF_RSH | BPF_K, R0, 0, 0, 32);
	p[n++] = insn(BPF_STX | BPF_MEM | BPF_W, FP, R0, KEY_OFF, 0);
	n = load_map(p, n, map_fd);
	n = key_ptr(p, n);
	n = call(p, n, BPF_FUNC_map_lookup_elem);
	int found_jump = n++;                       /* if r0 != 0 goto add */
	for (int i = 0; i < CD_TSYS_N; i++)
		p[n++] = insn(BPF_ST | BPF_MEM | BPF_DW, FP, 0, (int16_t)(ZEROS_OFF + 8 * i), 0);
	n = load_map(p, n, map_fd);
	n = key_ptr(p, n);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, R3, FP, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, R3, 0, 0, ZEROS_OFF);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, R4, 0, 0, BPF_NOEXIST);
	n = call(p, n, BPF_FUNC_map_update_elem);
	n = load_map(p, n, map_fd);
	n = key_ptr(p, n);
	n = call(p, n, BPF_FUNC_map_lookup_elem);
	int missing_jump = n++;                     /* if r0 == 0 goto out (the map is full) */
	int add = n;
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, R1, 0, 0, 1);
	p[n++] = insn(BPF_STX | BPF_ATOMIC | BPF_DW, R0, R1, (int16_t)(8 * (int)s), BPF_ADD);
	int out_label = n;
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 1);
	p[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	p[found_jump] = insn(BPF_JMP | BPF_JNE | BPF_K, R0, 0, (int16_t)(add - found_jump - 1), 0);
	p[missing_jump] = insn(BPF_JMP | BPF_JEQ | BPF_K, R0, 0, (int16_t)(out_label - missing_jump - 1), 0);
	if ((size_t)n * sizeof p[0] > cap)
		return -ENOSPC;
	memcpy(out, p, (size_t)n * sizeof p[0]);
	return n;
}

/* ---- loading ---- */

static int create_map(void)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = sizeof(uint32_t);
	a.value_size = VALUE_SIZE;
	a.max_entries = CD_BPF_MAX_PROCS;
	return (int)sys_bpf(BPF_MAP_CREATE, &a);
}

static int load_program(enum cd_tsys s, int map_fd, char *log, size_t loglen)
{
	struct bpf_insn p[MAX_INSNS];
	int n = cd_bpfcount_program(s, map_fd, p, sizeof p);
	if (n < 0)
		return n;
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insn_cnt = (uint32_t)n;
	a.insns = (uint64_t)(uintptr_t)p;
	/* No helper it calls is GPL-only; the kernel wants a string. */
	a.license = (uint64_t)(uintptr_t)"";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = (uint32_t)loglen;
	a.log_level = log ? 1 : 0;
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

void cd_bpfcount_close(struct cd_bpfcount *b)
{
	if (!b)
		return;
	for (int s = 0; s < CD_TSYS_N; s++)
		if (b->prog_fd[s] >= 0)
			close(b->prog_fd[s]);
	if (b->map_fd >= 0)
		close(b->map_fd);
	free(b->last);
	free(b);
}

struct cd_bpfcount *cd_bpfcount_open(const int perf_fd[CD_TSYS_N], char *why, size_t whylen)
{
	struct cd_bpfcount *b = calloc(1, sizeof *b);
	if (!b) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	for (int s = 0; s < CD_TSYS_N; s++)
		b->prog_fd[s] = -1;
	b->map_fd = create_map();
	if (b->map_fd < 0) {
		int err = errno;
		snprintf(why, whylen, "cannot create a BPF map (%s)%s", strerror(err),
		         err == EPERM ? ": loading BPF needs root, or CAP_BPF and CAP_PERFMON" : "");
		b->map_fd = -1;
		cd_bpfcount_close(b);
		return NULL;
	}
	for (int s = 0; s < CD_TSYS_N; s++) {
		if (perf_fd[s] < 0)
			continue;
		char log[4096] = "";
		b->prog_fd[s] = load_program((enum cd_tsys)s, b->map_fd, NULL, 0);
		if (b->prog_fd[s] < 0) {
			int err = errno;
			load_program((enum cd_tsys)s, b->map_fd, log, sizeof log);   /* for the verifier's word */
			log[strcspn(log, "\n")] = '\0';
			snprintf(why, whylen, "the kernel refused the counting program (%s)%s%s", strerror(err),
			         log[0] ? ": " : "", log);
			cd_bpfcount_close(b);
			return NULL;
		}
		if (ioctl(perf_fd[s], PERF_EVENT_IOC_SET_BPF, b->prog_fd[s]) != 0) {
			int err = errno;
			snprintf(why, whylen, "cannot attach a BPF program to the %s tracepoint (%s)%s",
			         cd_tsys_name((enum cd_tsys)s), strerror(err),
			         err == EINVAL ? ": a kernel before " FC_KV_STR(FC_KV_BPF_SYSCALL_TRACEPOINTS) " runs none on syscall tracepoints" : "");
			cd_bpfcount_close(b);
			return NULL;
		}
	}
	return b;
}

/* ---- reading ---- */

static int by_pid(const void *a, const void *b)
{
	uint32_t x = ((const struct counted *)a)->pid, y = ((const struct counted *)b)->pid;
	return x < y ? -1 : x > y;
}

static bool process_gone(uint32_t pid)
{
	char path[32];
	snprintf(path, sizeof path, "/proc/%u", pid);
	return access(path, F_OK) != 0 && errno == ENOENT;
}

int cd_bpfcount_read(struct cd_bpfcount *b,
                     void (*fn)(void *arg, int pid, const uint64_t calls[CD_TSYS_N]), void *arg)
{
	size_t cap = b->n_last + 64, n = 0;
	struct counted *now = malloc(cap * sizeof *now);
	if (!now)
		return -ENOMEM;
	union bpf_attr a;
	uint32_t key = 0, next;
	bool first = true;
	for (;;) {
		memset(&a, 0, sizeof a);
		a.map_fd = (uint32_t)b->map_fd;
		a.key = first ? 0 : (uint64_t)(uintptr_t)&key;
		a.next_key = (uint64_t)(uintptr_t)&next;
		if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &a) != 0)
			break;              /* ENOENT: the end */
		first = false;
		key = next;
		if (n == cap) {
			struct counted *m = realloc(now, 2 * cap * sizeof *now);
			if (!m)
				break;
			now = m;
			cap *= 2;
		}
		memset(&a, 0, sizeof a);
		a.map_fd = (uint32_t)b->map_fd;
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)now[n].v;
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) != 0)
			continue;           /* deleted meanwhile */
		now[n++].pid = key;
	}
	qsort(now, n, sizeof *now, by_pid);
	int reported = 0;
	size_t j = 0, kept = 0;
	for (size_t i = 0; i < n; i++) {
		while (j < b->n_last && b->last[j].pid < now[i].pid)
			j++;
		const struct counted *was = j < b->n_last && b->last[j].pid == now[i].pid ? &b->last[j] : NULL;
		uint64_t d[CD_TSYS_N];
		bool any = false;
		for (int s = 0; s < CD_TSYS_N; s++) {
			d[s] = now[i].v[s] - (was ? was->v[s] : 0);
			any |= d[s] != 0;
		}
		if (any) {
			fn(arg, (int)now[i].pid, d);
			reported++;
		} else if (process_gone(now[i].pid)) {
			/* Its last calls were reported already: make room, and
			 * forget it (a new process of that pid starts from 0). */
			memset(&a, 0, sizeof a);
			a.map_fd = (uint32_t)b->map_fd;
			a.key = (uint64_t)(uintptr_t)&now[i].pid;
			sys_bpf(BPF_MAP_DELETE_ELEM, &a);
			continue;
		}
		now[kept++] = now[i];
	}
	free(b->last);
	b->last = now;
	b->n_last = kept;
	return reported;
}
