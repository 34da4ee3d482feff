/* SPDX-License-Identifier: MIT */
/*
 * tscfreq.h: the counter's frequency, from every source there is.
 *
 * Measured: the counter against a kernel clock (CLOCK_MONOTONIC_RAW) over an
 * interval, with an error bar.  A sample reads clock, counter, clock; the
 * counter was read somewhere inside that bracket, so the tightest of many
 * brackets at each end of the interval bounds the interval's error.
 *
 * Declared: CPUID 0x15 (crystal ratio, computed exactly in 64 bits: a
 * 32-bit product overflows, and dividing EBX by EAX first truncates the
 * ratio, as DPDK's rte_get_tsc_hz once did), CPUID 0x16 (base MHz, an
 * integer: coarse), and the perf_event mmap page's time_mult/time_shift (the
 * kernel's own cycles-to-ns conversion).  Never the CPU model name.
 *
 * Nothing here prints or exits: errors are -errno.
 */
#ifndef FC_TSCFREQ_H
#define FC_TSCFREQ_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* ---- measured ---- */

struct fc_freq_sample {
	int64_t ref_ns;     /* the clock at the counter read: the bracket's middle */
	int64_t width_ns;   /* the bracket: the read lies within ref_ns +- width_ns / 2 */
	uint64_t count;     /* the counter */
};

/* The tightest of tries brackets "clock, counter, clock".  Returns 0, or
 * -errno when the clock cannot be read (-EINVAL for tries < 1). */
int fc_freq_sample(clockid_t clock, int tries, struct fc_freq_sample *out);

struct fc_freq_estimate {
	double hz;
	double err_ppm;     /* the error bar: bracket widths over the interval */
	double interval_s;
};

/* The frequency between two samples.  The interval is known to within
 * (a.width + b.width) / 2, plus one nanosecond of clock resolution and one
 * count of the counter.  Returns 0, or -EINVAL when the clock or the
 * counter did not advance. */
int fc_freq_between(const struct fc_freq_sample *a, const struct fc_freq_sample *b,
                    struct fc_freq_estimate *out);

/* ---- declared ---- */

/* CPUID 0x15: hz = crystal_hz * ebx / eax, exactly (integer part in 64
 * bits, then the remainder).  Returns 0, -ENODATA when the leaf gives no
 * ratio (eax or ebx zero), -ENOENT when the ratio is there but the crystal
 * (ecx) is zero: pass a crystal from fc_freq_known_crystal() instead. */
int fc_freq_cpuid15(uint32_t eax, uint32_t ebx, uint32_t crystal_hz, double *hz);

/* The crystal of Intel CPUs whose leaf 0x15 leaves ECX zero, for the few
 * models where a source can be cited; 0 for every other CPU ("crystal
 * unknown").  leaf1_eax is CPUID 1:EAX (family and model); *cite names the
 * source.  Only for vendor "GenuineIntel". */
uint32_t fc_freq_known_crystal(const char *vendor, uint32_t leaf1_eax, const char **cite);

/* 10^9 * 2^shift / mult: the frequency behind a "ns = cycles * mult >>
 * shift" conversion; 0 when mult is 0 or shift out of range. */
double fc_freq_from_mult_shift(uint32_t mult, unsigned shift);

struct fc_perf_time {
	bool cap_user_time;     /* the kernel fills time_mult/time_shift */
	uint32_t time_mult;
	uint16_t time_shift;
	double hz;              /* fc_freq_from_mult_shift of the two */
};

/* Opens a software event on this thread (PERF_COUNT_SW_DUMMY, user space
 * only, so that perf_event_paranoid 2 allows it), maps its first page and
 * reads time_mult/time_shift under the page's sequence lock.  Returns 0, or
 * -errno: -EACCES/-EPERM when perf_event_paranoid (or a seccomp filter)
 * forbids it, -ENOSYS/-ENOENT without perf events, -ENODATA when the kernel
 * does not offer the conversion (cap_user_time 0: sched_clock is not the
 * counter, e.g. kvm-clock). */
int fc_freq_perf(struct fc_perf_time *out);

/* (hz - ref_hz) / ref_hz in ppm. */
double fc_freq_ppm(double hz, double ref_hz);

#endif
