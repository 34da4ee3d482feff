/* SPDX-License-Identifier: MIT */
/*
 * readcost.h: what one read of the counter costs this process, against
 * one read of the kernel's clock and one clock_gettime system call,
 * measured at start (internal to the library).
 *
 * Reading the counter from user space is normally a few ns.  It is not
 * where the kernel makes it trap: an arm64 timer erratum's workaround
 * (Freescale A-008585, HiSilicon 161010101, Cortex-A73 858921, Allwinner
 * A64's unstable timer) clears CNTKCTL_EL1.EL0VCTEN, so every mrs of
 * cntvct_el0 in user space is an exception the kernel emulates
 * (drivers/clocksource/arm_arch_timer.c logs "Trapping CNTVCT access"),
 * and the same workaround takes the counter out of the vDSO, whose
 * clock_gettime becomes the system call.  On x86 a hypervisor may trap
 * rdtsc (TSC exiting) the same way.  A counter read then costs about a
 * system call, and the library's line through it gains nothing: the
 * library serves from the counter only when one read of it is cheaper
 * than the kernel's clock (fc_read_cost_counter_cheaper).
 *
 * The measurement is a function of three reads given as pointers, so that
 * unit tests drive it with clocks of their own: any architecture, any
 * costs, a preempted batch.
 */
#ifndef FC_READCOST_H
#define FC_READCOST_H

#include <stdbool.h>
#include <stdint.h>

/* Reads per batch, and batches: each cost is the cheapest batch's mean (a
 * preemption only makes a batch dearer, so the minimum over a few is the
 * cost on a busy machine too).  Bounded: 3 x (4 + 4 + 4 + 2) reads, of
 * which 12 of the counter, since a trapped read costs microseconds (and
 * under QEMU's TCG up to milliseconds). */
#define FC_READ_COST_BATCH 4
#define FC_READ_COST_TRIES 3

/* A counter read measured below this is cheap, whatever the kernel's
 * clock measured.  The vDSO reads the same counter plus its own work, so
 * a counter read dearer than the kernel's clock is one that traps: an
 * exception and the kernel's emulation (or a hypervisor's exit), far
 * dearer than this.  Below it, an excess is the kernel clock's resolution
 * over a batch of four reads: a clock in steps of 40 ns (a 25 MHz arm64
 * generic timer) or 100 ns (Hyper-V's 10 MHz reference counter) makes a
 * span of four cheap reads 0, 1 or 2 steps, and the least of each span
 * can put the kernel's clock below the counter. */
#define FC_READ_COST_TRAP_MIN_NS 200

struct fc_read_cost_ops {
	void (*counter)(void *ctx);   /* one read of the counter */
	int64_t (*kclock)(void *ctx); /* the kernel's clock as the library reads it, ns (INT64_MIN: failed) */
	void (*syscall)(void *ctx);   /* one clock_gettime system call, past the vDSO */
	void *ctx;
};

struct fc_read_cost {
	bool measured;      /* false: the kernel's clock could not be read */
	double counter_ns;  /* one counter read */
	double kernel_ns;   /* one read of the kernel's clock (the vDSO's entry) */
	double syscall_ns;  /* one clock_gettime system call */
};

/* Measures into *c with ops: every cost in the kernel's clock (the
 * counter's rate is not known yet on x86).  Returns c->measured. */
bool fc_read_cost_measure(const struct fc_read_cost_ops *ops, struct fc_read_cost *c);

/* The live reads: fc_counter_read, fc_kclock_ns(CLOCK_MONOTONIC), and the
 * raw system call (errno left as it was). */
bool fc_read_cost_measure_live(struct fc_read_cost *c);

/* "COUNTER,KERNEL,SYSCALL", three costs in ns (FASTCLOCK_TEST_READ_COST,
 * for tests that make a counter look trapped on any machine): true with
 * *c measured, or false with *c untouched. */
bool fc_read_cost_parse(const char *text, struct fc_read_cost *c);

/* True when a counter read is cheaper than the kernel's clock (or nothing
 * was measured: no measurement decides nothing).  The vDSO reading the
 * same counter costs one counter read plus its own work, so a counter
 * that costs as much as the kernel's whole clock is one whose reads trap.
 * Where the kernel's clock is a system call, a read must also cost less
 * than half of it: an instruction that costs that much is trapped and
 * emulated, and the library's own upkeep (its re-anchors bracket the
 * kernel's clock with such reads) then costs more than the gain (measured
 * under QEMU with Freescale's A-008585 workaround: a trapped read 72 us,
 * the system call 88 us, fc_now_ns on the counter 630 us). */
bool fc_read_cost_counter_cheaper(const struct fc_read_cost *c);

/* True when the kernel's clock costs about a system call (at least 3/4 of
 * one): the vDSO falls back to it, whatever the clocksource's name says. */
bool fc_read_cost_kernel_is_syscall(const struct fc_read_cost *c);

#endif
