/* SPDX-License-Identifier: MIT */
/*
 * timer.h: the timer of single calls, and the CPU counter's ways of being
 * read as bench's "raw counter" ways.
 *
 * The architecture is found once, in lib/counter.h (shared with
 * libfastclock): its fc_counter_read() is the ordered read (lfence;rdtsc on
 * x86, isb;cntvct_el0;isb on arm64) that times other code.  The bench also
 * measures what the other ways of reading the same counter cost; those
 * variants are the one #if here, keyed on lib's FC_COUNTER_KIND, and an
 * architecture without a counter gets stubs and CD_COUNTER_N 0, so callers
 * never need an #ifdef:
 *
 *   x86:    rdtsc, lfence;rdtsc, rdtscp (waits for earlier instructions)
 *   arm64:  cntvct_el0, isb;cntvct_el0
 *
 * The counter's frequency is not taken from the CPU model or CPUID (wrong on
 * many machines: a VM's CPU model names the host's nominal speed, and
 * CPUID 0x15 may lack the crystal): cd_timer_init measures it against
 * CLOCK_MONOTONIC_RAW with lib/tscfreq.h.
 */
#ifndef CD_TIMER_H
#define CD_TIMER_H

#include "counter.h" /* lib/counter.h */
#include "measure/measure.h"

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if FC_COUNTER_KIND == FC_COUNTER_X86_TSC

#define CD_COUNTER_N 3
#define CD_COUNTER_ORDERED_NAME "lfence;rdtsc"
#define CD_COUNTER_SPECS \
	{ "rdtsc", CD_CALL_COUNTER, 0, true }, \
	{ "lfence;rdtsc", CD_CALL_COUNTER, 1, true }, \
	{ "rdtscp", CD_CALL_COUNTER, 2, true },

static inline uint64_t cd_counter_read2(void)
{
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
	(void)aux;
	return ((uint64_t)hi << 32) | lo;
}

#elif FC_COUNTER_KIND == FC_COUNTER_ARM64_CNTVCT

#define CD_COUNTER_N 2
#define CD_COUNTER_ORDERED_NAME "isb;cntvct_el0"
#define CD_COUNTER_SPECS \
	{ "cntvct_el0", CD_CALL_COUNTER, 0, true }, \
	{ "isb;cntvct_el0", CD_CALL_COUNTER, 1, true },

static inline uint64_t cd_counter_read2(void)
{
	return fc_counter_read();
}

#else

#define CD_COUNTER_N 0
#define CD_COUNTER_ORDERED_NAME "none"
#define CD_COUNTER_SPECS

static inline uint64_t cd_counter_read2(void) { return 0; }

#endif

/* Variant 0 is lib's bare read (rdtsc, cntvct_el0), variant 1 always its
 * ordered one. */
static inline uint64_t cd_counter_read0(void)
{
	return fc_counter_read_unordered();
}

static inline uint64_t cd_counter_read1(void)
{
	return fc_counter_read();
}

/* The timer of single calls: the ordered counter read when its frequency
 * could be measured and held steady, else clock_gettime(CLOCK_MONOTONIC_RAW)
 * (always right, but a system call on hpet or acpi_pm). */
struct cd_timer {
	bool counter;           /* ticks are counter ticks; else nanoseconds */
	const char *name;       /* "lfence;rdtsc", "isb;cntvct_el0" or "CLOCK_MONOTONIC_RAW" */
	double hz;              /* counter frequency measured against MONOTONIC_RAW; 0 unknown */
	double hz_err_ppm;      /* its error bar */
	double hz_spread;       /* relative difference between the two halves of the calibration */
	double ns_per_tick;     /* 1e9 / hz for the counter, 1 for the clock */
	double overhead_ticks;  /* median of two back-to-back timer reads: subtracted from every sample */
	double overhead_ns;
	double step_ns;         /* the smallest nonzero difference of two reads: its granularity */
	const char *why_not;    /* why the counter is not the timer; NULL when it is */
};

/* Measure the counter's frequency (two intervals of about 20 ms) and the
 * timer's own overhead. */
void cd_timer_init(struct cd_timer *t);

/* A timer reading in ticks (see struct cd_timer). */
static inline uint64_t cd_timer_now(const struct cd_timer *t)
{
	if (t->counter)
		return fc_counter_read();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Median cost of one back-to-back pair of timer reads, in ticks: measured
 * again on each clocksource, since the clock fallback's cost depends on it. */
double cd_timer_overhead(const struct cd_timer *t);

#endif
