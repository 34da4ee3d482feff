/* SPDX-License-Identifier: MIT */
/*
 * fastclock_preload.c: libfastclock-preload.so, the accelerator.  Put in
 * front of an unmodified dynamically linked program with LD_PRELOAD, it
 * defines clock_gettime, gettimeofday and timespec_get (and the aliases
 * __clock_gettime and __gettimeofday), so the program's calls reach it
 * before libc's.
 *
 * time() is left to libc on purpose: the vDSO reads it from its data page
 * on every clocksource (2.7 ns measured on the development machine), where
 * the counter would cost 24 ns, and even a pass-through definition adds
 * up to 10 %.  Its seconds are the last tick's, as without the accelerator:
 * they agree with a served gettimeofday as closely as the kernel's own two
 * do, to within the error bound, and a step of the wall clock shows in
 * time() at once and in gettimeofday within FC_STEP_CHECK_NS.
 *
 * What it does is decided once, in the constructor, from fc_info():
 *
 *   - serve: the library reads the counter (source counter) and either the
 *     kernel's clocksource cannot be read by the vDSO (kernel_vdso_fast 0:
 *     every call of the program is a system call, and the library found a
 *     sound per-boot verdict, or it would not be on the counter) or the
 *     operator said FASTCLOCK=force.  REALTIME, MONOTONIC, MONOTONIC_RAW,
 *     BOOTTIME and TAI then come from fc_gettime(), gettimeofday and
 *     timespec_get from its CLOCK_REALTIME;
 *   - step aside: everything else (a healthy machine, where the vDSO is as
 *     fast as the counter; no sound verdict; FASTCLOCK=off; a counter whose
 *     user-space reads trap, as arm64 timer errata's workarounds make them,
 *     which the library measured no cheaper than the kernel's clock): every call goes
 *     straight to libc's function.
 *
 * The hot path is one predictable branch on `serving` and, when stepping
 * aside, a tail call through a pointer to libc's function.  Every id the
 * library does not serve, every implausible pointer and every error goes to
 * libc's function too, so errors are the kernel's own (EINVAL, EFAULT) and
 * errno is set exactly as libc sets it; fc_gettime() returns -errno and
 * leaves errno alone, so a served call never touches errno.
 *
 * libc's functions are found with dlsym(RTLD_NEXT) in the constructor, the
 * one place where dlsym cannot recurse into us or run before libc is ready.
 * Until then (another library's constructor may read the time before ours
 * runs), and if dlsym fails, the pointers hold raw system-call wrappers.
 * The library itself never calls these symbols: it reads the kernel's
 * clocks through its own vDSO lookup (lib/kclock.h), so serving cannot
 * recurse either.
 *
 * Nothing is printed, except one line on stderr at start when
 * FASTCLOCK_INFO=1 is in the environment (written with write(2), no stdio).
 * docs/run.md is the user's manual.
 */
/* libc's prototypes are hidden: gettimeofday's changed in glibc 2.31, and
 * clock_gettime's carries __nonnull, which would let the compiler drop the
 * checks that send a NULL pointer to the kernel for its EFAULT. */
#define clock_gettime fcp_hide_clock_gettime
#define gettimeofday fcp_hide_gettimeofday
#define timespec_get fcp_hide_timespec_get
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#undef clock_gettime
#undef gettimeofday
#undef timespec_get

#include "fastclock.h"
#include "fastclock_serve.h"

#define EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#ifndef TIME_UTC
#define TIME_UTC 1
#endif

/* The clock ids fc_gettime() serves from the counter, as a bit mask. */
#define SERVED_IDS ((1u << CLOCK_REALTIME) | (1u << CLOCK_MONOTONIC) | (1u << CLOCK_MONOTONIC_RAW) | \
                    (1u << CLOCK_BOOTTIME) | (1u << CLOCK_TAI))

/* The highest user-space address plus one: x86-64 with 5-level paging, and
 * arm64 with 52-bit virtual addresses (the widest each can have).  A pointer
 * outside [4096, USER_END) is never valid: it goes to libc's function, which
 * gives the kernel's EFAULT instead of a crash in here.  A pointer into
 * unmapped user memory still faults when written, as it does in the vDSO of
 * a machine whose clocksource it can read. */
#if defined(__aarch64__)
#define USER_END (1ull << 52)
/* Top-byte-ignore: tagged pointers are valid user pointers on arm64. */
#define UNTAG(p) ((p) & ((1ull << 56) - 1))
#else
#define USER_END (1ull << 56)
#define UNTAG(p) (p)
#endif

EXPORT int clock_gettime(clockid_t id, struct timespec *ts);
EXPORT int __clock_gettime(clockid_t id, struct timespec *ts);
EXPORT int gettimeofday(struct timeval *tv, void *tz);
EXPORT int __gettimeofday(struct timeval *tv, void *tz);
EXPORT int timespec_get(struct timespec *ts, int base);

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);
typedef int (*timespec_get_fn)(struct timespec *, int);

/* ---- the raw system calls: before the constructor, or without dlsym ---- */

static int raw_clock_gettime(clockid_t id, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, (long)id, ts);
}

static int raw_gettimeofday(struct timeval *tv, void *tz)
{
	return (int)syscall(SYS_gettimeofday, tv, tz);
}

static int raw_timespec_get(struct timespec *ts, int base)
{
	if (base != TIME_UTC)
		return 0;
	return syscall(SYS_clock_gettime, (long)CLOCK_REALTIME, ts) == 0 ? base : 0;
}

/* ---- state: written once, by the constructor, before main ---- */

static clock_gettime_fn real_clock_gettime = raw_clock_gettime;
static gettimeofday_fn real_gettimeofday = raw_gettimeofday;
static timespec_get_fn real_timespec_get = raw_timespec_get;
static int serving;

static inline int plausible(const void *p, size_t size)
{
	uintptr_t a = UNTAG((uintptr_t)p);
	return a >= 4096 && a < USER_END - size;
}

/* ---- the exported functions ---- */

/* fc_gettime answers MONOTONIC, REALTIME, BOOTTIME and MONOTONIC_RAW
 * with a plausible pointer always (0): a tail call, no frame to keep id
 * and ts for libc's function.  TAI may find no CLOCK_TAI to take its
 * offset from: that error goes to libc's function, for its errno (in a
 * function of its own, so that its frame is not every call's). */
__attribute__((noinline)) static int serve_tai(struct timespec *ts)
{
	if (fc_gettime(CLOCK_TAI, ts) == 0)
		return 0;
	return real_clock_gettime(CLOCK_TAI, ts);
}

EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	/* The two ids programs ask for most straight to their own entry
	 * points, each a tail call: the dispatch is two compares (serving is
	 * laid out as the fall-through: stepping aside costs a taken branch
	 * beside libc's call, serving would cost one beside a 25 ns read). */
	if (likely(serving) && plausible(ts, sizeof *ts)) {
		if (id == CLOCK_MONOTONIC)
			return fc_int_serve_mono(ts);
		if (id == CLOCK_REALTIME)
			return fc_int_serve_realtime(ts);
		if ((unsigned)id < 32 && (SERVED_IDS >> id & 1))
			return likely(id != CLOCK_TAI) ? fc_gettime(id, ts) : serve_tai(ts);
	}
	return real_clock_gettime(id, ts);
}

/* glibc's own name for it, which its libraries before 2.34 bound to. */
EXPORT int __clock_gettime(clockid_t id, struct timespec *ts) __attribute__((alias("clock_gettime")));

/* The time zone, which nobody should ask for any more, is the kernel's:
 * libc's function with no tv reads it without a system call (the vDSO
 * fills it from its data page).  In a function of its own: its frame is
 * not every call's. */
__attribute__((noinline)) static int serve_gettimeofday_tz(struct timeval *tv, void *tz)
{
	struct timespec ts;
	if (fc_gettime(CLOCK_REALTIME, &ts) != 0)
		return real_gettimeofday(tv, tz);
	if (real_gettimeofday(NULL, tz) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

/* REALTIME's ns as a timeval, the microseconds truncated as from a
 * timespec: at or after the epoch by unsigned divisions by constants
 * (multiplies and shifts), before it with the sign fixed up. */
static inline void ns_to_timeval(int64_t v, struct timeval *tv)
{
	if (likely(v >= 0)) {
		uint64_t us = (uint64_t)v / 1000;
		uint64_t sec = us / 1000000;
		tv->tv_sec = (time_t)sec;
		tv->tv_usec = (suseconds_t)(us - sec * 1000000);
		return;
	}
	int64_t sec = v / 1000000000, rem = v % 1000000000;
	if (rem < 0) {
		rem += 1000000000;
		sec--;
	}
	tv->tv_sec = (time_t)sec;
	tv->tv_usec = (suseconds_t)(rem / 1000);
}

EXPORT int gettimeofday(struct timeval *tv, void *tz)
{
	if (likely(serving) && plausible(tv, sizeof *tv)) {
		if (unlikely(tz != NULL))
			return serve_gettimeofday_tz(tv, tz);
		/* fc_gettime's CLOCK_REALTIME, without a timespec between */
		fc_int_serve_timeval(tv);
		return 0;
	}
	return real_gettimeofday(tv, tz);
}
EXPORT int __gettimeofday(struct timeval *tv, void *tz) __attribute__((alias("gettimeofday")));

/* C11's timespec_get: glibc's calls its clock internally, past our
 * clock_gettime, so it is defined here too. */
EXPORT int timespec_get(struct timespec *ts, int base)
{
	if (unlikely(serving) && base == TIME_UTC && plausible(ts, sizeof *ts) &&
	    fc_gettime(CLOCK_REALTIME, ts) == 0)
		return base;
	return real_timespec_get(ts, base);
}

/* What the accelerator does, for a program or a test that asks:
 * dlsym(RTLD_DEFAULT, "fastclock_preload_info").  fc_info() of the library
 * inside the accelerator (its own instance: the bound of the values this
 * process is served), and whether the accelerator answers the time calls.
 * Returns fc_info()'s result. */
EXPORT int fastclock_preload_info(struct fc_info *info, int *serving_out);
int fastclock_preload_info(struct fc_info *info, int *serving_out)
{
	if (serving_out)
		*serving_out = serving;
	return fc_info(info);
}

/* ---- the constructor ---- */

/* libc's definition, or NULL: the next object's after ours in the lookup
 * order (a program's other preloads before us, libc after). */
static void *next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	return p;
}

/* A tiny formatter for the info line: snprintf is not async-signal-safe and
 * may allocate for floating point, and this runs in every process. */
struct line {
	char buf[512];
	size_t n;
};

static void put(struct line *l, const char *s)
{
	while (*s && l->n < sizeof l->buf - 2)
		l->buf[l->n++] = *s++;
}

static void put_u(struct line *l, uint64_t v)
{
	char d[24];
	int i = 0;
	do
		d[i++] = (char)('0' + v % 10);
	while ((v /= 10) && i < (int)sizeof d);
	while (i > 0 && l->n < sizeof l->buf - 2)
		l->buf[l->n++] = d[--i];
}

static void put_i(struct line *l, int64_t v)
{
	if (v < 0) {
		put(l, "-");
		put_u(l, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u(l, (uint64_t)v);
	}
}

/* v with `decimals` digits after the point (v >= 0, below 2^63). */
static void put_fixed(struct line *l, double v, int decimals)
{
	uint64_t scale = 1;
	for (int i = 0; i < decimals; i++)
		scale *= 10;
	if (!(v >= 0) || v > 9e15 / (double)scale) {
		put(l, "?");
		return;
	}
	uint64_t x = (uint64_t)(v * (double)scale + 0.5);
	put_u(l, x / scale);
	if (decimals) {
		put(l, ".");
		uint64_t f = x % scale;
		for (uint64_t s = scale / 10; s > 0; s /= 10)
			put_u(l, f / s % 10);
	}
}

/* One line, key=value first so that scripts and tests can read it:
 *   fastclock-preload[PID]: serving|stepping aside: source=... reason=...
 *   counter=... hz=... from=... err_ppm=... bound_ns=... clocksource=...
 *   vdso=fast|slow|unknown: REASON TEXT */
static void info_line(const struct fc_info *fi, int have, const char *why)
{
	struct line l = { .n = 0 };
	put(&l, "fastclock-preload[");
	put_u(&l, (uint64_t)getpid());
	put(&l, "]: ");
	put(&l, serving ? "serving clock_gettime and gettimeofday from the counter" :
	                  "stepping aside: the kernel's clock serves every call");
	if (have) {
		put(&l, ": source=");
		put(&l, fc_source_name(fi->source));
		put(&l, " reason=");
		put(&l, fc_reason_name(fi->reason));
		put(&l, " counter=");
		put(&l, fi->counter[0] ? fi->counter : "none");
		put(&l, " hz=");
		put_fixed(&l, fi->counter_hz, 0);
		put(&l, " from=");
		put(&l, fi->freq_from[0] ? fi->freq_from : "-");
		put(&l, " err_ppm=");
		put_fixed(&l, fi->freq_err_ppm, 3);
		put(&l, " bound_ns=");
		put_i(&l, fi->error_bound_ns);
		put(&l, " clocksource=");
		put(&l, fi->kernel_clocksource[0] ? fi->kernel_clocksource : "unknown");
		put(&l, " vdso=");
		put(&l, fi->kernel_vdso_fast > 0 ? "fast" : fi->kernel_vdso_fast == 0 ? "slow" : "unknown");
		put(&l, " verdict=");
		put(&l, fi->verdict == 0 ? "sound" : fi->verdict == 1 ? "unknown" : fi->verdict == 2 ? "unsound" : "none");
	}
	put(&l, ": ");
	put(&l, why);
	if (have && fi->reason_text[0]) {
		put(&l, "; ");
		put(&l, fi->reason_text);
	}
	l.buf[l.n++] = '\n';
	/* One write: the line is not interleaved with another process's. */
	ssize_t w = write(2, l.buf, l.n);
	(void)w;
}

static int env_is(const char *name, const char *value)
{
	const char *v = getenv(name);
	return v && strcmp(v, value) == 0;
}

__attribute__((constructor)) static void fcp_init(void)
{
	void *p;
	/* Each pointer is replaced only by a real definition: a dlsym that
	 * fails leaves the raw system call in place. */
	if ((p = next("clock_gettime")) != NULL)
		real_clock_gettime = (clock_gettime_fn)p;
	if ((p = next("gettimeofday")) != NULL)
		real_gettimeofday = (gettimeofday_fn)p;
	if ((p = next("timespec_get")) != NULL)
		real_timespec_get = (timespec_get_fn)p;

	int info = env_is("FASTCLOCK_INFO", "1");
	/* As the library reads it: ignored in setuid programs. */
	const char *mode = secure_getenv("FASTCLOCK");
	int force = mode && strcmp(mode, "force") == 0;
	/* FASTCLOCK=off: nothing more to decide (the library's own start has
	 * already read it and stays on the kernel's clock). */
	if (mode && (strcmp(mode, "off") == 0 || strcmp(mode, "0") == 0) && !info)
		return;
	struct fc_info fi;
	memset(&fi, 0, sizeof fi);
	int have = fc_info(&fi) == 0;
	/* A library that trusts the counter may still be measuring its
	 * frequency (source kernel for a few ms): it will serve from the
	 * counter then, and reads the kernel's clock as libc would until. */
	int trusted = have && (fi.source == FC_SOURCE_COUNTER || fi.reason == FC_REASON_KERNEL_USES_COUNTER ||
	                       fi.reason == FC_REASON_VERIFIED || fi.reason == FC_REASON_FORCED);
	const char *why;
	if (!have) {
		why = "the library gave no information";
	} else if (fi.reason == FC_REASON_COUNTER_SLOW) {
		why = "reading the counter traps into the kernel, no cheaper than the kernel's clock";
	} else if (!trusted) {
		why = "the library reads the kernel's clock";
	} else if (fi.reason == FC_REASON_FORCED || force) {
		/* On a kernel that runs on the counter the library's reason
		 * stays kernel-uses-counter: the operator's word is ours. */
		why = "FASTCLOCK=force";
		serving = 1;
	} else if (fi.kernel_vdso_fast == 0) {
		why = "the kernel's clocksource cannot be read by the vDSO";
		serving = 1;
	} else if (fi.kernel_vdso_fast > 0) {
		why = "the kernel's clocksource is read by the vDSO already";
	} else {
		why = "whether the vDSO reads the kernel's clocksource is unknown";
	}
	if (info)
		info_line(&fi, have, why);
}
