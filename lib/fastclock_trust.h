/* SPDX-License-Identifier: MIT */
/*
 * fastclock_trust.h: whether libfastclock may read the counter, and its
 * first frequency (internal to the library).
 *
 * The decision is a pure function of gathered facts (fc_trust_judge), so
 * that unit tests feed it any machine; fc_trust_gather reads the live one:
 * FASTCLOCK from the environment, the CPU's flags, the kernel's clocksource
 * from sysfs ($FASTCLOCK_SYSFS overrides /sys, for tests), and the per-boot
 * verdict that `clockdoctor tsc` leaves.  Everything is read with
 * open/read/close into fixed buffers: no allocation, no stdio.
 */
#ifndef FC_FASTCLOCK_TRUST_H
#define FC_FASTCLOCK_TRUST_H

#include "fastclock.h"
#include "readcost.h"

#include <stdbool.h>

enum fc_mode { FC_MODE_AUTO, FC_MODE_OFF, FC_MODE_FORCE };

struct fc_trust_facts {
	enum fc_mode mode;
	bool mode_bad;              /* FASTCLOCK had another value (treated as auto) */
	int counter_usable;         /* 0, or -errno from fc_counter_probe */
	int counter_kind;           /* FC_COUNTER_KIND */
	bool invariant;             /* x86: CPUID 0x80000007 EDX[8]; arm64: always */
	bool have_sysfs;
	char clocksource[32];       /* current_clocksource */
	char available[256];        /* available_clocksource */
	int verdict;                /* -1 none, else 0 sound, 1 unknown, 2 unsound (this boot only) */
	char verdict_why[160];      /* why there is none: "no file", "another boot", ... */
	bool verdict_ignored;       /* a verdict for this boot, refused (its counter_hz) */
	double verdict_hz;
	double verdict_hz_err_ppm;  /* what verdict_hz may be off: checked at start */
	int kernel_major, kernel_minor, kernel_patch;
	/* a counter read against the kernel's clock, measured at start where
	 * the counter could be used (readcost.h); unmeasured decides nothing */
	struct fc_read_cost cost;
	/* first frequency */
	double declared_hz;
	double declared_err_ppm;
	char freq_from[24];
	/* the sysfs files, made once at start, and what fc_trust_still reads
	 * them into: it runs in a re-anchor, on whatever stack the reader has
	 * (docs/fastclock.3, "Stack use"), with the writer's lock held */
	char cur_path[512], avail_path[512];
	char now[32], list[256];
};

struct fc_trust {
	bool use_counter;
	enum fc_reason reason;
	char text[200];
	int vdso_fast;              /* the kernel's clocksource is read by the vDSO: 1, 0, -1 unknown
	                               (0 too where its clock measured as dear as a system call) */
	bool watch_current;         /* leave when current_clocksource stops being the counter */
	bool watch_available;       /* leave when the counter leaves available_clocksource */
};

/* The counter's clocksource name for this architecture ("tsc",
 * "arch_sys_counter"), or NULL. */
const char *fc_trust_counter_clocksource(int counter_kind);

/* 1, 0 or -1 (unknown) for a clocksource name on a kernel version: the
 * table's state (clockfacts.h), read as fc_vdso_usually_fast. */
int fc_trust_vdso_fast(const char *clocksource, int major, int minor, int patch);

/* True when name is one word of the space-separated list. */
bool fc_trust_listed(const char *list, const char *name);

void fc_trust_judge(const struct fc_trust_facts *f, struct fc_trust *t);

/* Reads the live machine (see above), but for the first frequency. */
void fc_trust_gather(struct fc_trust_facts *f);

/* The first frequency (declared_hz, declared_err_ppm, freq_from): only
 * once the counter is to be used, since the last source tried opens a
 * perf event, which a process whose counter is refused has no need of. */
void fc_trust_declared(struct fc_trust_facts *f);

/* Reads current and available clocksources again: false when the kernel
 * has left the counter as t asks to watch (why says what changed). */
bool fc_trust_still(struct fc_trust_facts *f, const struct fc_trust *t, char *why, size_t len);

/* The range of rates real counters run at: ARM's generic timers from
 * 1 MHz (1 GHz since ARMv8.6), TSCs at the CPU's base clock (hundreds of
 * MHz to a few GHz). */
#define FC_COUNTER_HZ_MIN 1e6
#define FC_COUNTER_HZ_MAX 1e10
/* A verdict's counter_hz must agree with the rate measured at start to
 * within this beyond the measurement's own uncertainty. */
#define FC_VERDICT_AGREE_PPM 5.0
/* How long start-up measures the counter against CLOCK_MONOTONIC_RAW to
 * check a verdict's counter_hz. */
#define FC_VERDICT_CHECK_NS 1000000

/* A verdict's counter_hz against the rate ref_hz measured to within
 * ref_err_ppm (ref_hz 0: no measurement): true when it is in the range of
 * real counters and agrees, with *err_ppm what the rate may be off (at
 * least 1 ppm; 1000 without a measurement, so that the library measures
 * before it starts on the counter); false with why (for reason_text). */
bool fc_verdict_hz_check(double hz, double ref_hz, double ref_err_ppm, double *err_ppm, char *why, size_t len);

/* Appends s to the text dst of length at (cap bytes in all, truncating,
 * NUL-terminated); returns the new length.  The re-anchor's texts are
 * made with this, not snprintf: glibc's formatting takes over a kilobyte
 * of stack, and a re-anchor may run in a signal handler on a small
 * alternate stack (docs/fastclock.3, "Stack use"). */
size_t fc_text_put(char *dst, size_t cap, size_t at, const char *s);

/* Appends s to the text dst of length at (cap bytes in all, truncating,
 * NUL-terminated); returns the new length.  The re-anchor's texts are
 * made with this, not snprintf: glibc's formatting takes over a kilobyte
 * of stack, and a re-anchor may run in a signal handler on a small
 * alternate stack (docs/fastclock.3, "Stack use"). */
size_t fc_text_put(char *dst, size_t cap, size_t at, const char *s);

/* Reads a small file into buf (NUL-terminated, trailing newline removed);
 * the length or -errno.  Async-signal-safe. */
long fc_read_small(const char *path, char *buf, size_t len);

#endif
