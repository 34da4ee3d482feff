/* SPDX-License-Identifier: MIT */
/*
 * bpfcount.h: exact time system calls per process, counted in the kernel.
 *
 * top's per-process figures are otherwise a sample: beside a process making
 * millions of calls a second the sample period is in the hundreds, and a
 * process making a few thousand gets a few dozen samples, its estimate off
 * by 10-20%.  Here a BPF program of a few instructions, hand-assembled (no
 * compiler or BPF toolchain at run time), runs on each hit of the syscall
 * tracepoints top already traces and adds one to a hash map keyed by the
 * process id: every process's count is exact.  It needs what loading BPF
 * needs (root, or CAP_BPF with CAP_PERFMON; kernel.unprivileged_bpf_disabled
 * does not matter to root) and Linux 4.14 (BPF on syscall tracepoints);
 * where it cannot load, top says why and samples as before.
 */
#ifndef CD_BPFCOUNT_H
#define CD_BPFCOUNT_H

#include "measure/trace.h"

#include <stddef.h>
#include <stdint.h>

#define CD_BPF_MAX_PROCS 8192   /* processes counted at once; more are sampled only */

struct cd_bpfcount;

/* The program's instructions for the call kind s, the map's fd put in
 * place; returns how many were written into insn (room for 64), for the
 * unit test to check without loading them. */
int cd_bpfcount_program(enum cd_tsys s, int map_fd, void *insn, size_t cap);

/* Create the map, load one program per traced call kind and attach each to
 * perf_fd[s] (an open tracepoint event of that kind; -1: not traced): the
 * program runs on every hit of the tracepoint, whichever CPU, and lets the
 * event go on as before.  NULL with why said when it cannot. */
struct cd_bpfcount *cd_bpfcount_open(const int perf_fd[CD_TSYS_N], char *why, size_t whylen);

/* Each process's calls since the last read (the first read: since open),
 * per call kind: fn once a process that made any.  Processes gone are
 * dropped from the map.  Returns the number of processes, -errno. */
int cd_bpfcount_read(struct cd_bpfcount *b,
                     void (*fn)(void *arg, int pid, const uint64_t calls[CD_TSYS_N]), void *arg);

void cd_bpfcount_close(struct cd_bpfcount *b);

#endif
