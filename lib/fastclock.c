/*
 * fastclock.c: libfastclock's clock (include/fastclock.h; the design is in
 * docs/fastclock.3, "HOW IT WORKS").
 *
 * The kernel's model, in user space: ns = ns0 + ((counter - tsc0) * mult +
 * frac0) >> 32, one such line for CLOCK_MONOTONIC and one for
 * CLOCK_MONOTONIC_RAW, published through a latch (two copies and a sequence
 * number, the kernel's seqcount_latch): a reader never waits, even in a
 * signal handler that interrupted the writer.  There is no thread: the
 * reader that finds the line due re-anchors it, if it wins a trylock.
 *
 * Never backwards, by construction, and without trusting any error bound:
 * each line is a function of the counter fixed when it is published,
 *
 *   F(t) = the line up to its end H (re-anchoring is due some time before
 *          H), then the line's value at H plus (t - H) at the slope less
 *          MAX_DOWN, for at most CAP_NS, then that value,
 *
 * which every reader of that copy follows, whatever the writer is doing
 * (preempted, its vCPU descheduled, dead in a forked child).  A new line
 * with slope m (never less than the old slope less MAX_DOWN) is started at
 * ta so that it is at or above F at ta and at F's two corners after ta;
 * F being concave and the new line straight, it is then above F for every
 * t >= ta, so nothing the old copy handed out, before or after the new one
 * is published, exceeds what the new one hands out later.  Kernel mode is
 * floored at F's final value.  This relies, like the kernel's own vDSO, on
 * the counters of all CPUs agreeing (checked by the kernel when its
 * clocksource is the TSC, and by `clockdoctor tsc` otherwise).
 */
#include "fastclock.h"

#include "counter.h"
#include "fastclock_trust.h"
#include "kclock.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>

#define NS_PER_S 1000000000LL

enum { L_COUNTER = 1 };

/* Tunables (docs/fastclock.3). */
#define MIN_INTERVAL_NS 10000000LL     /* re-anchor at least every 10 ms... */
#define MAX_INTERVAL_NS 250000000LL    /* ...and at most every 250 ms */
#define SYNC_BUDGET 1000               /* interval >= 1000 x a re-anchor's cost: <= 0.1 % */
#define END_AFTER_DUE_NS 1000000       /* H: the line proper ends 1 ms after it is due */
#define CAP_NS 10000000                /* the continuation past H lasts at most 10 ms */
#define MAX_DOWN 1e-4                  /* the continuation's, and a new line's, least slope:
                                          the slope less this (at most 1 us over CAP_NS) */
#define STEP_FORWARD_NS 100000         /* behind the kernel by more: step forward */
#define FAST_SLEW_ABOVE_NS 1000000     /* ahead by more: slew at up to 10 % */
#define SLEW_MAX 500e-6                /* the kernel's own adjtime rate */
#define FAST_SLEW_MAX 0.1
#define START_ERR_PPM 50.0             /* the frequency must be this good to start */
#define CALIB_STEP_NS 3000000LL        /* calibrating: re-measure every 3 ms */
#define CHECK_NS NS_PER_S              /* re-read the clocksource every second */
#define RECENT 8

struct seg_a {
	_Atomic int64_t ns0;
	_Atomic uint64_t frac0;
	_Atomic uint64_t mult;
};

struct copy_a {
	_Atomic uint64_t tsc0, soft, hard, capc;
	_Atomic uint32_t flags;
	_Atomic int64_t err;
	struct seg_a mono, raw;
};

struct seg {
	int64_t ns0;
	uint64_t frac0;  /* 2^-32 ns */
	uint64_t mult;   /* 2^-32 ns per count */
};

struct line {
	uint64_t tsc0;
	uint64_t soft;   /* counts after tsc0 at which a reader re-anchors (kernel mode: 0) */
	uint64_t hard;   /* counts after tsc0 at which the line proper ends: H (kernel mode:
	                    when to measure or check again) */
	uint64_t capc;   /* counts after H that the continuation lasts */
	uint32_t flags;
	int64_t err;     /* the bound reported by fc_info; kernel mode: 0 */
	struct seg mono, raw;  /* kernel mode: ns0 is the floor */
};

/* The zero state is kernel mode with soft 0: the first read of each kind
 * goes to the slow path, which initializes. */
static struct {
	_Alignas(64) atomic_uint seq;
	atomic_bool no_counter;  /* never execute the counter read (PR_SET_TSC, no TSC) */
	struct copy_a c[2];
} G;

/* Offsets to MONOTONIC, refreshed by readers (REALTIME) and re-anchors. */
static struct {
	_Alignas(64) _Atomic int64_t rt_off;
	_Atomic uint64_t rt_checked;  /* counter at the last check */
	_Atomic uint64_t rt_every;    /* counts between checks; 0 until known */
	_Atomic int64_t tai_off;
	atomic_bool tai_ok;           /* adjtimex told the TAI offset */
	_Atomic int64_t boot_off;     /* only ever raised */
	atomic_int rt_lock;           /* one refresher at a time, in order */
} O;

static atomic_int lock_word;

/* The writer's state: touched only with lock_word held. */
static struct {
	bool inited;
	struct fc_trust_facts facts;
	struct fc_trust trust;
	enum fc_source source;
	enum fc_reason reason;
	char reason_text[200];
	char freq_from[24];
	bool trusted;          /* the counter may be used (trust, and still) */
	bool permanent;        /* kernel mode for good: never re-check */
	double r_raw;          /* MONOTONIC_RAW ns per count */
	double r_err_ppm;
	bool declared;         /* r_raw is a declaration, not yet a measurement */
	double counts_per_ns;  /* rough, for scheduling */
	bool have_base, reset_base;
	int jump_run;          /* intervals in a row whose own rate disagreed */
	double jump_dev;
	uint64_t base_t, prev_t;
	int64_t base_raw, base_mono, base_w, prev_raw, prev_w;
	uint64_t syncs, backwards;
	int64_t last_sync_ns, interval_ns;
	uint64_t last_check_t;
	int64_t recent[RECENT];
	unsigned n_recent;
	bool have_boot;
	uint64_t test_writer_delay;  /* counts; FASTCLOCK_TEST_WRITER_DELAY_US (tests only) */
} W;

/* ---- the latch ---- */

static void store_copy(struct copy_a *c, const struct line *l)
{
	atomic_store_explicit(&c->tsc0, l->tsc0, memory_order_relaxed);
	atomic_store_explicit(&c->soft, l->soft, memory_order_relaxed);
	atomic_store_explicit(&c->hard, l->hard, memory_order_relaxed);
	atomic_store_explicit(&c->capc, l->capc, memory_order_relaxed);
	atomic_store_explicit(&c->flags, l->flags, memory_order_relaxed);
	atomic_store_explicit(&c->err, l->err, memory_order_relaxed);
	atomic_store_explicit(&c->mono.ns0, l->mono.ns0, memory_order_relaxed);
	atomic_store_explicit(&c->mono.frac0, l->mono.frac0, memory_order_relaxed);
	atomic_store_explicit(&c->mono.mult, l->mono.mult, memory_order_relaxed);
	atomic_store_explicit(&c->raw.ns0, l->raw.ns0, memory_order_relaxed);
	atomic_store_explicit(&c->raw.frac0, l->raw.frac0, memory_order_relaxed);
	atomic_store_explicit(&c->raw.mult, l->raw.mult, memory_order_relaxed);
}

static void load_copy(const struct copy_a *c, struct line *l)
{
	l->tsc0 = atomic_load_explicit(&c->tsc0, memory_order_relaxed);
	l->soft = atomic_load_explicit(&c->soft, memory_order_relaxed);
	l->hard = atomic_load_explicit(&c->hard, memory_order_relaxed);
	l->capc = atomic_load_explicit(&c->capc, memory_order_relaxed);
	l->flags = atomic_load_explicit(&c->flags, memory_order_relaxed);
	l->err = atomic_load_explicit(&c->err, memory_order_relaxed);
	l->mono.ns0 = atomic_load_explicit(&c->mono.ns0, memory_order_relaxed);
	l->mono.frac0 = atomic_load_explicit(&c->mono.frac0, memory_order_relaxed);
	l->mono.mult = atomic_load_explicit(&c->mono.mult, memory_order_relaxed);
	l->raw.ns0 = atomic_load_explicit(&c->raw.ns0, memory_order_relaxed);
	l->raw.frac0 = atomic_load_explicit(&c->raw.frac0, memory_order_relaxed);
	l->raw.mult = atomic_load_explicit(&c->raw.mult, memory_order_relaxed);
}

/* Readers use c[seq & 1].  The writer moves readers to the other copy,
 * rewrites this one, moves them back, and rewrites the other: each store of
 * seq is a release (the copy readers are sent to is complete) followed by a
 * release fence (a reader that saw any of the following stores sees seq
 * changed at its check, through its acquire fence). */
static void latch_write(const struct line *l)
{
	unsigned s = atomic_load_explicit(&G.seq, memory_order_relaxed);
	atomic_store_explicit(&G.seq, s + 1, memory_order_release);
	atomic_thread_fence(memory_order_release);
	store_copy(&G.c[s & 1], l);
	atomic_store_explicit(&G.seq, s + 2, memory_order_release);
	atomic_thread_fence(memory_order_release);
	store_copy(&G.c[(s + 1) & 1], l);
}

static unsigned current_line(struct line *l)
{
	unsigned s;
	do {
		s = atomic_load_explicit(&G.seq, memory_order_acquire);
		load_copy(&G.c[s & 1], l);
		atomic_thread_fence(memory_order_acquire);
	} while (atomic_load_explicit(&G.seq, memory_order_relaxed) != s);
	return s;
}

static inline uint64_t counter_now(void)
{
	return atomic_load_explicit(&G.no_counter, memory_order_relaxed) ? 0 : fc_counter_read();
}

static inline int64_t seg_at(int64_t ns0, uint64_t frac0, uint64_t mult, uint64_t d)
{
	unsigned __int128 p = (unsigned __int128)d * mult + frac0;
	return ns0 + (int64_t)(uint64_t)(p >> 32);
}

/* The same in 2^-32 ns units, exactly. */
typedef __int128 scaled;

static scaled seg_scaled(const struct seg *s, uint64_t d)
{
	return ((scaled)s->ns0 << 32) + (scaled)s->frac0 + (scaled)((unsigned __int128)d * s->mult);
}

static uint64_t slow_mult(uint64_t mult)
{
	return mult - (uint64_t)((double)mult * MAX_DOWN) - 1;
}

/* F(d) of the top of this file, scaled: the line, then the continuation,
 * then its last value.  A counter before tsc0 (negative d) is taken as
 * "after everything": the copy's reader computes it so. */
static scaled follow_scaled(const struct line *L, const struct seg *s, uint64_t d)
{
	if (d <= L->hard)
		return seg_scaled(s, d);
	uint64_t past = d - L->hard;
	if (past > L->capc)
		past = L->capc;
	return seg_scaled(s, L->hard) + (scaled)((unsigned __int128)past * slow_mult(s->mult));
}

static int64_t follow(const struct line *L, const struct seg *s, uint64_t d)
{
	return (int64_t)(follow_scaled(L, s, d) >> 32);
}

static bool trylock(void)
{
	int expected = 0;
	return atomic_compare_exchange_strong_explicit(&lock_word, &expected, 1, memory_order_acquire,
	                                               memory_order_relaxed);
}

static void unlock(void)
{
	atomic_store_explicit(&lock_word, 0, memory_order_release);
}

/* ---- kernel samples ---- */

struct sample {
	uint64_t t0, t1;  /* the counter around the kernel read */
	int64_t k;        /* the kernel's clock, read somewhere between */
};

static int sample_clock(clockid_t id, int tries, struct sample *best)
{
	uint64_t bw = UINT64_MAX;
	memset(best, 0, sizeof *best);
	for (int i = 0; i < tries; i++) {
		struct timespec ts;
		uint64_t t0 = fc_counter_read();
		int r = fc_kclock(id, &ts);
		uint64_t t1 = fc_counter_read();
		if (r != 0)
			return r;
		if (t1 - t0 < bw) {
			bw = t1 - t0;
			best->t0 = t0;
			best->t1 = t1;
			best->k = (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
		}
	}
	return 0;
}

static uint64_t mid(const struct sample *s)
{
	return s->t0 + (s->t1 - s->t0) / 2;
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

static uint64_t ns_to_counts(double ns)
{
	double c = ns * W.counts_per_ns;
	return c <= 0 ? 0 : c >= 1.8e19 ? UINT64_MAX : (uint64_t)c;
}

static uint64_t mult_of(double ns_per_count)
{
	return (uint64_t)(ns_per_count * 4294967296.0 + 0.5);
}

/* ---- offsets to MONOTONIC ---- */

/* REALTIME - MONOTONIC, exactly: the coarse clocks come from one snapshot
 * of the kernel's timekeeper, so their difference is the wall_to_monotonic
 * offset, the same as the fine clocks'.  The two MONOTONIC_COARSE reads
 * around the REALTIME_COARSE one must agree (no tick between).  TAI -
 * REALTIME from adjtimex, read at the same time so that a leap second
 * moves both together.  One refresher at a time, so that a slow one cannot
 * store an older offset over a newer one. */
static void rt_refresh(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong_explicit(&O.rt_lock, &expected, 1, memory_order_acquire,
	                                             memory_order_relaxed))
		return;
	bool done = false;
	for (int i = 0; i < 4 && !done; i++) {
		int64_t m1 = fc_kclock_ns(CLOCK_MONOTONIC_COARSE);
		int64_t r = fc_kclock_ns(CLOCK_REALTIME_COARSE);
		int64_t m2 = fc_kclock_ns(CLOCK_MONOTONIC_COARSE);
		if (m1 == INT64_MIN || r == INT64_MIN)
			break;
		if (m1 == m2) {
			atomic_store_explicit(&O.rt_off, r - m1, memory_order_relaxed);
			done = true;
		}
	}
	if (!done) {
		/* No coarse clocks: the fine ones, to within a read. */
		int64_t m = fc_kclock_ns(CLOCK_MONOTONIC), r = fc_kclock_ns(CLOCK_REALTIME);
		if (m != INT64_MIN && r != INT64_MIN)
			atomic_store_explicit(&O.rt_off, r - m, memory_order_relaxed);
	}
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	int saved = errno;
	bool ok = adjtimex(&tx) >= 0;
	errno = saved;
	if (ok)
		atomic_store_explicit(&O.tai_off, (int64_t)tx.tai * NS_PER_S, memory_order_relaxed);
	atomic_store_explicit(&O.tai_ok, ok, memory_order_relaxed);
	atomic_store_explicit(&O.rt_lock, 0, memory_order_release);
}

static void rt_check(uint64_t t)
{
	uint64_t last = atomic_load_explicit(&O.rt_checked, memory_order_relaxed);
	uint64_t every = atomic_load_explicit(&O.rt_every, memory_order_relaxed);
	if (t - last < every && every != 0)
		return;
	/* one thread checks; the others keep the offset they have */
	if (!atomic_compare_exchange_strong_explicit(&O.rt_checked, &last, t, memory_order_relaxed,
	                                             memory_order_relaxed))
		return;
	rt_refresh();
}

/* BOOTTIME - MONOTONIC grows only (time asleep).  The tightest of four
 * brackets "MONOTONIC, BOOTTIME, MONOTONIC" gives a low end the offset is
 * at or above; the low end is used, and only ever raised, so BOOTTIME is
 * never ahead of the kernel's and never goes back.  A raise by more than a
 * bracket is a resume: the counter kept running while MONOTONIC stood
 * still, so the frequency's baseline starts again. */
static void boot_refresh(void)
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
	int64_t cur = atomic_load_explicit(&O.boot_off, memory_order_relaxed);
	if (!W.have_boot || best_lo > cur) {
		if (W.have_boot && best_lo > cur + best_w + 1000)
			W.reset_base = true;
		atomic_store_explicit(&O.boot_off, best_lo, memory_order_relaxed);
		W.have_boot = true;
	}
}

/* The rate the kernel gives MONOTONIC, as a factor on the raw clock's:
 * second_length / 10^9 with second_length = tick * 1000 * USER_HZ + freq
 * (kernel/time/ntp.c, ntp_update_frequency), plus what second_overflow
 * adds on top: the PLL's phase chunk, time_offset >> (SHIFT_PLL +
 * time_constant) a second (adjtimex reports time_constant as it uses it),
 * and adjtime()'s slew, up to 500 us a second.  0 when adjtimex cannot be
 * read. */
static double ntp_factor(void)
{
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	int saved = errno;
	int r = adjtimex(&tx);
	if (r < 0 || tx.tick <= 0) {
		errno = saved;
		return 0;
	}
	double ns_per_s = (double)tx.tick * 1e5 + (double)tx.freq * 1000.0 / 65536.0;
	if ((tx.status & STA_PLL) && !(tx.status & STA_FLL) && tx.offset != 0) {
		double off_ns = (double)tx.offset * ((tx.status & STA_NANO) ? 1.0 : 1000.0);
		long shift = 2 + tx.constant;
		if (shift >= 0 && shift < 60)
			ns_per_s += off_ns / (double)(1ull << shift);
	}
	struct timex adj;
	memset(&adj, 0, sizeof adj);
	adj.modes = ADJ_OFFSET_SS_READ;
	if (adjtimex(&adj) >= 0 && adj.offset != 0) {
		long us = adj.offset > 500 ? 500 : adj.offset < -500 ? -500 : adj.offset;
		ns_per_s += (double)us * 1000.0;
	}
	errno = saved;
	return ns_per_s / 1e9;
}

/* ---- re-anchoring (lock held) ---- */

static void set_source(enum fc_source s, enum fc_reason r, const char *text)
{
	W.source = s;
	W.reason = r;
	snprintf(W.reason_text, sizeof W.reason_text, "%s", text);
}

/* Kernel mode from now on, floored at the old copy's last value (which its
 * readers may still be handing out). */
static void go_kernel(const struct line *L, enum fc_reason r, const char *text, bool permanent)
{
	struct line k;
	memset(&k, 0, sizeof k);
	k.tsc0 = counter_now();
	k.flags = 0;
	if (L->flags & L_COUNTER) {
		k.mono.ns0 = follow(L, &L->mono, UINT64_MAX) + 1;
		k.raw.ns0 = follow(L, &L->raw, UINT64_MAX) + 1;
	} else {
		k.mono.ns0 = L->mono.ns0;
		k.raw.ns0 = L->raw.ns0;
	}
	W.permanent = permanent;
	k.soft = 0;  /* every read takes the slow path, which reads the kernel */
	k.hard = permanent ? UINT64_MAX : ns_to_counts(10.0 * NS_PER_S);
	set_source(FC_SOURCE_KERNEL, r, text);
	latch_write(&k);
}

static void new_base(const struct sample *sr, const struct sample *sm, int64_t w)
{
	W.have_base = true;
	W.reset_base = false;
	W.base_t = W.prev_t = mid(sr);
	W.base_raw = W.prev_raw = sr->k;
	W.base_mono = sm->k;
	W.base_w = W.prev_w = w;
}

/* The raw rate, measured against MONOTONIC_RAW over a baseline that grows
 * from the start.  The last interval's own rate is checked against the
 * estimate: a disagreement beyond both uncertainties and 0.1 % means the
 * counter jumped (a migration, a resume), and the baseline starts again,
 * with the estimate distrusted so that the next measurement replaces it.
 * A declared frequency is replaced as soon as a measurement disagrees with
 * it by more than their uncertainties. */
static void update_frequency(const struct sample *sr, const struct sample *sm)
{
	int64_t w = (int64_t)((double)(sr->t1 - sr->t0) / W.counts_per_ns);
	uint64_t t = mid(sr);
	if (!W.have_base || W.reset_base || t <= W.base_t || t <= W.prev_t) {
		if (W.have_base && (t <= W.base_t || t <= W.prev_t))
			W.backwards++;
		new_base(sr, sm, w);
		return;
	}
	double span_l = (double)(t - W.prev_t), dk_l = (double)(sr->k - W.prev_raw);
	if (dk_l > 100000 && W.r_raw > 0) {
		double r_l = dk_l / span_l;
		double err_l = (double)(W.prev_w + w) / 2.0 / dk_l;
		double dev = r_l / W.r_raw - 1;
		double adev = dev < 0 ? -dev : dev;
		if (adev > 1e-3 && adev > 3 * err_l + W.r_err_ppm * 1e-6) {
			/* Once: the counter (or the clock) jumped in this interval
			 * (a migration, a resume, an emulator's jitter): start the
			 * baseline again and keep the rate.  Three intervals in a row
			 * that agree with each other: the rate itself is wrong (a
			 * wrong declared frequency): take the measured one. */
			double ddev = dev - W.jump_dev;
			if (ddev < 0)
				ddev = -ddev;
			bool same = W.jump_run > 0 && (dev > 0) == (W.jump_dev > 0) && ddev < 0.2 * adev;
			W.jump_run = same ? W.jump_run + 1 : 1;
			W.jump_dev = dev;
			if (W.jump_run >= 3) {
				W.r_raw = r_l;
				W.r_err_ppm = (err_l + ddev) * 1e6;
				W.declared = true;  /* replaced again by the next better measurement */
				W.counts_per_ns = 1.0 / r_l;
				W.jump_run = 0;
				snprintf(W.freq_from, sizeof W.freq_from, "measured");
			}
			new_base(sr, sm, w);
			return;
		}
	}
	W.jump_run = 0;
	W.prev_t = t;
	W.prev_raw = sr->k;
	W.prev_w = w;
	double dk = (double)(sr->k - W.base_raw);
	if (dk <= 0)
		return;
	double r = dk / (double)(t - W.base_t);
	double err_ppm = (double)(W.base_w + w) / 2.0 / dk * 1e6 + 0.001;
	double dev_ppm = (r / W.r_raw - 1) * 1e6;
	if (dev_ppm < 0)
		dev_ppm = -dev_ppm;
	bool disagrees = W.declared && dev_ppm > W.r_err_ppm + 3 * err_ppm;
	if (err_ppm < W.r_err_ppm || W.r_raw == 0 || disagrees) {
		W.r_raw = r;
		W.r_err_ppm = err_ppm;
		W.declared = false;
		W.counts_per_ns = 1.0 / r;
		snprintf(W.freq_from, sizeof W.freq_from, "measured");
	}
}

/* The error bound reported for a new line: what it is off at the anchor,
 * the sample's half-width, the frequency's uncertainty over the line's
 * life, and the largest error seen at the last anchors (which covers the
 * kernel's slews that the model does not see).  Only reported: nothing
 * that keeps the clock from going backwards depends on it. */
static int64_t line_error(int64_t e_now, int64_t half_width, uint64_t hard_counts)
{
	double drift = W.r_err_ppm * 1e-6 * (double)hard_counts * W.r_raw;
	int64_t err = abs64(e_now) + half_width + (int64_t)drift + 2;
	W.recent[W.n_recent++ % RECENT] = abs64(e_now) + half_width;
	unsigned n = W.n_recent < RECENT ? W.n_recent : RECENT;
	for (unsigned i = 0; i < n; i++)
		if (W.recent[i] + half_width + 2 > err)
			err = W.recent[i] + half_width + 2;
	return err;
}

/* The slope that absorbs the error e (ns, positive: the line is ahead)
 * over max(the line's life, |e| / the slew limit). */
static double slewed(double target, int64_t e, int64_t life_ns)
{
	double limit = abs64(e) > FAST_SLEW_ABOVE_NS ? FAST_SLEW_MAX : SLEW_MAX;
	double horizon = (double)life_ns;
	if ((double)abs64(e) / limit > horizon)
		horizon = (double)abs64(e) / limit;
	return target * (1.0 - (double)e / horizon);
}

/* Starts seg n (slope n->mult set) at ta, at or above the old copy's F for
 * every t >= ta (see the top of this file), and at or above floor_s. */
static void start_seg(struct seg *n, const struct line *L, const struct seg *o, uint64_t ta, scaled floor_s)
{
	scaled base = floor_s;
	if (L->flags & L_COUNTER) {
		uint64_t d = ta - L->tsc0;
		if ((int64_t)d < 0)
			d = UINT64_MAX;  /* the counter went back: F's end */
		uint64_t corners[3] = { d, L->hard, L->hard + L->capc };
		for (int i = 0; i < 3; i++) {
			uint64_t p = corners[i];
			if (p < d)
				continue;
			scaled need = follow_scaled(L, o, p) + 1;
			if (p != UINT64_MAX)
				need -= (scaled)((unsigned __int128)(p - d) * n->mult);
			if (need > base)
				base = need;
		}
	}
	n->ns0 = (int64_t)(base >> 32);
	n->frac0 = (uint64_t)(base & 0xffffffff);
}

/* Re-anchors.  seen is the sequence number of the copy that made the caller
 * decide; if another thread re-anchored since, there is nothing to do. */
static void resync(unsigned seen, bool force_hard)
{
	struct line L;
	unsigned s = current_line(&L);
	if (seen != s && !force_hard)
		return;
	uint64_t now = fc_counter_read();

	if (W.trusted && (now - W.last_check_t) >= ns_to_counts(CHECK_NS)) {
		char why[160];
		W.last_check_t = now;
		if (!fc_trust_still(&W.facts, &W.trust, why, sizeof why)) {
			W.trusted = false;
			go_kernel(&L, FC_REASON_KERNEL_LEFT, why, true);
			return;
		}
		boot_refresh();
	}
	if (!W.trusted) {
		go_kernel(&L, W.reason, W.reason_text, true);
		return;
	}
	struct sample sm = { 0, 0, 0 }, sr = { 0, 0, 0 };
	uint64_t c0 = fc_counter_read();
	if (sample_clock(CLOCK_MONOTONIC, 4, &sm) != 0 || sample_clock(CLOCK_MONOTONIC_RAW, 3, &sr) != 0) {
		W.trusted = false;
		go_kernel(&L, FC_REASON_KERNEL_CLOCK_FAILED, "the kernel's CLOCK_MONOTONIC could not be read", true);
		return;
	}
	double factor = ntp_factor();
	uint64_t c1 = fc_counter_read();
	update_frequency(&sr, &sm);
	if (factor <= 0) {
		/* no adjtimex: MONOTONIC's own rate against RAW over the base */
		factor = W.have_base && sr.k > W.base_raw ? (double)(sm.k - W.base_mono) / (double)(sr.k - W.base_raw)
		                                           : 1.0;
		if (factor <= 0.9 || factor >= 1.1)
			factor = 1.0;
	}
	double target = W.r_raw * factor;

	/* the period: a re-anchor costs at most 1/SYNC_BUDGET of the time */
	int64_t cost_ns = (int64_t)((double)(c1 - c0) / W.counts_per_ns);
	int64_t interval = cost_ns * SYNC_BUDGET;
	interval = interval < MIN_INTERVAL_NS ? MIN_INTERVAL_NS : interval > MAX_INTERVAL_NS ? MAX_INTERVAL_NS : interval;
	W.interval_ns = interval;
	W.last_sync_ns = sm.k;

	bool counter_mode = (L.flags & L_COUNTER) != 0;
	if (W.r_err_ppm > START_ERR_PPM && !counter_mode) {
		/* still calibrating: stay on the kernel's clock, measure again soon */
		struct line k = L;
		k.flags = 0;
		k.tsc0 = fc_counter_read();
		k.soft = 0;
		k.hard = ns_to_counts(CALIB_STEP_NS);
		latch_write(&k);
		return;
	}

	int64_t life_ns = interval + END_AFTER_DUE_NS;
	int64_t half_m = (int64_t)((double)(sm.t1 - sm.t0) * W.r_raw / 2) + 1;
	int64_t half_r = (int64_t)((double)(sr.t1 - sr.t0) * W.r_raw / 2) + 1;
	struct line N;
	memset(&N, 0, sizeof N);
	N.flags = L_COUNTER;
	N.soft = ns_to_counts((double)interval);
	N.hard = ns_to_counts((double)life_ns);
	N.capc = ns_to_counts(CAP_NS);
	W.syncs++;
	set_source(FC_SOURCE_COUNTER, W.trust.reason, W.trust.text);

	uint64_t dm = mid(&sm) - L.tsc0, dr = mid(&sr) - L.tsc0;
	bool expired = !counter_mode || force_hard || (now - L.tsc0) >= L.hard || dm >= L.hard || dr >= L.hard;
	int64_t em = 0, er = 0;
	if (!expired) {
		em = seg_at(L.mono.ns0, L.mono.frac0, L.mono.mult, dm) - sm.k;
		er = seg_at(L.raw.ns0, L.raw.frac0, L.raw.mult, dr) - sr.k;
		if (em < -STEP_FORWARD_NS || er < -STEP_FORWARD_NS)
			expired = true;  /* far behind: a forward step is allowed */
	}
	double m_new = expired ? target : slewed(target, em, life_ns);
	double r_new = expired ? W.r_raw : slewed(W.r_raw, er, life_ns);
	N.mono.mult = mult_of(m_new);
	N.raw.mult = mult_of(r_new);
	if (counter_mode) {
		/* never below the old copy's continuation slope */
		if (N.mono.mult <= slow_mult(L.mono.mult))
			N.mono.mult = slow_mult(L.mono.mult) + 1;
		if (N.raw.mult <= slow_mult(L.raw.mult))
			N.raw.mult = slow_mult(L.raw.mult) + 1;
	}
	if (W.test_writer_delay) {
		/* tests: the writer held up, as a preempted thread would be */
		uint64_t until = fc_counter_read() + W.test_writer_delay;
		while (fc_counter_read() < until)
			fc_cpu_relax();
	}
	uint64_t ta = fc_counter_read();
	N.tsc0 = ta;
	/* A hard start is "ahead" of the kernel: at the sample's first counter
	 * read the kernel's value was at most k; kernel mode adds its floor. */
	scaled fm = 0, fr = 0;
	if (!expired) {
		/* slewing: from the old line itself at ta, even when the writer
		 * was held up past its end and readers are on the (slower)
		 * continuation: a step forward back onto the line */
		fm = seg_scaled(&L.mono, ta - L.tsc0);
		fr = seg_scaled(&L.raw, ta - L.tsc0);
	} else {
		fm = ((scaled)(sm.k + (int64_t)((double)(ta - sm.t0) * target) + 1)) << 32;
		fr = ((scaled)(sr.k + (int64_t)((double)(ta - sr.t0) * W.r_raw) + 1)) << 32;
	}
	if (!counter_mode) {
		if (((scaled)L.mono.ns0 << 32) > fm)
			fm = (scaled)L.mono.ns0 << 32;
		if (((scaled)L.raw.ns0 << 32) > fr)
			fr = (scaled)L.raw.ns0 << 32;
	}
	start_seg(&N.mono, &L, &L.mono, ta, fm);
	start_seg(&N.raw, &L, &L.raw, ta, fr);
	int64_t e_m = N.mono.ns0 - (sm.k + (int64_t)((double)(ta - mid(&sm)) * target));
	int64_t e_r = N.raw.ns0 - (sr.k + (int64_t)((double)(ta - mid(&sr)) * W.r_raw));
	int64_t worst = abs64(e_m) > abs64(e_r) ? e_m : e_r;
	/* plus what the continuation may lose if this line's writer is held
	 * up past its end: MAX_DOWN x CAP_NS */
	N.err = line_error(worst, half_m > half_r ? half_m : half_r, N.hard) + (int64_t)(MAX_DOWN * CAP_NS);
	latch_write(&N);
}

/* ---- start ---- */

static void child_after_fork(void)
{
	/* Only this thread exists now.  A writer in another thread may have
	 * been stopped half-way: its lock is released, and the copy readers use
	 * is copied over the other, which it may have left half-written. */
	struct line l;
	unsigned s = atomic_load_explicit(&G.seq, memory_order_relaxed);
	load_copy(&G.c[s & 1], &l);
	store_copy(&G.c[(s + 1) & 1], &l);
	if (s & 1)
		atomic_store_explicit(&G.seq, s + 1, memory_order_relaxed);
	atomic_store_explicit(&lock_word, 0, memory_order_relaxed);
	atomic_store_explicit(&O.rt_lock, 0, memory_order_relaxed);
}

static void init_locked(void)
{
	W.inited = true;
	fc_kclock_init();
	fc_trust_gather(&W.facts);
	fc_trust_judge(&W.facts, &W.trust);
	if (W.facts.counter_usable != 0)
		atomic_store_explicit(&G.no_counter, true, memory_order_relaxed);
	W.trusted = W.trust.use_counter;
	snprintf(W.freq_from, sizeof W.freq_from, "%s", W.facts.freq_from);
	pthread_atfork(NULL, NULL, child_after_fork);
	rt_refresh();
	boot_refresh();

	struct line zero;
	memset(&zero, 0, sizeof zero);
	if (!W.trusted) {
		go_kernel(&zero, W.trust.reason, W.trust.text, true);
		return;
	}
	/* A rough rate for scheduling, and the base of the measured one. */
	if (W.facts.declared_hz > 0) {
		W.r_raw = 1e9 / W.facts.declared_hz;
		W.r_err_ppm = W.facts.declared_err_ppm;
		W.declared = true;
	} else {
		struct sample a = { 0, 0, 0 }, b = { 0, 0, 0 };
		if (sample_clock(CLOCK_MONOTONIC_RAW, 3, &a) != 0) {
			W.trusted = false;
			go_kernel(&zero, FC_REASON_KERNEL_CLOCK_FAILED, "the kernel's CLOCK_MONOTONIC_RAW could not be read",
			          true);
			return;
		}
		do {  /* 50 us: a rate good to about 0.1 %, enough to schedule by */
			if (sample_clock(CLOCK_MONOTONIC_RAW, 1, &b) != 0)
				break;
		} while (b.k - a.k < 50000);
		if (b.k - a.k < 50000 || mid(&b) <= mid(&a)) {
			W.trusted = false;
			go_kernel(&zero, FC_REASON_NO_FREQUENCY, "the counter's rate could not be measured", true);
			return;
		}
		W.r_raw = (double)(b.k - a.k) / (double)(mid(&b) - mid(&a));
		W.r_err_ppm = 1e9;  /* not good enough to start on: calibrate */
	}
	W.counts_per_ns = 1.0 / W.r_raw;
	O.rt_every = ns_to_counts(FC_STEP_CHECK_NS);
	const char *delay = secure_getenv("FASTCLOCK_TEST_WRITER_DELAY_US");
	if (delay && *delay) {
		long us = strtol(delay, NULL, 10);
		if (us > 0 && us <= 1000000)
			W.test_writer_delay = ns_to_counts(1000.0 * (double)us);
	}
	W.last_check_t = fc_counter_read();
	latch_write(&zero);
	resync(0, true);
}

static void ensure_init(void)
{
	if (trylock()) {
		if (!W.inited)
			init_locked();
		unlock();
	}
}

__attribute__((constructor)) static void fc_constructor(void)
{
	ensure_init();
}

/* ---- reading ---- */

enum which { MONO, RAW };

/* Everything but the fast case: due, past the line's end, kernel mode, not
 * started. */
__attribute__((noinline)) static int64_t slow(enum which w, int *kernel_mode)
{
	clockid_t id = w == MONO ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_RAW;
	for (int round = 0;; round++) {
		struct line L;
		unsigned s;
		uint64_t t;
		do {
			s = atomic_load_explicit(&G.seq, memory_order_acquire);
			load_copy(&G.c[s & 1], &L);
			t = counter_now();
			atomic_thread_fence(memory_order_acquire);
		} while (atomic_load_explicit(&G.seq, memory_order_relaxed) != s);
		const struct seg *sg = w == MONO ? &L.mono : &L.raw;
		uint64_t d = t - L.tsc0;
		if (!(L.flags & L_COUNTER)) {
			*kernel_mode = 1;
			/* kernel mode: hard is when to look again (calibration) */
			if (round == 0 && d >= L.hard && trylock()) {
				if (!W.inited)
					init_locked();
				else if (!W.permanent && atomic_load_explicit(&G.seq, memory_order_relaxed) == s)
					resync(s, false);
				unlock();
				continue;  /* read again: the source may have changed */
			}
			int64_t k = fc_kclock_ns(id);
			/* the floor; a copy replaced meanwhile may have a higher one */
			if (k < sg->ns0)
				k = sg->ns0;
			return k;
		}
		*kernel_mode = 0;
		if (d < L.soft || round > 2)
			return follow(&L, sg, d);
		/* due, or past the line's end: re-anchor if nobody else is */
		if (trylock()) {
			if ((int64_t)d < 0)
				W.backwards++;
			resync(s, false);  /* it tells a due line from an expired one */
			unlock();
			continue;
		}
		/* someone is re-anchoring: this copy's F, whatever it does */
		return follow(&L, sg, d);
	}
}

/* The fast path, inlined into each entry point: true with *v set, or false
 * when the slow path must answer (due, expired, kernel mode).  No pointer
 * to a local escapes, so the callers need no stack frame. */
static inline __attribute__((always_inline)) bool fast_read(bool ordered, bool raw, uint64_t *tp, int64_t *v)
{
	unsigned s;
	uint64_t tsc0, soft, frac0, mult, t;
	int64_t ns0;
	if (__builtin_expect(atomic_load_explicit(&G.no_counter, memory_order_relaxed), 0))
		return false;  /* reading it would fault, or there is none */
	do {
		/* The counter first: its latency then overlaps the loads below,
		 * which the lfence would otherwise wait for.  Reading it before
		 * the parameters is safe: a value older than the line they
		 * describe gives a negative delta, which the slow path reads
		 * again in the other order. */
		t = ordered ? fc_counter_read() : fc_counter_read_unordered();
		s = atomic_load_explicit(&G.seq, memory_order_acquire);
		const struct copy_a *c = &G.c[s & 1];
		/* one base register for the five loads: otherwise the compiler
		 * hoists five field addresses into callee-saved registers, and
		 * saving them costs more than the loads */
		__asm__("" : "+r"(c));
		tsc0 = atomic_load_explicit(&c->tsc0, memory_order_relaxed);
		soft = atomic_load_explicit(&c->soft, memory_order_relaxed);
		const struct seg_a *sg = raw ? &c->raw : &c->mono;
		ns0 = atomic_load_explicit(&sg->ns0, memory_order_relaxed);
		frac0 = atomic_load_explicit(&sg->frac0, memory_order_relaxed);
		mult = atomic_load_explicit(&sg->mult, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
	} while (atomic_load_explicit(&G.seq, memory_order_relaxed) != s);
	*tp = t;
	uint64_t d = t - tsc0;
	if (__builtin_expect(d >= soft, 0))
		return false;
	*v = seg_at(ns0, frac0, mult, d);
	return true;
}

static inline __attribute__((always_inline)) bool fast_mono(bool ordered, uint64_t *tp, int64_t *v)
{
	return fast_read(ordered, false, tp, v);
}

__attribute__((noinline)) static int64_t slow_mono(void)
{
	int km;
	return slow(MONO, &km);
}

static inline int64_t read_mono(bool ordered, int *kernel_mode, uint64_t *tp)
{
	int64_t v;
	if (fast_mono(ordered, tp, &v)) {
		*kernel_mode = 0;
		return v;
	}
	v = slow(MONO, kernel_mode);
	*tp = *kernel_mode ? 0 : counter_now();
	return v;
}

int64_t fc_now_ns(void)
{
	uint64_t t;
	int64_t v;
	if (__builtin_expect(fast_mono(true, &t, &v), 1))
		return v;
	return slow_mono();
}

int64_t fc_now_ns_unordered(void)
{
	uint64_t t;
	int64_t v;
	if (__builtin_expect(fast_mono(false, &t, &v), 1))
		return v;
	return slow_mono();
}

/* The REALTIME offset is re-read every FC_STEP_CHECK_NS, timed by the
 * counter, or in kernel mode by MONOTONIC itself. */
static void offsets_due(int kernel_mode, uint64_t t, int64_t m)
{
	if (!kernel_mode) {
		if (t - atomic_load_explicit(&O.rt_checked, memory_order_relaxed) >=
		    atomic_load_explicit(&O.rt_every, memory_order_relaxed))
			rt_check(t);
		return;
	}
	static _Atomic int64_t checked_ns;
	int64_t last = atomic_load_explicit(&checked_ns, memory_order_relaxed);
	if (m - last >= FC_STEP_CHECK_NS &&
	    atomic_compare_exchange_strong_explicit(&checked_ns, &last, m, memory_order_relaxed, memory_order_relaxed))
		rt_refresh();
}

/* MONOTONIC plus the REALTIME offset, in both modes: in kernel mode,
 * MONOTONIC is the kernel's floored at the last line, so the wall clock
 * does not go back either when the library leaves the counter. */
int64_t fc_realtime_ns(void)
{
	int km;
	uint64_t t = 0;
	int64_t m = read_mono(true, &km, &t);
	offsets_due(km, t, m);
	return m + atomic_load_explicit(&O.rt_off, memory_order_relaxed);
}

static int64_t read_raw(int *kernel_mode)
{
	uint64_t t;
	int64_t v;
	if (fast_read(true, true, &t, &v)) {
		*kernel_mode = 0;
		return v;
	}
	return slow(RAW, kernel_mode);
}

int fc_gettime(clockid_t clock, struct timespec *ts)
{
	if (!ts)
		return -EFAULT;
	int km = 0;
	uint64_t t = 0;
	int64_t v;
	switch (clock) {
	case CLOCK_MONOTONIC:
		v = read_mono(true, &km, &t);
		break;
	case CLOCK_REALTIME:
		v = fc_realtime_ns();
		break;
	case CLOCK_BOOTTIME:
		v = read_mono(true, &km, &t) + atomic_load_explicit(&O.boot_off, memory_order_relaxed);
		if (km) {
			/* the kernel's (it knows of a resume at once), floored */
			int64_t k = fc_kclock_ns(CLOCK_BOOTTIME);
			if (k > v)
				v = k;
		}
		break;
	case CLOCK_TAI:
		if (!atomic_load_explicit(&O.tai_ok, memory_order_relaxed))
			return fc_kclock(clock, ts);  /* adjtimex denied: no TAI offset */
		v = read_mono(true, &km, &t);
		offsets_due(km, t, v);
		v += atomic_load_explicit(&O.rt_off, memory_order_relaxed) +
		     atomic_load_explicit(&O.tai_off, memory_order_relaxed);
		break;
	case CLOCK_MONOTONIC_RAW:
		v = read_raw(&km);
		break;
	default:
		return fc_kclock(clock, ts);
	}
	ts->tv_sec = v / NS_PER_S;
	ts->tv_nsec = v % NS_PER_S;
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += NS_PER_S;
		ts->tv_sec--;
	}
	return 0;
}

int64_t fc_coarse_ns(void)
{
	return fc_kclock_ns(CLOCK_MONOTONIC_COARSE);
}

uint64_t fc_cycles(void)
{
	return fc_counter_read_unordered();
}

int64_t fc_cycles_to_ns(uint64_t cycles)
{
	struct line L;
	current_line(&L);
	if (!(L.flags & L_COUNTER) || (int64_t)cycles < 0)
		return 0;
	return (int64_t)(uint64_t)(((unsigned __int128)cycles * L.mono.mult) >> 32);
}

int64_t fc_elapsed_ns(int64_t start_ns)
{
	int64_t d = fc_now_ns() - start_ns;
	return d < 0 ? 0 : d;
}

/* ---- saying what it does ---- */

int fc_info(struct fc_info *info)
{
	if (!info)
		return -EINVAL;
	(void)fc_now_ns();  /* starts the library, and a due re-anchor */
	/* A re-anchor holds the lock a few microseconds; one this thread
	 * interrupted (a signal handler) would hold it for ever: give up. */
	int spins = 0;
	while (!trylock()) {
		if (++spins > 20000)
			return -EAGAIN;
		fc_cpu_relax();
	}
	if (!W.inited)
		init_locked();
	memset(info, 0, sizeof *info);
	struct line L;
	current_line(&L);
	info->source = (L.flags & L_COUNTER) ? FC_SOURCE_COUNTER : FC_SOURCE_KERNEL;
	if (info->source == FC_SOURCE_KERNEL && W.trusted) {
		/* trusted, but the frequency is not yet measured well enough */
		info->reason = W.trust.reason;
		snprintf(info->reason_text, sizeof info->reason_text, "%.150s; measuring the counter's frequency first",
		         W.trust.text);
	} else {
		info->reason = W.reason;
		snprintf(info->reason_text, sizeof info->reason_text, "%s", W.reason_text);
	}
	const char *cs = fc_trust_counter_clocksource(W.facts.counter_kind);
	snprintf(info->counter, sizeof info->counter, "%s",
	         W.facts.counter_kind == FC_COUNTER_ARM64_CNTVCT ? "cntvct_el0" : cs ? cs : "none");
	snprintf(info->kernel_clocksource, sizeof info->kernel_clocksource, "%s", W.facts.clocksource);
	info->kernel_vdso_fast = W.trust.vdso_fast;
	if (info->source == FC_SOURCE_COUNTER) {
		info->counter_hz = W.r_raw > 0 ? 1e9 / W.r_raw : 0;
		snprintf(info->freq_from, sizeof info->freq_from, "%s", W.freq_from);
		info->freq_err_ppm = W.r_err_ppm;
		info->error_bound_ns = L.err;
	}
	info->last_sync_ns = W.last_sync_ns;
	info->sync_interval_ns = W.interval_ns;
	info->syncs = W.syncs;
	info->counter_backwards = W.backwards;
	info->verdict = W.facts.verdict;
	unlock();
	return 0;
}

int fc_resync(void)
{
	ensure_init();
	if (!trylock())
		return -EBUSY;
	int r = 0;
	struct line L;
	if (!W.trusted)
		r = -ENOTSUP;
	else
		resync(current_line(&L), false);
	unlock();
	return r;
}

const char *fc_source_name(enum fc_source source)
{
	return source == FC_SOURCE_COUNTER ? "counter" : "kernel";
}

const char *fc_reason_name(enum fc_reason reason)
{
	switch (reason) {
	case FC_REASON_KERNEL_USES_COUNTER: return "kernel-uses-counter";
	case FC_REASON_VERIFIED: return "verified";
	case FC_REASON_FORCED: return "forced";
	case FC_REASON_OFF: return "off";
	case FC_REASON_NO_COUNTER: return "no-counter";
	case FC_REASON_NOT_INVARIANT: return "not-invariant";
	case FC_REASON_UNVERIFIED: return "unverified";
	case FC_REASON_VERDICT_UNSOUND: return "verdict-unsound";
	case FC_REASON_KERNEL_LEFT: return "kernel-left";
	case FC_REASON_NO_SYSFS: return "no-sysfs";
	case FC_REASON_NO_FREQUENCY: return "no-frequency";
	case FC_REASON_KERNEL_CLOCK_FAILED: return "kernel-clock-failed";
	case FC_REASON_UNSUPPORTED: return "unsupported";
	}
	return "unknown";
}
