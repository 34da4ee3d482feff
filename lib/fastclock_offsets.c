/*
 * fastclock_offsets.c: the offsets from libfastclock's MONOTONIC to the
 * kernel's REALTIME, TAI and BOOTTIME, each read from the kernel so that a
 * clock served as MONOTONIC plus its offset is the kernel's within the
 * line's bound (fastclock(3), fc_realtime_ns and fc_gettime).
 */
#include "fastclock_impl.h"

#include <errno.h>
#include <string.h>
#include <sys/timex.h>

/* REALTIME - MONOTONIC, exactly: the coarse clocks come from one snapshot
 * of the kernel's timekeeper, so their difference is the wall_to_monotonic
 * offset, the same as the fine clocks'.  The two MONOTONIC_COARSE reads
 * around the REALTIME_COARSE one must agree (no tick between).  0 and the
 * offset, or -1 when the coarse clocks cannot be had. */
static int coarse_rt_off(int64_t *rt_off, int64_t *r)
{
	for (int i = 0; i < 4; i++) {
		int64_t m1 = fc_kclock_ns(CLOCK_MONOTONIC_COARSE);
		*r = fc_kclock_ns(CLOCK_REALTIME_COARSE);
		int64_t m2 = fc_kclock_ns(CLOCK_MONOTONIC_COARSE);
		if (m1 == INT64_MIN || *r == INT64_MIN)
			return -1;
		if (m1 == m2) {
			*rt_off = *r - m1;
			return 0;
		}
	}
	return -1;
}

/* TAI - REALTIME, whole seconds, from the kernel's own clocks: they change
 * it in the tick that applies a leap second, together with REALTIME.
 * (adjtimex's tai is no use here: it reports the new offset from the
 * second's edge on, before that tick has stepped REALTIME.)  -1 when
 * CLOCK_TAI cannot be read. */
static int tai_seconds(int64_t *tai_s)
{
	int64_t r1 = fc_kclock_ns(CLOCK_REALTIME);
	int64_t t = fc_kclock_ns(CLOCK_TAI);
	int64_t r2 = fc_kclock_ns(CLOCK_REALTIME);
	if (r1 == INT64_MIN || t == INT64_MIN || r2 == INT64_MIN)
		return -1;
	int64_t d = t - (r1 + (r2 - r1) / 2);
	*tai_s = (d + (d >= 0 ? NS_PER_S / 2 : -NS_PER_S / 2)) / NS_PER_S;
	return 0;
}

#define LEAP_BEFORE_NS 50000000LL   /* the span: 50 ms before the edge... */
#define LEAP_AFTER_NS 2000000000LL  /* ...to 2 s after it */
#define DAY_NS (86400 * NS_PER_S)

/* The MONOTONIC span around an announced leap second in which REALTIME is
 * read from the kernel: the kernel applies the leap at its first tick
 * after the edge (midnight UTC for an insertion, one second before for a
 * deletion: kernel/time/ntp.c, second_overflow), and that is the REALTIME
 * to serve.  0, 0 when none is announced. */
static void leap_span(int64_t r, int64_t rt_off, int64_t *lo, int64_t *hi)
{
	*lo = *hi = 0;
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	int saved = errno;
	bool ok = adjtimex(&tx) >= 0;
	errno = saved;
	if (!ok || !(tx.status & (STA_INS | STA_DEL)) || r <= 0)
		return;
	int64_t edge = (r / DAY_NS + 1) * DAY_NS - ((tx.status & STA_DEL) ? NS_PER_S : 0) - rt_off;
	*lo = edge - LEAP_BEFORE_NS;
	*hi = edge + LEAP_AFTER_NS;
}

/* One bracket "MONOTONIC, BOOTTIME, MONOTONIC": BOOTTIME - MONOTONIC is
 * in [*lo, *lo + *w].  false when a clock cannot be read. */
static bool boot_bracket(int64_t *lo, int64_t *w)
{
	int64_t m1 = fc_kclock_ns(CLOCK_MONOTONIC);
	int64_t b = fc_kclock_ns(CLOCK_BOOTTIME);
	int64_t m2 = fc_kclock_ns(CLOCK_MONOTONIC);
	if (m1 == INT64_MIN || b == INT64_MIN || m2 == INT64_MIN)
		return false;
	*lo = b - m2;
	*w = m2 - m1;
	return true;
}

/* The tightest of `tries` brackets. */
static bool boot_tightest(int tries, int64_t *lo, int64_t *w)
{
	bool any = false;
	for (int i = 0; i < tries; i++) {
		int64_t l, x;
		if (!boot_bracket(&l, &x))
			return false;
		if (!any || x < *w) {
			*lo = l;
			*w = x;
			any = true;
		}
	}
	return any;
}

/* REALTIME - BOOTTIME and TAI - BOOTTIME from one measurement of REALTIME -
 * MONOTONIC (rt_mono, exact from the coarse clocks or to within a read)
 * between two brackets of BOOTTIME - MONOTONIC that agree (no resume
 * between them).  The offset to BOOTTIME is rt_mono less BOOTTIME -
 * MONOTONIC: the readers add boot_off, so that is what is taken off when
 * it lies in the brackets (the clock then exactly rt_mono on from
 * MONOTONIC); when it does not, a resume came since and raised it, and the
 * brackets' low end stands in (the offset to BOOTTIME did not move).
 * false when the brackets disagree. */
static bool boot_relative(int64_t lo1, int64_t w1, int64_t lo2, int64_t w2, int64_t rt_mono, int64_t *rt_boot)
{
	int64_t lo = lo1 > lo2 ? lo1 : lo2;
	int64_t hi = lo1 + w1 < lo2 + w2 ? lo1 + w1 : lo2 + w2;
	if (lo > hi)
		return false;  /* BOOTTIME - MONOTONIC moved between them: a resume */
	raise_i64(&fc_int_offsets.boot_off, lo);
	int64_t cur = atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed);
	*rt_boot = rt_mono - (cur <= hi ? cur : lo);
	return true;
}

/* The offsets, one refresher at a time (so that a slow one cannot store an
 * older offset over a newer one).  TAI - BOOTTIME is stored as one value,
 * so that a reader never adds a REALTIME offset from one side of a leap to
 * a TAI offset from the other; REALTIME - MONOTONIC read before and after
 * the TAI offset must agree, or a leap (or a step) fell between.  The
 * offsets to BOOTTIME are stored last, with release: a reader that loads
 * them (acquire) sees boot_off raised at least to what they were made
 * from. */
void fc_int_rt_refresh(void)
{
	struct fc_mm *m = mm_now();
	int expected = 0;
	if (!atomic_compare_exchange_strong_explicit(&m->rt_lock, &expected, 1, memory_order_acquire,
	                                             memory_order_relaxed))
		return;
	for (int attempt = 0; attempt < 3; attempt++) {
		int64_t rt_off = 0, r = 0, rt_after = 0, r2 = 0, tai_s = 0, lo1, w1, lo2, w2, rt_boot;
		if (!boot_bracket(&lo1, &w1))
			break;
		bool coarse = coarse_rt_off(&rt_off, &r) == 0;
		if (!coarse) {
			/* No coarse clocks: the fine ones, to within a read. */
			int64_t mf = fc_kclock_ns(CLOCK_MONOTONIC);
			r = fc_kclock_ns(CLOCK_REALTIME);
			if (mf == INT64_MIN || r == INT64_MIN)
				break;
			rt_off = r - mf;
		}
		bool tai_ok = tai_seconds(&tai_s) == 0;
		if (coarse && (coarse_rt_off(&rt_after, &r2) != 0 || rt_after != rt_off))
			continue;  /* a leap second or a step between: again */
		if (!boot_bracket(&lo2, &w2))
			break;
		if (!boot_relative(lo1, w1, lo2, w2, rt_off, &rt_boot))
			continue;  /* a resume between: again */
		int64_t lo, hi;
		leap_span(r, rt_off, &lo, &hi);
		/* the span in BOOTTIME: MONOTONIC + rt_off is rt_boot on from BOOTTIME */
		int64_t shift = rt_off - rt_boot;
		atomic_store_explicit(&fc_int_offsets.leap_lo, lo == hi ? 0 : lo + shift, memory_order_relaxed);
		atomic_store_explicit(&fc_int_offsets.leap_hi, lo == hi ? 0 : hi + shift, memory_order_relaxed);
		atomic_store_explicit(&fc_int_offsets.tai_ok, tai_ok, memory_order_relaxed);
		if (tai_ok)
			atomic_store_explicit(&fc_int_offsets.tai_boot_off, rt_boot + tai_s * NS_PER_S, memory_order_release);
		atomic_store_explicit(&fc_int_offsets.rt_boot_off, rt_boot, memory_order_release);
		break;
	}
	atomic_store_explicit(&m->rt_lock, 0, memory_order_release);
}

void fc_int_rt_check(uint64_t t)
{
	uint64_t last = atomic_load_explicit(&fc_int_offsets.rt_checked, memory_order_relaxed);
	uint64_t every = atomic_load_explicit(&fc_int_offsets.rt_every, memory_order_relaxed);
	if (t - last < every && every != 0)
		return;
	/* one thread checks; the others keep the offset they have */
	if (!atomic_compare_exchange_strong_explicit(&fc_int_offsets.rt_checked, &last, t, memory_order_relaxed,
	                                             memory_order_relaxed))
		return;
	fc_int_rt_refresh();
}

/* BOOTTIME - MONOTONIC grows only (time asleep).  The tightest of four
 * brackets "MONOTONIC, BOOTTIME, MONOTONIC" gives a low end the offset is
 * at or above; the low end is used, and only ever raised, so BOOTTIME is
 * never ahead of the kernel's and never goes back.  A raise by more than a
 * bracket is a resume: the counter kept running while MONOTONIC stood
 * still, so the frequency's baseline starts again (so is one a follow
 * made since the last look). */
void fc_int_boot_refresh(void)
{
	int64_t lo, w;
	if (!boot_tightest(4, &lo, &w))
		return;
	unsigned jumps = atomic_load_explicit(&fc_int_offsets.boot_jumps, memory_order_relaxed);
	int64_t cur = atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed);
	if (fc_int_writer.have_boot && (lo > cur + w + 1000 || jumps != fc_int_writer.boot_jumps_seen))
		fc_int_writer.reset_base = true;
	fc_int_writer.boot_jumps_seen = jumps;
	if (!fc_int_writer.have_boot)
		atomic_store_explicit(&fc_int_offsets.boot_off, lo, memory_order_relaxed);  /* afresh: it may be lower */
	else
		raise_i64(&fc_int_offsets.boot_off, lo);
	fc_int_writer.have_boot = true;
}

/* Any thread, before it vouches for the line (a check) or serves past it:
 * a resume raised BOOTTIME - MONOTONIC (and REALTIME - MONOTONIC with it),
 * and the line may still be right for MONOTONIC, when the counter stood
 * still while the machine slept (QEMU 9 stops it in S3).  Each bracket's
 * low end raises boot_off (the offset only grows, so any bracket's low end
 * is one of the offset now); it is followed once a bracket no wider than
 * FOLLOW_SLACK_NS ends within that of boot_off: one bracket, unless a
 * resume, or a thread held up inside the bracket, makes it wider.  A
 * frozen follower's late raise is a low end still. */
void fc_int_boot_follow(void)
{
	int64_t before = atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed);
	bool jumped = false;
	for (int i = 0; i < FOLLOW_TRIES; i++) {
		int64_t lo, w;
		if (!boot_bracket(&lo, &w))
			return;
		if (lo > before + w + FOLLOW_SLACK_NS)
			jumped = true;
		raise_i64(&fc_int_offsets.boot_off, lo);
		if (w <= FOLLOW_SLACK_NS &&
		    lo + w - atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed) <= FOLLOW_SLACK_NS)
			break;
	}
	if (jumped)
		atomic_fetch_add_explicit(&fc_int_offsets.boot_jumps, 1, memory_order_relaxed);
}
