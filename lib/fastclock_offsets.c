/*
 * fastclock_offsets.c: the offsets from libfastclock's MONOTONIC to the
 * kernel's REALTIME, TAI and BOOTTIME, each read from the kernel so that a
 * clock served as MONOTONIC plus its offset is the kernel's within the
 * line's bound (fastclock(3), fc_realtime_ns and fc_gettime).
 */
#include "fastclock_impl.h"

#include <errno.h>
#include <sys/timex.h>

/* REALTIME - MONOTONIC, exactly: the coarse clocks come from one snapshot
 * of the kernel's timekeeper, so their difference is the wall_to_monotonic
 * offset, the same as the fine clocks'.  The two MONOTONIC_COARSE reads
 * around the REALTIME_COARSE one must agree (no tick between).  TAI -
 * REALTIME from adjtimex before and after: equal, no leap second fell
 * between, so the pair is consistent and TAI = MONOTONIC + both is
 * continuous through a leap (the kernel moves both at once).  A leap second
 * announced (STA_INS, STA_DEL) sets a MONOTONIC span around the coming
 * midnight UTC in which REALTIME and TAI are read from the kernel itself:
 * the kernel applies the leap at its first tick after the edge, and that
 * is the REALTIME to serve.  One refresher at a time, so that a slow one
 * cannot store an older offset over a newer one. */
static bool read_tai(struct timex *tx)
{
	memset(tx, 0, sizeof *tx);
	int saved = errno;
	bool ok = adjtimex(tx) >= 0;
	errno = saved;
	return ok;
}

#define LEAP_BEFORE_NS 50000000LL   /* the span: 50 ms before the edge... */
#define LEAP_AFTER_NS 2000000000LL  /* ...to 2 s after it */
#define DAY_NS (86400 * NS_PER_S)

void fc_int_rt_refresh(void)
{
	struct fc_mm *m = mm_now();
	int expected = 0;
	if (!atomic_compare_exchange_strong_explicit(&m->rt_lock, &expected, 1, memory_order_acquire,
	                                             memory_order_relaxed))
		return;
	for (int attempt = 0; attempt < 3; attempt++) {
		struct timex tx1, tx2;
		bool ok1 = read_tai(&tx1);
		int64_t rt_off = 0, r = 0;
		bool done = false;
		for (int i = 0; i < 4 && !done; i++) {
			int64_t m1 = fc_kclock_ns(CLOCK_MONOTONIC_COARSE);
			r = fc_kclock_ns(CLOCK_REALTIME_COARSE);
			int64_t m2 = fc_kclock_ns(CLOCK_MONOTONIC_COARSE);
			if (m1 == INT64_MIN || r == INT64_MIN)
				break;
			if (m1 == m2) {
				rt_off = r - m1;
				done = true;
			}
		}
		if (!done) {
			/* No coarse clocks: the fine ones, to within a read. */
			int64_t mf = fc_kclock_ns(CLOCK_MONOTONIC);
			r = fc_kclock_ns(CLOCK_REALTIME);
			if (mf == INT64_MIN || r == INT64_MIN)
				break;
			rt_off = r - mf;
		}
		bool ok2 = read_tai(&tx2);
		if (ok1 && ok2 && tx1.tai != tx2.tai)
			continue;  /* a leap second between: read the pair again */
		atomic_store_explicit(&fc_int_offsets.rt_off, rt_off, memory_order_relaxed);
		bool ok = ok1 && ok2;
		if (ok)
			atomic_store_explicit(&fc_int_offsets.tai_off, (int64_t)tx2.tai * NS_PER_S, memory_order_relaxed);
		atomic_store_explicit(&fc_int_offsets.tai_ok, ok, memory_order_relaxed);
		int64_t lo = 0, hi = 0;
		if (ok && (tx2.status & (STA_INS | STA_DEL)) && r > 0) {
			int64_t edge = (r / DAY_NS + 1) * DAY_NS - rt_off;
			lo = edge - LEAP_BEFORE_NS;
			hi = edge + LEAP_AFTER_NS;
		}
		atomic_store_explicit(&fc_int_offsets.leap_lo, lo, memory_order_relaxed);
		atomic_store_explicit(&fc_int_offsets.leap_hi, hi, memory_order_relaxed);
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
 * still, so the frequency's baseline starts again. */
void fc_int_boot_refresh(void)
{
	int64_t best_lo = INT64_MIN, best_w = INT64_MAX;
	for (int i = 0; i < 4; i++) {
		int64_t m1 = fc_kclock_ns(CLOCK_MONOTONIC);
		int64_t b = fc_kclock_ns(CLOCK_BOOTTIME);
		int64_t m2 = fc_kclock_ns(CLOCK_MONOTONIC);
		if (m1 == INT64_MIN || b == INT64_MIN || m2 == INT64_MIN)
			return;
		if (m2 - m1 < best_w) {
			best_w = m2 - m1;
			best_lo = b - m2;
		}
	}
	int64_t cur = atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed);
	if (!fc_int_writer.have_boot || best_lo > cur) {
		if (fc_int_writer.have_boot && best_lo > cur + best_w + 1000)
			fc_int_writer.reset_base = true;
		atomic_store_explicit(&fc_int_offsets.boot_off, best_lo, memory_order_relaxed);
		fc_int_writer.have_boot = true;
	}
}
