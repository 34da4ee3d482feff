/* SPDX-License-Identifier: MIT */
/*
 * fastclock.h: libfastclock, the kernel's clocks read from the CPU's counter
 * (the TSC on x86-64, cntvct_el0 on arm64) at the cost of one counter read.
 *
 * The values are on the kernel's scales and epochs: fc_now_ns() is
 * CLOCK_MONOTONIC, fc_realtime_ns() is CLOCK_REALTIME, and they can be mixed
 * with the kernel's own readings within the error bound that fc_info()
 * reports.  The library keeps a line "ns = base + (counter - anchor) * mult"
 * that it re-anchors against the kernel from time to time, following the
 * kernel's NTP frequency by slewing and never stepping backwards.  When the
 * counter cannot be trusted the same calls read the kernel's clock instead,
 * silently; fc_info() says which source is in use and why.
 *
 * Contract for every function below (fastclock(3): RETURN VALUE, ERRORS,
 * ATTRIBUTES):
 *   - it never prints, never exits, never allocates, and takes no lock it
 *     could wait on: it is MT-Safe and async-signal-safe, and safe in a
 *     child after fork();
 *   - the library starts in its constructor, as the program or dlopen()
 *     loads it: it reads a few files, maps one page that it keeps and
 *     registers an atfork handler (which glibc allocates for), once;
 *   - it has no threads of its own: re-anchoring is done, rarely, by the
 *     caller that finds the line due;
 *   - errors come back as -errno, and errno is left as it was (even by
 *     fc_gettime(): it is not clock_gettime's convention).
 *
 * ISO C99 and later, and C++: this header needs no feature macro (it takes
 * clockid_t from <sys/types.h>).  The CLOCK_ ids that fc_gettime() takes
 * come from <time.h>, which declares them under _POSIX_C_SOURCE >= 199309L
 * (the default of gcc's gnu modes; define it under -std=c11).
 *
 * Link with -lfastclock (pkg-config fastclock).  Manual: fastclock(3).
 */
#ifndef FASTCLOCK_H
#define FASTCLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>  /* clockid_t (POSIX) */
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FASTCLOCK_VERSION_MAJOR 0
#define FASTCLOCK_VERSION_MINOR 1
#define FASTCLOCK_VERSION_PATCH 0

#if defined(__GNUC__)
#define FC_API __attribute__((visibility("default")))
#else
#define FC_API
#endif

/* <time.h> defines it in C11 and POSIX; declared here for C99 too. */
struct timespec;

/* ---- reading the time ---- */

/* Nanoseconds on CLOCK_MONOTONIC's scale and epoch.  Never smaller than a
 * value this function (or fc_gettime(CLOCK_MONOTONIC)) returned earlier, in
 * any thread of the process, on any CPU, across re-anchors.  Within the
 * error bound of fc_info() of what clock_gettime(CLOCK_MONOTONIC) would
 * return at the same instant.  The counter read is ordered (lfence; rdtsc):
 * it is not taken before earlier loads complete. */
FC_API int64_t fc_now_ns(void);

/* The same clock, with the counter read unordered (bare rdtsc on x86): the
 * CPU may take the read a few tens of cycles early or late relative to the
 * surrounding code.  Same scale, same error bound, still never smaller than
 * a value an earlier call of this function returned on the same thread; a
 * value from another thread may be larger by those few tens of cycles.  For
 * intervals measured on one thread at the bare counter's cost. */
FC_API int64_t fc_now_ns_unordered(void);

/* Nanoseconds on CLOCK_REALTIME's scale (since 1970, UTC, leap seconds not
 * counted).  fc_now_ns() plus the kernel's current REALTIME - MONOTONIC
 * offset, which the library re-reads at least every FC_STEP_CHECK_NS: a step
 * of the wall clock (settimeofday, clock_settime, an NTP step, a leap
 * second) shows here within that time, and steps this clock as it steps the
 * kernel's.  Otherwise never smaller than an earlier value. */
FC_API int64_t fc_realtime_ns(void);

/* The longest a step of the wall clock takes to show in fc_realtime_ns(),
 * provided the process keeps reading the time (a read that finds the check
 * due does it: one vDSO read of the coarse clocks). */
#define FC_STEP_CHECK_NS 1000000

/* clock_gettime()'s clocks and struct timespec, with the library's error
 * convention, not clock_gettime()'s: fills *ts and returns 0, or returns
 * -errno (-EINVAL for an id the kernel does not know, -EFAULT for a NULL
 * ts) and leaves errno as it was.  Served from the counter:
 * CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI and
 * CLOCK_MONOTONIC_RAW (a second line anchored on the raw clock).  Every
 * other id, and every id while the counter is not trusted, is passed to the
 * kernel. */
FC_API int fc_gettime(clockid_t clock, struct timespec *ts);

/* CLOCK_MONOTONIC_COARSE from the kernel (a vDSO read of the last tick on
 * every clocksource: a few ns): resolution of the tick (1-10 ms, see
 * clock_getres()), may be behind fc_now_ns() by up to one tick. */
FC_API int64_t fc_coarse_ns(void);

/* ---- intervals ---- */

/* The raw counter, unordered: for the cheapest possible interval.  Convert a
 * difference with fc_cycles_to_ns().  The value means nothing across
 * machines, boots or a resume from suspend. */
FC_API uint64_t fc_cycles(void);

/* A difference of fc_cycles() values in nanoseconds, at the current
 * frequency estimate (see fc_info().counter_hz; error fc_info().freq_err_ppm).
 * Returns 0 when the counter is not in use or the difference is negative as
 * a signed number. */
FC_API int64_t fc_cycles_to_ns(uint64_t cycles);

/* fc_now_ns() - start_ns, or 0 if that is negative. */
FC_API int64_t fc_elapsed_ns(int64_t start_ns);

/* ---- what the library is doing ---- */

enum fc_source {
	FC_SOURCE_KERNEL = 0,  /* reading the kernel's clock (clock_gettime) */
	FC_SOURCE_COUNTER = 1, /* reading the counter, re-anchored on the kernel */
};

/* Why the counter is, or is not, in use (fc_info().reason). */
enum fc_reason {
	FC_REASON_KERNEL_USES_COUNTER = 0,  /* kernel's clocksource is tsc / arch_sys_counter */
	FC_REASON_VERIFIED,         /* another clocksource, but `clockdoctor tsc` found the counter sound on this boot */
	FC_REASON_FORCED,           /* FASTCLOCK=force */
	FC_REASON_OFF,              /* FASTCLOCK=off */
	FC_REASON_NO_COUNTER,       /* no counter on this CPU, or reading it faults (PR_SET_TSC) */
	FC_REASON_NOT_INVARIANT,    /* the TSC's rate changes with power states (no CPUID invariant-TSC bit) */
	FC_REASON_UNVERIFIED,       /* the kernel is on another clocksource and no sound verdict for this boot */
	FC_REASON_VERDICT_UNSOUND,  /* `clockdoctor tsc` found the counter unsound on this boot */
	FC_REASON_KERNEL_LEFT,      /* the kernel changed clocksource away from the counter while running */
	FC_REASON_NO_SYSFS,         /* the kernel's clocksource cannot be read, and no sound verdict */
	FC_REASON_NO_FREQUENCY,     /* no frequency could be obtained for the counter */
	FC_REASON_KERNEL_CLOCK_FAILED, /* the kernel's clock could not be read to anchor on */
	FC_REASON_UNSUPPORTED,      /* not x86-64 or arm64 */
	FC_REASON_COUNTER_SLOW,     /* a counter read costs no less than the kernel's clock: its reads trap
	                               (an arm64 timer erratum's workaround, a hypervisor trapping rdtsc) */
};

struct fc_info {
	enum fc_source source;
	enum fc_reason reason;
	char reason_text[200];       /* the reason for people, with the evidence */
	char counter[16];            /* "tsc", "cntvct_el0", "none" */
	char kernel_clocksource[32]; /* current_clocksource as read at start ("" unknown) */
	int kernel_vdso_fast;        /* 1: the kernel's clocksource is read by the vDSO, 0: not (or its
	                                clock measured as dear as a system call at start), -1: unknown */
	double counter_hz;           /* the frequency in use (0 when not in use) */
	char freq_from[24];          /* where it came from: "cpuid-0x15", "hypervisor-leaf", "perf-page",
	                                "cntfrq", "verdict", "measured" (refined against the kernel) */
	double freq_err_ppm;         /* the estimate's uncertainty */
	int64_t error_bound_ns;      /* |fc_now_ns() - CLOCK_MONOTONIC| now is at most this (kernel
	                                source: how far its floors are still ahead of the kernel) */
	int64_t last_sync_ns;        /* CLOCK_MONOTONIC of the last re-anchor (0: never) */
	int64_t sync_interval_ns;    /* the re-anchor period */
	uint64_t syncs;              /* re-anchors since start */
	uint64_t counter_backwards;  /* times the counter was seen going backwards (forced re-anchors) */
	int verdict;                 /* the cached `clockdoctor tsc` verdict for this boot: 0 sound,
	                                1 unknown, 2 unsound, -1 none */
};

/* Fills *info.  Returns 0, -EINVAL for a NULL pointer, or -EAGAIN when a
 * re-anchor held the library's state for longer than it waits (tens of
 * microseconds to a millisecond, by CPU: in a signal handler that
 * interrupted one, waiting would never end; try again later).  Not for a hot path: it may read the clock
 * and copy strings. */
FC_API int fc_info(struct fc_info *info);

/* Re-anchors now (a few kernel clock reads, slewing as usual), for callers
 * who know the kernel's clock just changed (after a resume they were told
 * about).  Returns 0, -EBUSY when another thread is re-anchoring, or
 * -ENOTSUP when the counter is not in use. */
FC_API int fc_resync(void);

/* Stable names: "kernel"/"counter", and the reason's identifier
 * ("kernel-uses-counter", "verified", ...); "unknown" for a value outside
 * the enum.  Never NULL: a string constant. */
FC_API const char *fc_source_name(enum fc_source source);
FC_API const char *fc_reason_name(enum fc_reason reason);

/* ---- the per-boot TSC verdict that `clockdoctor tsc` leaves ---- */

/* Where `clockdoctor tsc` (as root) writes its verdict, and where the
 * library reads it; $FASTCLOCK_VERDICT overrides the path (ignored in
 * setuid programs).  The file must be owned by root or by the process's
 * user and writable by no one else.  Format: lines "key=value": boot_id
 * (must equal /proc/sys/kernel/random/boot_id), verdict (sound, unknown,
 * unsound), counter_hz, clocksource, time (unix seconds). */
#define FC_VERDICT_PATH "/run/clockdoctor/tsc-verdict"

struct fc_verdict {
	char boot_id[40];
	int verdict;                 /* 0 sound, 1 unknown, 2 unsound */
	double counter_hz;           /* 0 when absent */
	char clocksource[32];
	int64_t time;
};

/* Parses a verdict file's text (len bytes, need not be NUL-terminated).
 * Returns 0, or -EINVAL when text or v is NULL, a required key (boot_id,
 * verdict) is missing, a line has no '=', or a value is malformed; keys it
 * does not know are skipped. */
FC_API int fc_verdict_parse(const char *text, size_t len, struct fc_verdict *v);

#ifdef __cplusplus
}
#endif

#endif
