/* SPDX-License-Identifier: MIT */
/*
 * counter.h: reading the CPU's free-running counter, one architecture at a
 * time, and nothing else.
 *
 * On x86 the counter is the TSC, read with "lfence; rdtsc": rdtsc alone may
 * execute before earlier loads complete, so a value could predate the load
 * that told us it was our turn (the kernel's rdtsc_ordered() does the same).
 * On arm64 it is the generic timer's virtual count, cntvct_el0, with an isb
 * on both sides for the same reason: the Arm ARM lets reads of the counter
 * occur speculatively and out of order relative to other instructions,
 * and an isb puts them back in program order: the one before, after the
 * instructions before it; the one after, before the instructions after it
 * (the latch's acquire fence and check) (the kernel's __arch_counter_get_cntvct orders the read
 * against later accesses too).  mrs is no memory access: dmb does not
 * order it, only isb (or a dependency) does.  Its frequency is the
 * register cntfrq_el0, exact by definition.  Elsewhere there is no counter:
 * FC_COUNTER_KIND is FC_COUNTER_NONE and a read returns 0, so that callers
 * compile everywhere and ask fc_counter_probe() before reading.
 *
 * The reads are static inline: a function call would add its own cost and
 * jitter to the cross-CPU test, which measures tens of cycles.
 */
#ifndef FC_COUNTER_H
#define FC_COUNTER_H

#include <stdbool.h>
#include <stdint.h>

/* The kinds of counter: macros rather than an enum, so that `#if
 * FC_COUNTER_KIND == FC_COUNTER_X86_TSC` works in the preprocessor. */
#define FC_COUNTER_NONE 0
#define FC_COUNTER_X86_TSC 1
#define FC_COUNTER_ARM64_CNTVCT 2

#if defined(__x86_64__) || defined(__i386__)
#define FC_COUNTER_KIND FC_COUNTER_X86_TSC

static inline uint64_t fc_counter_read(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* rdtsc alone: the CPU may take it some cycles before or after the code
 * around it; for callers who only need intervals on one thread. */
static inline uint64_t fc_counter_read_unordered(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* The TSC has no architectural frequency register. */
static inline uint64_t fc_counter_freq_register(void)
{
	return 0;
}

static inline void fc_cpu_relax(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}

#elif defined(__aarch64__)
#define FC_COUNTER_KIND FC_COUNTER_ARM64_CNTVCT

static inline uint64_t fc_counter_read(void)
{
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) : : "memory");
	return v;
}

static inline uint64_t fc_counter_read_unordered(void)
{
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

static inline uint64_t fc_counter_freq_register(void)
{
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(v));
	return v & 0xffffffffu;  /* the upper half is RES0 */
}

static inline void fc_cpu_relax(void)
{
	__asm__ __volatile__("yield" ::: "memory");
}

#else
#define FC_COUNTER_KIND FC_COUNTER_NONE

static inline uint64_t fc_counter_read(void)
{
	return 0;
}

static inline uint64_t fc_counter_read_unordered(void)
{
	return 0;
}

static inline uint64_t fc_counter_freq_register(void)
{
	return 0;
}

static inline void fc_cpu_relax(void)
{
}
#endif

struct fc_counter_info {
	int kind;                   /* FC_COUNTER_KIND */
	const char *name;           /* "TSC", "cntvct_el0", "none" */
	int usable;                 /* 0, or -errno: why this process cannot read it */
	uint64_t freq_register_hz;  /* cntfrq_el0; 0 on x86 */
};

/* Whether this process can read the counter at all: the CPU has one (CPUID
 * 1:EDX[4] on x86), and the process was not told to fault on it
 * (prctl(PR_SET_TSC, PR_TSC_SIGSEGV)).  usable is -ENODEV without a counter,
 * -EPERM when reading it would fault, -ENOTSUP on another architecture. */
void fc_counter_probe(struct fc_counter_info *info);

/* Stable names for the kinds: "x86-tsc", "arm64-cntvct", "none". */
const char *fc_counter_kind_name(int kind);

#endif
