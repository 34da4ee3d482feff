/* SPDX-License-Identifier: MIT */
/*
 * fastclock_offsets.c: the offsets from libfastclock's MONOTONIC to the
 * kernel's REALTIME, TAI and BOOTTIME, each read from the kernel so that a
 * clock served as MONOTONIC plus its offset is the kernel's within the
 * line's bound (fastclock(3), fc_realtime_ns and fc_gettime).
 */
#include "fastclock_impl.h"

#include <errno.h>
#include <string.h>

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

/* The MONOTONIC span around the end of a UTC day in which REALTIME is read
 * from the kernel: a leap second takes effect only there, inserted at
 * midnight or deleted one second before (kernel/time/ntp.c,
 * second_overflow), at the kernel's first tick after the edge, and that is
 * the REALTIME to serve.  Whether one is announced (STA_INS, STA_DEL) only
 * adjtimex says, and adjtimex is outside the system calls a sandbox such as
 * systemd's @system-service allows (a refresh runs on any thread, in any
 * read of REALTIME): so every day's end is taken as one, the span of the
 * day whose span has not yet passed, from 50 ms before a deletion's edge to
 * 2 s after midnight.  About 3 s a day of the kernel's REALTIME, which
 * costs what the kernel's clock costs, no more.  0, 0 before 1970. */
static void leap_span(int64_t r, int64_t rt_off, int64_t *lo, int64_t *hi)
{
	*lo = *hi = 0;
	if (r <= LEAP_AFTER_NS)
		return;
	int64_t midnight = ((r - LEAP_AFTER_NS) / DAY_NS + 1) * DAY_NS;
	*lo = midnight - NS_PER_S - LEAP_BEFORE_NS - rt_off;
	*hi = midnight + LEAP_AFTER_NS - rt_off;
}

/* REALTIME - MONOTONIC now: exactly from the coarse clocks (*exact), else
 * the fine ones to within a read; *r is REALTIME.  false when the clocks
 * cannot be read. */
static bool rt_mono_now(int64_t *rt_mono, int64_t *r, bool *exact)
{
	*exact = coarse_rt_off(rt_mono, r) == 0;
	if (*exact)
		return true;
	int64_t mf = fc_kclock_ns(CLOCK_MONOTONIC);
	*r = fc_kclock_ns(CLOCK_REALTIME);
	if (mf == INT64_MIN || *r == INT64_MIN)
		return false;
	*rt_mono = *r - mf;
	return true;
}

/* One bracket "MONOTONIC, BOOTTIME, MONOTONIC": BOOTTIME - MONOTONIC is
 * in [*lo, *lo + *w]; *m2 (when not NULL) its last MONOTONIC.  false when
 * a clock cannot be read. */
static bool boot_bracket_m(int64_t *lo, int64_t *w, int64_t *m2p)
{
	int64_t m1 = fc_kclock_ns(CLOCK_MONOTONIC);
	int64_t b = fc_kclock_ns(CLOCK_BOOTTIME);
	int64_t m2 = fc_kclock_ns(CLOCK_MONOTONIC);
	if (m1 == INT64_MIN || b == INT64_MIN || m2 == INT64_MIN)
		return false;
	*lo = b - m2;
	*w = m2 - m1;
	if (m2p)
		*m2p = m2;
	return true;
}

static bool boot_bracket(int64_t *lo, int64_t *w)
{
	return boot_bracket_m(lo, w, NULL);
}

/* The first of up to `tries` brackets no wider than `enough`, else the
 * tightest.  false when BOOTTIME cannot be read. */
static bool boot_narrow(int tries, int64_t enough, int64_t *lo, int64_t *w)
{
	*lo = 0;
	*w = INT64_MAX;
	for (int i = 0; i < tries && *w > enough; i++) {
		int64_t l, x;
		if (!boot_bracket(&l, &x))
			return false;
		if (x < *w) {
			*lo = l;
			*w = x;
		}
	}
	return *w != INT64_MAX;
}

/* How far a bracket of BOOTTIME - MONOTONIC may say it moved and it did
 * not: FOLLOW_SLACK_NS, or twice the narrowest bracket at start where the
 * kernel's clock is slower to read (hpet, acpi_pm, xen: 1-2.5 us a read). */
static int64_t boot_slack(void)
{
	int64_t s = atomic_load_explicit(&fc_int_offsets.boot_slack, memory_order_relaxed);
	return s > 0 ? s : FOLLOW_SLACK_NS;
}

/* The offsets to BOOTTIME, one refresher at a time (so that a slow one
 * cannot store an older offset over a newer one).  REALTIME - MONOTONIC
 * (rt_mono) is measured between two brackets of BOOTTIME - MONOTONIC that
 * agree, with boot_off this epoch's (followed first, and not behind the
 * first bracket: a resume between them, or one that nobody has followed,
 * and it is read again); REALTIME - BOOTTIME is then rt_mono less boot_off,
 * so that the readers' sum is rt_mono exactly, and a refresher held up
 * after its reads, across a resume, stores an offset still right.  TAI -
 * BOOTTIME is stored as one value, so that a reader never adds a REALTIME
 * offset from one side of a leap to a TAI offset from the other; REALTIME
 * - MONOTONIC read before and after the TAI offset must agree, or a leap
 * (or a step) fell between.  The offsets to BOOTTIME are stored last, with
 * release: a reader that loads them (acquire) sees boot_off at least as
 * it was when they were made.  true when it stored them. */
bool fc_int_rt_refresh(void)
{
	struct fc_mm *m = mm_now();
	int expected = 0;
	if (!atomic_compare_exchange_strong_explicit(&m->rt_lock, &expected, 1, memory_order_acquire,
	                                             memory_order_relaxed))
		return false;
	bool stored = false;
	for (int attempt = 0; attempt < 3 && !stored; attempt++) {
		int64_t rt_mono, r, rt_after = 0, r2 = 0, tai_s = 0, lo1, w1, lo2, w2;
		bool exact;
		(void)fc_int_boot_follow();
		if (!boot_bracket(&lo1, &w1))
			break;
		int64_t cur = atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed);
		if (!rt_mono_now(&rt_mono, &r, &exact))
			break;
		bool tai_ok = tai_seconds(&tai_s) == 0;
		if (exact && (coarse_rt_off(&rt_after, &r2) != 0 || rt_after != rt_mono))
			continue;  /* a leap second or a step between: again */
		if (!boot_bracket(&lo2, &w2))
			break;
		if (lo2 > lo1 + w1 || lo1 > lo2 + w2 || lo1 > cur + boot_slack())
			continue;  /* a resume between, or not followed yet: again */
		int64_t rt_boot = rt_mono - cur, lo, hi;
		leap_span(r, rt_mono, &lo, &hi);
		/* the span in BOOTTIME, as the readers compare it */
		atomic_store_explicit(&fc_int_offsets.leap_lo, lo == hi ? 0 : lo + cur, memory_order_relaxed);
		atomic_store_explicit(&fc_int_offsets.leap_hi, lo == hi ? 0 : hi + cur, memory_order_relaxed);
		if (tai_ok)
			atomic_store_explicit(&fc_int_offsets.tai_boot_off, rt_boot + tai_s * NS_PER_S, memory_order_release);
		atomic_store_explicit(&fc_int_offsets.tai_ok, tai_ok, memory_order_release);
		atomic_store_explicit(&fc_int_offsets.rt_boot_off, rt_boot, memory_order_release);
		atomic_store_explicit(&fc_int_offsets.rt_full_mono, r - rt_mono, memory_order_relaxed);
		stored = true;
	}
	atomic_store_explicit(&m->rt_lock, 0, memory_order_release);
	return stored;
}

/* Whether the offsets stand as they are, with no system call on any
 * clocksource: REALTIME - MONOTONIC from the coarse clocks (the vDSO's data
 * page) is exactly the readers' sum, the leap span is the one this day's
 * end gives, and the last full refresh is less than RT_FULL_EVERY_NS old
 * (TAI - REALTIME can change alone, by adjtimex's ADJ_TAI, and a TAI
 * unreadable at start is tried again).  A step, a resume (REALTIME - MONOTONIC grows by the
 * time asleep), a leap second applied (the kernel steps REALTIME and TAI
 * together), a child in another time namespace: each changes the sum, and
 * the full refresh follows.  Where the coarse clocks are not exact (a
 * tick between in each try) it says no, and the full refresh reads. */
static bool rt_sum_current(int64_t *rt_mono, int64_t *r, int64_t *cur)
{
	if (coarse_rt_off(rt_mono, r) != 0)
		return false;
	int64_t rb = atomic_load_explicit(&fc_int_offsets.rt_boot_off, memory_order_acquire);
	*cur = atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed);
	return rb + *cur == *rt_mono;
}

static bool rt_offsets_current(void)
{
	int64_t rt_mono, r, cur, lo, hi;
	if (!rt_sum_current(&rt_mono, &r, &cur))
		return false;
	int64_t since_full = r - rt_mono - atomic_load_explicit(&fc_int_offsets.rt_full_mono, memory_order_relaxed);
	if (since_full >= RT_FULL_EVERY_NS || since_full < 0)
		return false;
	leap_span(r, rt_mono, &lo, &hi);
	return atomic_load_explicit(&fc_int_offsets.leap_lo, memory_order_relaxed) == (lo == hi ? 0 : lo + cur) &&
	       atomic_load_explicit(&fc_int_offsets.leap_hi, memory_order_relaxed) == (lo == hi ? 0 : hi + cur);
}

/* A check's look for a resume, before it vouches for the line: none when
 * REALTIME - MONOTONIC from the coarse clocks is still the readers' sum,
 * at no system call on any clocksource, for a resume grows it by the time
 * asleep (__timekeeping_inject_sleeptime, kernel/time/timekeeping.c, adds
 * that to REALTIME and to BOOTTIME's offset alike, MONOTONIC not), with
 * the counter standing still or running on.  Else the follow's brackets
 * (*mono their last MONOTONIC, else INT64_MIN), and when the sum still
 * differs after them (a step, a leap second: no resume), REALTIME's
 * offsets read afresh, so that the next check is cheap again. */
bool fc_int_check_follow(int64_t *mono)
{
	int64_t rt_mono, r, cur;
	*mono = INT64_MIN;
	if (rt_sum_current(&rt_mono, &r, &cur))
		return true;
	bool followed = fc_int_boot_follow_mono(mono);
	if (followed && !rt_sum_current(&rt_mono, &r, &cur))
		(void)fc_int_rt_refresh();
	return followed;
}

void fc_int_rt_check(uint64_t t)
{
	uint64_t due = atomic_load_explicit(&fc_int_offsets.rt_due, memory_order_relaxed);
	uint64_t next = t + atomic_load_explicit(&fc_int_offsets.rt_every, memory_order_relaxed);
	if ((int64_t)(t - due) < 0)
		return;
	/* one thread checks; the others keep the offset they have */
	if (!atomic_compare_exchange_strong_explicit(&fc_int_offsets.rt_due, &due, next, memory_order_relaxed,
	                                             memory_order_relaxed))
		return;
	if (!rt_offsets_current() && !fc_int_rt_refresh()) {
		/* nothing stored (a step or a resume in each attempt, or the
		 * refresher's lock busy): due again at the next read, not
		 * FC_STEP_CHECK_NS later */
		uint64_t mine = next;
		atomic_compare_exchange_strong_explicit(&fc_int_offsets.rt_due, &mine, due, memory_order_relaxed,
		                                        memory_order_relaxed);
	}
}

/* Kernel mode, at a read of REALTIME or TAI whose MONOTONIC is m: no
 * checks follow a resume's BOOTTIME - MONOTONIC there, so each thread
 * follows it when MONOTONIC moved FC_STEP_CHECK_NS past the last follow
 * (freezing and thawing the tasks around a suspend take longer); one
 * thread re-reads REALTIME's offset when MONOTONIC moved that much past
 * the last refresh.  A last time far ahead of m is another clock's (a
 * child in another time namespace): due too. */
void fc_int_offsets_due_kernel(int64_t m)
{
	int64_t since = m - atomic_load_explicit(&fc_int_offsets.boot_followed, memory_order_relaxed);
	if ((since >= FC_STEP_CHECK_NS || since < -FC_STEP_CHECK_NS) && fc_int_boot_follow())
		atomic_store_explicit(&fc_int_offsets.boot_followed, m, memory_order_relaxed);
	_Atomic int64_t *checked_ns = &fc_int_offsets.rt_checked_ns;
	int64_t last = atomic_load_explicit(checked_ns, memory_order_relaxed);
	if ((m - last >= FC_STEP_CHECK_NS || m - last < -FC_STEP_CHECK_NS) &&
	    atomic_compare_exchange_strong_explicit(checked_ns, &last, m, memory_order_relaxed, memory_order_relaxed) &&
	    !rt_offsets_current() && !fc_int_rt_refresh()) {
		int64_t mine = m;  /* nothing stored: due again at the next read */
		atomic_compare_exchange_strong_explicit(checked_ns, &mine, last, memory_order_relaxed, memory_order_relaxed);
	}
}

/* BOOTTIME - MONOTONIC afresh (start-up; a child in another time
 * namespace, where it may be lower): the low end of a bracket no wider
 * than FOLLOW_SLACK_NS if one of sixteen is, else of the narrowest, so
 * that BOOTTIME is never ahead of the kernel's and behind it by at most
 * that bracket; the slack the follows allow is set from it.  Only a
 * resume changes it from then on (fc_int_boot_follow): a raise that was
 * only a tighter bracket would move REALTIME, which is made from it, until
 * the next refresh moved it back. */
void fc_int_boot_start(void)
{
	int64_t lo, w;
	if (boot_narrow(16, FOLLOW_SLACK_NS, &lo, &w)) {
		atomic_store_explicit(&fc_int_offsets.boot_off, lo, memory_order_relaxed);
		atomic_store_explicit(&fc_int_offsets.boot_slack, w > FOLLOW_SLACK_NS / 2 ? 2 * w : FOLLOW_SLACK_NS,
		                      memory_order_relaxed);
	}
	fc_int_writer.boot_jumps_seen = atomic_load_explicit(&fc_int_offsets.boot_jumps, memory_order_relaxed);
}

/* A resume's time asleep (a bracket's low end above boot_off by more than
 * the slack), taken by one thread: the one whose compare-and-swap from the
 * boot_off it saw succeeds (every thread thawed finds it at once; two
 * raises to different values would move REALTIME twice).  boot_off goes
 * to what REALTIME - MONOTONIC grew since the offset to BOOTTIME was made
 * (the kernel adds the same time to both), which keeps REALTIME exactly
 * the kernel's, when that fits a narrow bracket at or below its low end
 * (never ahead of the kernel's BOOTTIME); else to the low end, and
 * REALTIME's offset is read again at once (until then REALTIME is behind
 * by at most the bracket, never ahead: a step that came too, or an offset
 * to BOOTTIME that no REALTIME read refreshed since a step). */
static void take_resume(void)
{
	int64_t s = boot_slack(), lo, w;
	int64_t before = atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed);
	int64_t rt_boot = atomic_load_explicit(&fc_int_offsets.rt_boot_off, memory_order_acquire);
	if (!boot_narrow(FOLLOW_TRIES, s, &lo, &w) || lo <= before + s)
		return;
	int64_t rt_mono, r, to = lo;
	bool exact;
	if (w <= s && rt_mono_now(&rt_mono, &r, &exact) && rt_mono - rt_boot >= lo - s && rt_mono - rt_boot <= lo)
		to = rt_mono - rt_boot;
	if (!atomic_compare_exchange_strong_explicit(&fc_int_offsets.boot_off, &before, to, memory_order_relaxed,
	                                             memory_order_relaxed))
		return;  /* another thread took it */
	atomic_fetch_add_explicit(&fc_int_offsets.boot_jumps, 1, memory_order_relaxed);
	if (to == lo)
		fc_int_rt_refresh();
}

/* Any thread, before it vouches for the line (a check) or serves past it:
 * a resume raised BOOTTIME - MONOTONIC (and REALTIME - MONOTONIC with it),
 * and the line may still be right for MONOTONIC, when the counter stood
 * still while the machine slept (QEMU 9 stops it in S3).  true when a
 * bracket no wider than the slack said nothing moved, or one found it grew
 * and it was taken; false when FOLLOW_TRIES brackets were all too wide to
 * say (the thread held up inside each: the next check looks again).  A
 * thread frozen in it takes nothing from before the freeze. */
bool fc_int_boot_follow_mono(int64_t *mono)
{
	int64_t s = boot_slack(), narrowest = INT64_MAX;
	*mono = INT64_MIN;
	for (int i = 0; i < FOLLOW_TRIES; i++) {
		int64_t lo, w;
		if (!boot_bracket_m(&lo, &w, mono))
			return true;  /* no BOOTTIME to follow */
		if (lo > atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed) + s) {
			take_resume();
			return true;
		}
		if (w <= s)
			return true;
		if (w < narrowest)
			narrowest = w;
	}
	/* Every bracket wider than the slack: the kernel's clock became slower
	 * to read (switched to hpet under the library), or this thread was
	 * held up inside each.  None rose above the slack, so the offset is
	 * within the slack plus the narrowest of what it was: up to
	 * FOLLOW_SLACK_MAX_NS the slack grows to twice that bracket (a resume
	 * adds far more); beyond, it cannot tell. */
	if (narrowest > FOLLOW_SLACK_MAX_NS / 2)
		return false;
	raise_i64(&fc_int_offsets.boot_slack, 2 * narrowest);
	return true;
}

bool fc_int_boot_follow(void)
{
	int64_t mono;
	return fc_int_boot_follow_mono(&mono);
}

/* The writer's look, once a second and when a re-anchor found a pause: the
 * follow, and whether a resume was taken since its last look (the
 * counter may have run while MONOTONIC stood still: the frequency's
 * baseline starts again). */
void fc_int_boot_refresh(void)
{
	(void)fc_int_boot_follow();
	unsigned jumps = atomic_load_explicit(&fc_int_offsets.boot_jumps, memory_order_relaxed);
	if (jumps != fc_int_writer.boot_jumps_seen)
		fc_int_writer.reset_base = true;
	fc_int_writer.boot_jumps_seen = jumps;
}

/* A forked child's look (fc_int_new_mm): the offsets it holds are another
 * clock's when BOOTTIME - MONOTONIC, or REALTIME - MONOTONIC (REALTIME is
 * not namespaced), is not what they make, beyond the slack: a time
 * namespace with other offsets (a resume or a step since is caught too,
 * and starting afresh is right for those as well). */
bool fc_int_offsets_moved(void)
{
	int64_t s = boot_slack(), lo, w, rt_mono, r;
	bool exact;
	int64_t rt_boot = atomic_load_explicit(&fc_int_offsets.rt_boot_off, memory_order_acquire);
	int64_t boot = atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed);
	if (boot_narrow(4, s, &lo, &w) && (lo > boot + s || lo + w < boot - s))
		return true;
	return rt_mono_now(&rt_mono, &r, &exact) && abs64(rt_mono - (rt_boot + boot)) > s;
}
