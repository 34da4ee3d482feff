/*
 * fastclock_sync.c: libfastclock's writer: samples of the kernel's clocks,
 * the offsets to MONOTONIC, the frequency, the slewing, re-anchoring and
 * start-up.  Everything here runs with the writer's lock held (but the REALTIME
 * offset's refresh, which has its own), by the reader that found the line
 * due: there is no thread.  The construction that keeps the clock from
 * going backwards is described at the top of fastclock.c.
 */
#include "fastclock_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/timex.h>
#include <unistd.h>

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
		atomic_store_explicit(&O.rt_off, rt_off, memory_order_relaxed);
		bool ok = ok1 && ok2;
		if (ok)
			atomic_store_explicit(&O.tai_off, (int64_t)tx2.tai * NS_PER_S, memory_order_relaxed);
		atomic_store_explicit(&O.tai_ok, ok, memory_order_relaxed);
		int64_t lo = 0, hi = 0;
		if (ok && (tx2.status & (STA_INS | STA_DEL)) && r > 0) {
			int64_t edge = (r / DAY_NS + 1) * DAY_NS - rt_off;
			lo = edge - LEAP_BEFORE_NS;
			hi = edge + LEAP_AFTER_NS;
		}
		atomic_store_explicit(&O.leap_lo, lo, memory_order_relaxed);
		atomic_store_explicit(&O.leap_hi, hi, memory_order_relaxed);
		break;
	}
	atomic_store_explicit(&m->rt_lock, 0, memory_order_release);
}

void fc_int_rt_check(uint64_t t)
{
	uint64_t last = atomic_load_explicit(&O.rt_checked, memory_order_relaxed);
	uint64_t every = atomic_load_explicit(&O.rt_every, memory_order_relaxed);
	if (t - last < every && every != 0)
		return;
	/* one thread checks; the others keep the offset they have */
	if (!atomic_compare_exchange_strong_explicit(&O.rt_checked, &last, t, memory_order_relaxed,
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
	k.err = L->err;  /* the floor may be that far ahead of the kernel for a while */
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

/* Starts seg n (slope n->mult set) at ta, at or above the old copy's F
 * at ta and at H (see the top of fastclock.c), and at or above floor_s.
 * After a pause (paused), F may be far ahead of the kernel, but nothing
 * was served from it past the kernel plus its bound: cap_s, the kernel's
 * value at ta plus that bound, replaces F's corners. */
static void start_seg(struct seg *n, const struct line *L, const struct seg *o, uint64_t ta, scaled floor_s,
                      bool paused, scaled cap_s)
{
	scaled base = floor_s;
	if (L->flags & L_COUNTER) {
		uint64_t d = ta - L->tsc0;
		if ((int64_t)d < 0)
			d = UINT64_MAX;  /* the counter went back: F's end */
		uint64_t corners[2] = { d, L->hard };
		for (int i = 0; i < 2; i++) {
			uint64_t p = corners[i];
			if (p < d)
				continue;
			scaled need = paused ? cap_s : follow_scaled(L, o, p) + 1;
			if (!paused && p != UINT64_MAX && p > d)
				need -= (scaled)((unsigned __int128)(p - d) * n->mult);
			if (need > base)
				base = need;
		}
	}
	n->ns0 = (int64_t)(base >> 32);
	n->frac0 = (uint64_t)(base & 0xffffffff);
}

/* Re-anchors.  seen is the sequence number of the copy that made the caller
 * decide; if another thread re-anchored since, there is nothing to do.
 * The phases: re-check trust, sample the kernel, choose the rates, then
 * build and publish the line. */
void fc_int_resync(unsigned seen, bool force_hard)
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
	uint64_t c0 = 0, c1 = 0, ta = 0;
	double factor = 0;
	/* A writer preempted between its samples and the line's start would
	 * extrapolate them over the delay: sample again (three tries), so that
	 * the line starts from samples taken just before it. */
	for (int tries = 0; tries < 3; tries++) {
		c0 = fc_counter_read();
		if (sample_clock(CLOCK_MONOTONIC, 4, &sm) != 0 || sample_clock(CLOCK_MONOTONIC_RAW, 3, &sr) != 0) {
			W.trusted = false;
			go_kernel(&L, FC_REASON_KERNEL_CLOCK_FAILED, "the kernel's CLOCK_MONOTONIC could not be read", true);
			return;
		}
		factor = ntp_factor();
		c1 = fc_counter_read();
		if (tries == 0 && W.test_writer_delay && getpid() == W.test_writer_pid) {
			/* tests: the writer held up, as a preempted thread would be */
			uint64_t until = fc_counter_read() + W.test_writer_delay;
			while (fc_counter_read() < until)
				fc_cpu_relax();
		}
		ta = fc_counter_read();
		if ((double)(ta - sm.t0) < ns_to_counts(RESAMPLE_AFTER_NS))
			break;
	}
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
	if (cost_ns > MAX_INTERVAL_NS / SYNC_BUDGET)
		cost_ns = MAX_INTERVAL_NS / SYNC_BUDGET;
	int64_t interval = cost_ns * SYNC_BUDGET;
	interval = interval < MIN_INTERVAL_NS ? MIN_INTERVAL_NS : interval > MAX_INTERVAL_NS ? MAX_INTERVAL_NS : interval;
	W.interval_ns = interval;
	W.last_sync_ns = sm.k;
	atomic_store_explicit(&G.check_after, ns_to_counts(CHECK_AFTER_NS), memory_order_relaxed);
	atomic_store_explicit(&G.hw_step, ns_to_counts(CHECK_AFTER_NS / 4), memory_order_relaxed);

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
	W.syncs++;
	set_source(FC_SOURCE_COUNTER, W.trust.reason, W.trust.text);

	/* The old line against the samples: behind by much, step forward; ahead
	 * by more than a pause between checks explains, a pause; ended, start
	 * again from the kernel; otherwise slew. */
	uint64_t dm = mid(&sm) - L.tsc0, dr = mid(&sr) - L.tsc0;
	bool went_back = (int64_t)dm < 0 || (int64_t)dr < 0;
	int64_t em = 0, er = 0;
	bool paused = false;
	if (counter_mode && !went_back) {
		em = seg_at(L.mono.ns0, L.mono.frac0, L.mono.mult, dm) - sm.k;
		er = seg_at(L.raw.ns0, L.raw.frac0, L.raw.mult, dr) - sr.k;
		paused = em > pause_limit_ns(&L) || er > pause_limit_ns(&L);
	}
	if (counter_mode && went_back)
		paused = true;  /* the counter was reset (a resume): F says nothing */
	bool expired = !counter_mode || force_hard || paused || (now - L.tsc0) >= L.hard || dm >= L.hard ||
	               dr >= L.hard || (ta - L.tsc0) >= L.hard || em < -STEP_FORWARD_NS || er < -STEP_FORWARD_NS;
	if (paused) {
		/* the kernel's clocks moved on while the counter ran (or it was
		 * reset): BOOTTIME's and REALTIME's offsets moved too */
		W.reset_base = true;
		boot_refresh();
		fc_int_rt_refresh();
	}
	double m_new = expired ? target : slewed(target, em, life_ns);
	double r_new = expired ? W.r_raw : slewed(W.r_raw, er, life_ns);
	N.mono.mult = mult_of(m_new);
	N.raw.mult = mult_of(r_new);
	N.tsc0 = ta;
	/* A hard start is "ahead" of the kernel: at the sample's first counter
	 * read the kernel's value was at most k; kernel mode adds its floor. */
	scaled km = to_scaled(sm.k + (int64_t)((double)(ta - sm.t0) * target) + 1);
	scaled kr = to_scaled(sr.k + (int64_t)((double)(ta - sr.t0) * W.r_raw) + 1);
	scaled fm, fr;
	if (!expired) {
		/* slewing: from the old line itself at ta (before its end) */
		fm = seg_scaled(&L.mono, ta - L.tsc0);
		fr = seg_scaled(&L.raw, ta - L.tsc0);
	} else {
		fm = km;
		fr = kr;
	}
	if (!counter_mode) {
		fm = max_scaled(fm, to_scaled(L.mono.ns0));
		fr = max_scaled(fr, to_scaled(L.raw.ns0));
	}
	/* Not raised to the floors: a floor read now may hold a kernel value
	 * from after ta (a writer preempted here), which at ta would put the
	 * line ahead; readers serve at least the floor anyway. */
	start_seg(&N.mono, &L, &L.mono, ta, fm, paused, km + to_scaled(L.err));
	start_seg(&N.raw, &L, &L.raw, ta, fr, paused, kr + to_scaled(L.err));
	int64_t e_m = N.mono.ns0 - (sm.k + (int64_t)((double)(ta - mid(&sm)) * target));
	int64_t e_r = N.raw.ns0 - (sr.k + (int64_t)((double)(ta - mid(&sr)) * W.r_raw));
	int64_t worst = abs64(e_m) > abs64(e_r) ? e_m : e_r;
	N.err = line_error(worst, half_m > half_r ? half_m : half_r, N.hard);
	latch_write(&N);
}

/* ---- start ---- */

/* The latch as a forked child finds it: only the thread that forked
 * exists, and a writer in another thread may have been stopped half-way.
 * The copy readers use is complete (the latch's point); it is copied over
 * the other, which may be half-written, before this child writes. */
static void repair_latch(void)
{
	struct line l;
	unsigned s = atomic_load_explicit(&G.seq, memory_order_relaxed);
	load_copy(&G.c[s & 1], &l);
	store_copy(&G.c[(s + 1) & 1], &l);
	if (s & 1)
		atomic_store_explicit(&G.seq, s + 1, memory_order_relaxed);
}

/* Where the page could not be marked MADV_WIPEONFORK (before Linux 4.14),
 * fork() at least runs this; _Fork and clone do not (docs/fastclock.3). */
static void child_after_fork(void)
{
	struct fc_mm *m = mm_now();
	atomic_store_explicit(&m->lock, 0, memory_order_relaxed);
	atomic_store_explicit(&m->rt_lock, 0, memory_order_relaxed);
	atomic_store_explicit(&m->hw, 0, memory_order_relaxed);
	atomic_store_explicit(&m->ok, false, memory_order_release);
}

/* The first slow-path read of a forked child (its fc_mm found zeroed),
 * with the lock held: the latch repaired, and the clock checked.  A child
 * forked after unshare(CLONE_NEWTIME) runs in another time namespace,
 * whose MONOTONIC and BOOTTIME have other offsets: the parent's line, its
 * floors and BOOTTIME's and REALTIME's offsets belong to another clock,
 * and the child starts afresh from the kernel.  Returns true when it did. */
bool fc_int_new_mm(void)
{
	repair_latch();
	W.reset_base = true;
	struct fc_mm *m = mm_now();
	struct line L;
	unsigned s = current_line(&L);
	bool other_clock = false;
	if (L.flags & L_COUNTER) {
		uint64_t t = counter_now();
		int64_t k = fc_kclock_ns(CLOCK_MONOTONIC);
		uint64_t d = t - L.tsc0;
		int64_t off = seg_at(L.mono.ns0, L.mono.frac0, L.mono.mult, d) - k;
		other_clock = k != INT64_MIN && ((int64_t)d < 0 || off > pause_limit_ns(&L) || off < -pause_limit_ns(&L));
	}
	atomic_store_explicit(&m->ok, true, memory_order_release);
	if (!other_clock)
		return false;
	atomic_store_explicit(&G.floor_mono, INT64_MIN, memory_order_relaxed);
	atomic_store_explicit(&G.floor_raw, INT64_MIN, memory_order_relaxed);
	W.have_boot = false;
	atomic_store_explicit(&O.boot_off, 0, memory_order_relaxed);
	boot_refresh();
	fc_int_rt_refresh();
	struct line fresh;
	memset(&fresh, 0, sizeof fresh);
	fresh.mono.ns0 = fresh.raw.ns0 = INT64_MIN;
	latch_write(&fresh);
	fc_int_resync(s + 2, true);
	return true;
}

/* This address space's page (struct fc_mm), zeroed in forked children. */
static struct fc_mm *map_mm(void)
{
	int saved = errno;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		errno = saved;
		return NULL;
	}
	(void)madvise(p, 4096, MADV_WIPEONFORK);
	errno = saved;
	return p;
}

static void init_writer(void);

/* Start-up, with boot_mm's lock held.  The page is published last, ready
 * (ok, unlocked): until then every read is the slow path's. */
void fc_int_init_locked(void)
{
	atomic_store_explicit(&G.floor_mono, INT64_MIN, memory_order_relaxed);
	atomic_store_explicit(&G.floor_raw, INT64_MIN, memory_order_relaxed);
	init_writer();
	struct fc_mm *page = map_mm();
	if (page) {
		atomic_store_explicit(&page->ok, true, memory_order_relaxed);
		atomic_store_explicit(&G.mm, page, memory_order_release);
	} else {
		atomic_store_explicit(&mm_now()->ok, true, memory_order_release);
	}
}

static void init_writer(void)
{
	W.inited = true;
	fc_kclock_init();
	fc_trust_gather(&W.facts);
	fc_trust_judge(&W.facts, &W.trust);
	if (W.facts.counter_usable != 0)
		atomic_store_explicit(&G.no_counter, true, memory_order_relaxed);
	W.trusted = W.trust.use_counter;
	if (W.trusted)
		fc_trust_declared(&W.facts);
	snprintf(W.freq_from, sizeof W.freq_from, "%s", W.facts.freq_from);
	pthread_atfork(NULL, NULL, child_after_fork);
	fc_int_rt_refresh();
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
		W.test_writer_pid = getpid();
	}
	W.last_check_t = fc_counter_read();
	latch_write(&zero);
	fc_int_resync(0, true);
}

