/* SPDX-License-Identifier: MIT */
/*
 * fastclock_sync.c: libfastclock's writer: samples of the kernel's clocks,
 * the frequency, the slewing and re-anchoring.  Everything here runs with
 * the writer's lock held, by the reader that found the line due: there is
 * no thread.  The construction that keeps the clock from going backwards is
 * described at the top of fastclock.c; the offsets to MONOTONIC are in
 * fastclock_offsets.c, start-up and forked children in fastclock_start.c.
 */
#include "fastclock_impl.h"
#include "sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <sys/timex.h>
#include <unistd.h>

/* ---- kernel samples ---- */

int fc_int_sample_clock(clockid_t id, int tries, struct sample *best)
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

static uint64_t mult_of(double ns_per_count)
{
	return (uint64_t)(ns_per_count * 4294967296.0 + 0.5);
}

/* The rate the kernel gives MONOTONIC, as a factor on the raw clock's:
 * second_length / 10^9 with second_length = tick * 1000 * USER_HZ + freq
 * (kernel/time/ntp.c, ntp_update_frequency, which applies a change at
 * once), returned; and in *per_second what second_overflow adds on top,
 * a second at a time from the next second's edge: the PLL's phase chunk,
 * time_offset >> (SHIFT_PLL + time_constant) (adjtimex reports the offset
 * that chunk is taken from, and time_constant as it uses it), and
 * adjtime()'s slew, 500 us a second while more than that remains, then
 * the rest.  0 when adjtimex cannot be read, or may not be: it is outside
 * systemd's @system-service set, so it is made only with no seccomp filter
 * installed (fc_unfiltered, sandbox.h), and the rate is measured otherwise
 * (choose_rates).  One struct timex, reused, and out of line: the
 * re-anchor's frame stays small (a signal handler's stack, docs/fastclock.3). */
__attribute__((noinline)) static double ntp_factor(double *per_second)
{
	struct timex tx;
	*per_second = 0;
	if (!fc_unfiltered())
		return 0;
	memset(&tx, 0, sizeof tx);
	int saved = errno;
	int r = adjtimex(&tx);
	if (r < 0 || tx.tick <= 0) {
		errno = saved;
		return 0;
	}
	double ns_per_s = (double)tx.tick * 1e5 + (double)tx.freq * 1000.0 / 65536.0;
	double chunk_ns = 0;
	if ((tx.status & STA_PLL) && !(tx.status & STA_FLL) && tx.offset != 0) {
		double off_ns = (double)tx.offset * ((tx.status & STA_NANO) ? 1.0 : 1000.0);
		long shift = 2 + tx.constant;
		if (shift >= 0 && shift < 60)
			chunk_ns += off_ns / (double)(1ull << shift);
	}
	memset(&tx, 0, sizeof tx);
	tx.modes = ADJ_OFFSET_SS_READ;
	if (adjtimex(&tx) >= 0 && tx.offset != 0) {
		long us = tx.offset > 500 ? 500 : tx.offset < -500 ? -500 : tx.offset;
		chunk_ns += (double)us * 1000.0;
	}
	errno = saved;
	*per_second = chunk_ns / 1e9;
	return ns_per_s / 1e9;
}

/* ---- re-anchoring (lock held) ---- */

static void set_source(enum fc_source s, enum fc_reason r, const char *text)
{
	fc_int_writer.source = s;
	fc_int_writer.reason = r;
	if (text != fc_int_writer.reason_text)
		fc_text_put(fc_int_writer.reason_text, sizeof fc_int_writer.reason_text, 0, text);
}

/* Kernel mode for good from now on, floored at what the old copy's readers
 * may still be handing out: a counter line's value at the reader's counter,
 * up to its end (kernel_floor), or the old kernel mode's floor. */
void fc_int_go_kernel(const struct line *L, enum fc_reason r, const char *text)
{
	struct line k;
	memset(&k, 0, sizeof k);
	bool counter_line = (L->flags & L_COUNTER) != 0;
	k.tail = counter_line ? L->hard : L->tail;  /* a kernel line's tail, if any, carries on */
	k.tsc0 = k.tail ? L->tsc0 : counter_now();
	k.mono = L->mono;
	k.raw = L->raw;
	k.flags = 0;
	k.err = L->err;
	fc_int_writer.permanent = true;
	k.soft = 0;  /* every read takes the slow path, which reads the kernel */
	k.hard = UINT64_MAX;
	set_source(FC_SOURCE_KERNEL, r, text);
	latch_write(&k);
}

static void new_base(const struct sample *sr, const struct sample *sm, int64_t w)
{
	fc_int_writer.have_base = true;
	fc_int_writer.reset_base = false;
	fc_int_writer.base_t = fc_int_writer.prev_t = mid(sr);
	fc_int_writer.base_raw = fc_int_writer.prev_raw = sr->k;
	fc_int_writer.base_mono = sm->k;
	fc_int_writer.base_w = fc_int_writer.prev_w = w;
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
	int64_t w = (int64_t)((double)(sr->t1 - sr->t0) / fc_int_writer.counts_per_ns);
	uint64_t t = mid(sr);
	if (!fc_int_writer.have_base || fc_int_writer.reset_base || t <= fc_int_writer.base_t || t <= fc_int_writer.prev_t) {
		if (fc_int_writer.have_base && (t <= fc_int_writer.base_t || t <= fc_int_writer.prev_t))
			fc_int_writer.backwards++;
		new_base(sr, sm, w);
		return;
	}
	double span_l = (double)(t - fc_int_writer.prev_t), dk_l = (double)(sr->k - fc_int_writer.prev_raw);
	if (dk_l > 100000 && fc_int_writer.r_raw > 0) {
		double r_l = dk_l / span_l;
		double err_l = (double)(fc_int_writer.prev_w + w) / 2.0 / dk_l;
		double dev = r_l / fc_int_writer.r_raw - 1;
		double adev = dev < 0 ? -dev : dev;
		if (adev > 1e-3 && adev > 3 * err_l + fc_int_writer.r_err_ppm * 1e-6) {
			/* Once: the counter (or the clock) jumped in this interval
			 * (a migration, a resume, an emulator's jitter): start the
			 * baseline again and keep the rate.  Three intervals in a row
			 * that agree with each other: the rate itself is wrong (a
			 * wrong declared frequency): take the measured one. */
			double ddev = dev - fc_int_writer.jump_dev;
			if (ddev < 0)
				ddev = -ddev;
			bool same = fc_int_writer.jump_run > 0 && (dev > 0) == (fc_int_writer.jump_dev > 0) && ddev < 0.2 * adev;
			fc_int_writer.jump_run = same ? fc_int_writer.jump_run + 1 : 1;
			fc_int_writer.jump_dev = dev;
			if (fc_int_writer.jump_run >= 3) {
				fc_int_writer.r_raw = r_l;
				fc_int_writer.r_err_ppm = (err_l + ddev) * 1e6;
				fc_int_writer.declared = true;  /* replaced again by the next better measurement */
				fc_int_writer.counts_per_ns = 1.0 / r_l;
				fc_int_writer.jump_run = 0;
				fc_text_put(fc_int_writer.freq_from, sizeof fc_int_writer.freq_from, 0, "measured");
			}
			new_base(sr, sm, w);
			return;
		}
	}
	fc_int_writer.jump_run = 0;
	fc_int_writer.prev_t = t;
	fc_int_writer.prev_raw = sr->k;
	fc_int_writer.prev_w = w;
	double dk = (double)(sr->k - fc_int_writer.base_raw);
	if (dk <= 0)
		return;
	double r = dk / (double)(t - fc_int_writer.base_t);
	double err_ppm = (double)(fc_int_writer.base_w + w) / 2.0 / dk * 1e6 + 0.001;
	double dev_ppm = (r / fc_int_writer.r_raw - 1) * 1e6;
	if (dev_ppm < 0)
		dev_ppm = -dev_ppm;
	bool disagrees = fc_int_writer.declared && dev_ppm > fc_int_writer.r_err_ppm + 3 * err_ppm;
	if (err_ppm < fc_int_writer.r_err_ppm || fc_int_writer.r_raw == 0 || disagrees) {
		fc_int_writer.r_raw = r;
		fc_int_writer.r_err_ppm = err_ppm;
		fc_int_writer.declared = false;
		fc_int_writer.counts_per_ns = 1.0 / r;
		fc_text_put(fc_int_writer.freq_from, sizeof fc_int_writer.freq_from, 0, "measured");
	}
}

/* The error bound reported for a new line: what it is off at the anchor,
 * the sample's half-width, the frequency's uncertainty over the line's
 * life, and the largest error seen at the last anchors (which covers the
 * kernel's slews that the model does not see).  Only reported: nothing
 * that keeps the clock from going backwards depends on it. */
static int64_t line_error(int64_t e_now, int64_t half_width, uint64_t hard_counts)
{
	double drift = fc_int_writer.r_err_ppm * 1e-6 * (double)hard_counts * fc_int_writer.r_raw;
	int64_t err = abs64(e_now) + half_width + (int64_t)drift + 2;
	fc_int_writer.recent[fc_int_writer.n_recent++ % RECENT] = abs64(e_now) + half_width;
	unsigned n = fc_int_writer.n_recent < RECENT ? fc_int_writer.n_recent : RECENT;
	for (unsigned i = 0; i < n; i++)
		if (fc_int_writer.recent[i] + half_width + 2 > err)
			err = fc_int_writer.recent[i] + half_width + 2;
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

/* What a re-anchor measured: the samples, the counter around them, the
 * line's start ta, the rates and the period. */
struct anchor {
	struct sample sm, sr;
	uint64_t c0, c1, ta;
	double factor;  /* MONOTONIC's rate over MONOTONIC_RAW's */
	double per_second;  /* the part of it second_overflow applies, as adjtimex says now */
	double target;  /* MONOTONIC ns per count */
	int64_t interval;
};

/* Once a second: is the counter still to be used?  false (and kernel mode)
 * when not. */
__attribute__((noinline)) static bool trust_holds(const struct line *L, uint64_t now)
{
	if (fc_int_writer.trusted && (now - fc_int_writer.last_check_t) >= ns_to_counts(CHECK_NS)) {
		char *why = fc_int_writer.why;
		fc_int_writer.last_check_t = now;
		if (!fc_trust_still(&fc_int_writer.facts, &fc_int_writer.trust, why, sizeof fc_int_writer.why)) {
			fc_int_writer.trusted = false;
			fc_int_go_kernel(L, FC_REASON_KERNEL_LEFT, why);
			return false;
		}
		fc_int_boot_refresh();
	}
	if (!fc_int_writer.trusted) {
		fc_int_go_kernel(L, fc_int_writer.reason, fc_int_writer.reason_text);
		return false;
	}
	return true;
}

/* The kernel's MONOTONIC and MONOTONIC_RAW and its NTP rate.  A writer
 * preempted between its samples and the line's start would extrapolate
 * them over the delay: it samples again (three tries), so that the line
 * starts from samples taken just before it.  false (and kernel mode) when
 * the kernel's clock cannot be read. */
__attribute__((noinline)) static bool sample_kernel(const struct line *L, struct anchor *a)
{
	for (int tries = 0; tries < 3; tries++) {
		a->c0 = fc_counter_read();
		if (fc_int_sample_clock(CLOCK_MONOTONIC, 4, &a->sm) != 0 ||
		    fc_int_sample_clock(CLOCK_MONOTONIC_RAW, 3, &a->sr) != 0) {
			fc_int_writer.trusted = false;
			fc_int_go_kernel(L, FC_REASON_KERNEL_CLOCK_FAILED, "the kernel's CLOCK_MONOTONIC could not be read");
			return false;
		}
		a->factor = ntp_factor(&a->per_second);
		a->c1 = fc_counter_read();
		if (tries == 0 && fc_int_writer.test_writer_delay && getpid() == fc_int_writer.test_writer_pid) {
			/* tests: the writer held up, as a preempted thread would be */
			uint64_t until = fc_counter_read() + fc_int_writer.test_writer_delay;
			while (fc_counter_read() < until)
				fc_cpu_relax();
		}
		a->ta = fc_counter_read();
		if ((double)(a->ta - a->sm.t0) < ns_to_counts(RESAMPLE_AFTER_NS))
			break;
	}
	return true;
}

/* A change of the kernel's rate by the factor change, seen at now (the
 * sample's MONOTONIC): the checks follow it until `until` (choose_rates,
 * check_every_ns); one seen while another is followed keeps the larger. */
static void note_rate_change(struct fc_writer *w, int64_t now, double change, int64_t until)
{
	double c = change < 0 ? -change : change;
	if (now >= w->rate_change_until || c > w->rate_change)
		w->rate_change = c;
	if (until > w->rate_change_until)
		w->rate_change_until = until;
}

/* The kernel applies the PLL's chunk and adjtime's slew in second_overflow,
 * at the first tick of its next wall-clock second (kernel/time/ntp.c),
 * while adjtimex reports the new state at once (a new frequency or tick
 * applies at once: at the next tick).  So a per-second part that adjtimex
 * reports changed is taken from that second's edge on, and the old one
 * until then; a->factor gets the part in force.  Returns the nanoseconds
 * until the edge when a change is pending (0: none).  The kernel's tick
 * after the edge may come late (a loaded host: milliseconds), and a change
 * may be seen only after the kernel made it: from when a change is seen
 * until RATE_SETTLE_NS after it is due, the checks come often enough that
 * it cannot carry a line beyond its bound between two (note_rate_change). */
static int64_t factor_in_force(struct anchor *a)
{
	struct fc_writer *w = &fc_int_writer;
	if (a->factor <= 0)
		return 0;
	if (w->base_factor > 0 && a->factor != w->base_factor)
		note_rate_change(w, a->sm.k, a->factor - w->base_factor, a->sm.k + RATE_SETTLE_NS);
	w->base_factor = a->factor;
	double f = a->per_second;
	int64_t left = 0;
	if (!w->have_per_second || f == w->per_second) {
		w->per_second = f;
		w->have_per_second = true;
		w->per_second_from = 0;
	} else {
		int64_t rt_off = rt_mono_off();
		if (f != w->per_second_next || w->per_second_from == 0) {
			int64_t rt = a->sm.k + rt_off;
			int64_t edge = rt - (rt % NS_PER_S + NS_PER_S) % NS_PER_S + NS_PER_S;
			w->per_second_next = f;
			w->per_second_from = edge - rt_off;
			note_rate_change(w, a->sm.k, f - w->per_second, w->per_second_from + RATE_SETTLE_NS);
		}
		if (a->sm.k >= w->per_second_from) {
			w->per_second = f;
			w->per_second_from = 0;
		} else {
			left = w->per_second_from - a->sm.k;
		}
	}
	a->factor += w->per_second;
	return left;
}

/* The raw rate (measured), MONOTONIC's (with the NTP factor), and the
 * period: a re-anchor costs at most 1/SYNC_BUDGET of the time. */
__attribute__((noinline)) static void choose_rates(struct anchor *a)
{
	update_frequency(&a->sr, &a->sm);
	int64_t until_switch = factor_in_force(a);
	if (a->factor <= 0) {
		/* no adjtimex: MONOTONIC's own rate against RAW over the base */
		a->factor = fc_int_writer.have_base && a->sr.k > fc_int_writer.base_raw
		                    ? (double)(a->sm.k - fc_int_writer.base_mono) / (double)(a->sr.k - fc_int_writer.base_raw)
		                    : 1.0;
		if (a->factor <= 0.9 || a->factor >= 1.1)
			a->factor = 1.0;
	}
	a->target = fc_int_writer.r_raw * a->factor;
	int64_t cost_ns = (int64_t)((double)(a->c1 - a->c0) / fc_int_writer.counts_per_ns);
	if (cost_ns > MAX_INTERVAL_NS / SYNC_BUDGET)
		cost_ns = MAX_INTERVAL_NS / SYNC_BUDGET;
	int64_t interval = cost_ns * SYNC_BUDGET;
	a->interval = interval < MIN_INTERVAL_NS ? MIN_INTERVAL_NS : interval > MAX_INTERVAL_NS ? MAX_INTERVAL_NS : interval;
	if (until_switch > 0 && until_switch < a->interval)  /* the next line starts with the new rate */
		a->interval = until_switch > CHECK_EVERY_NS ? until_switch : CHECK_EVERY_NS;
	fc_int_writer.interval_ns = a->interval;
	fc_int_writer.last_sync_ns = a->sm.k;
	double change = a->sm.k < fc_int_writer.rate_change_until ? fc_int_writer.rate_change : 0;
	atomic_store_explicit(&fc_int_latch.hw_step, ns_to_counts((double)check_every_ns(change)), memory_order_relaxed);
}

/* The old line against the samples: its error now (em, er: positive,
 * ahead), and how the new line starts.  Behind by much: a step forward;
 * ahead by more than a pause between checks could leave unnoticed, or a
 * counter that went back: a pause (the new line starts at the kernel plus
 * the old bound, and the offsets are read again); ended: from the kernel;
 * otherwise a slew from the old line. */
struct judgement {
	int64_t em, er;
	bool paused, expired;
};

__attribute__((noinline)) static struct judgement judge_old_line(const struct line *L, const struct anchor *a, uint64_t now, bool force_hard)
{
	struct judgement j = { 0, 0, false, false };
	bool counter_mode = (L->flags & L_COUNTER) != 0;
	uint64_t dm = mid(&a->sm) - L->tsc0, dr = mid(&a->sr) - L->tsc0;
	bool went_back = (int64_t)dm < 0 || (int64_t)dr < 0;
	if (counter_mode && !went_back) {
		j.em = seg_at(L->mono.ns0, L->mono.frac0, L->mono.mult, dm) - a->sm.k;
		j.er = seg_at(L->raw.ns0, L->raw.frac0, L->raw.mult, dr) - a->sr.k;
		j.paused = j.em > pause_limit_ns(L) || j.er > pause_limit_ns(L);
	}
	if (counter_mode && went_back) {
		j.paused = true;  /* the counter was reset (a resume): F says nothing */
		/* and the marks kept in counts are ahead of it: the next check
		 * and the next REALTIME refresh would wait until the counter
		 * passed them again (days), so both are due at once */
		atomic_store_explicit(&mm_now()->hw, 0, memory_order_relaxed);
		atomic_store_explicit(&fc_int_offsets.rt_due, 0, memory_order_relaxed);
	}
	j.expired = !counter_mode || force_hard || j.paused || (now - L->tsc0) >= L->hard || dm >= L->hard ||
	            dr >= L->hard || (a->ta - L->tsc0) >= L->hard || j.em < -STEP_FORWARD_NS ||
	            j.er < -STEP_FORWARD_NS;
	if (j.paused) {
		/* the kernel's clocks moved on while the counter ran (or it was
		 * reset): BOOTTIME's and REALTIME's offsets moved too */
		fc_int_writer.reset_base = true;
		fc_int_boot_refresh();
		fc_int_rt_refresh();
	}
	return j;
}

/* A writer held up after ta (preempted, or interrupted by its thread's
 * signal handler) publishes late: the old copy stays in force until the
 * latch sends readers to the new one, and its readers may hand out values
 * up to the old line's at that moment.  The new line is at or above the
 * old one from ta to its own end H' (start_seg), and past H' it serves its
 * value there: enough unless the writer published after H' (the periods
 * vary, a re-anchor's cost sets them, so a short line can follow a long
 * one).  Then, right after the latch write (t_after: the counter then, past
 * every counter an old copy's reader used), the floors are raised to the
 * old line's value at t_after, up to its end; readers that find the new
 * line past its end before that, the writer still holding the lock, serve
 * at least the kernel's clock plus the line's bound (kernel_backed, in
 * fastclock.c), which the old line's values did not exceed.  (Ending the new
 * line no earlier than the old one instead made each new line start above
 * the old one's far end whenever it slewed slower, a ratchet that ran the
 * clock microseconds ahead under frequent re-anchors.)  Not after a pause,
 * when nothing was served past the kernel plus the bound (start_seg).
 * true when it raised them. */
static bool floors_after_late(const struct line *N, const struct line *L, bool paused, uint64_t t_after)
{
	uint64_t d = t_after - L->tsc0;
	if (!(L->flags & L_COUNTER) || paused || (int64_t)(t_after - N->tsc0) < (int64_t)N->hard || (int64_t)d < 0)
		return false;
	raise_i64(&fc_int_latch.floor_mono, follow(L, &L->mono, d));
	raise_i64(&fc_int_latch.floor_raw, follow(L, &L->raw, d));
	return true;
}

/* Builds the new line at ta and publishes it (into *out: the caller then
 * looks at the counter, floors_after_late). */
__attribute__((noinline)) static void publish_line(const struct line *L, const struct anchor *a, const struct judgement *j, struct line *out)
{
	bool counter_mode = (L->flags & L_COUNTER) != 0;
	int64_t life_ns = a->interval + END_AFTER_DUE_NS;
	int64_t half_m = (int64_t)((double)(a->sm.t1 - a->sm.t0) * fc_int_writer.r_raw / 2) + 1;
	int64_t half_r = (int64_t)((double)(a->sr.t1 - a->sr.t0) * fc_int_writer.r_raw / 2) + 1;
	struct line *N = out;  /* the re-anchor's own (resync_work), not this stack */
	memset(N, 0, sizeof *N);
	N->flags = L_COUNTER;
	N->soft = ns_to_counts((double)a->interval);
	N->hard = ns_to_counts((double)life_ns);
	fc_int_writer.syncs++;
	set_source(FC_SOURCE_COUNTER, fc_int_writer.trust.reason, fc_int_writer.trust.text);
	N->mono.mult = mult_of(j->expired ? a->target : slewed(a->target, j->em, life_ns));
	N->raw.mult = mult_of(j->expired ? fc_int_writer.r_raw : slewed(fc_int_writer.r_raw, j->er, life_ns));
	uint64_t ta = a->ta;
	N->tsc0 = ta;
	/* A hard start is "ahead" of the kernel: at the sample's first counter
	 * read the kernel's value was at most k; kernel mode adds its floor. */
	scaled km = to_scaled(a->sm.k + (int64_t)((double)(ta - a->sm.t0) * a->target) + 1);
	scaled kr = to_scaled(a->sr.k + (int64_t)((double)(ta - a->sr.t0) * fc_int_writer.r_raw) + 1);
	scaled fm = km, fr = kr;
	if (!j->expired) {
		/* slewing: from the old line itself at ta (before its end) */
		fm = seg_scaled(&L->mono, ta - L->tsc0);
		fr = seg_scaled(&L->raw, ta - L->tsc0);
	}
	if (!counter_mode) {
		fm = max_scaled(fm, to_scaled(L->mono.ns0));
		fr = max_scaled(fr, to_scaled(L->raw.ns0));
	}
	/* Not raised to the floors: a floor read now may hold a kernel value
	 * from after ta (a writer preempted here), which at ta would put the
	 * line ahead; readers serve at least the floor anyway. */
	start_seg(&N->mono, L, &L->mono, ta, fm, j->paused, km + to_scaled(L->err));
	start_seg(&N->raw, L, &L->raw, ta, fr, j->paused, kr + to_scaled(L->err));
	int64_t e_m = N->mono.ns0 - (a->sm.k + (int64_t)((double)(ta - mid(&a->sm)) * a->target));
	int64_t e_r = N->raw.ns0 - (a->sr.k + (int64_t)((double)(ta - mid(&a->sr)) * fc_int_writer.r_raw));
	int64_t worst = abs64(e_m) > abs64(e_r) ? e_m : e_r;
	/* plus what a change of the kernel's rate (an adjtime slew, an NTP
	 * frequency step, the PLL) can add before the next check finds it, and
	 * room for the check's own bracket: a check passes only a line within
	 * the bound at every instant of it (check_verdict), so a line at its
	 * worst passes a bracket up to twice the sample's width, not only one
	 * as narrow as the narrowest of the writer's tries */
	int64_t half = half_m > half_r ? half_m : half_r;
	N->err = line_error(worst, half, N->hard) + RATE_STEP_NS + 2 * half;
	N->flags |= L_OPEN;
	latch_write(N);
}

/* Still calibrating (the frequency not yet known well enough to start on
 * the counter): stay on the kernel's clock, and measure again soon. */
__attribute__((noinline)) static void keep_calibrating(const struct line *L)
{
	struct line k = *L;
	k.flags = 0;
	k.tail = 0;  /* (only kernel mode for good follows a counter line) */
	k.tsc0 = fc_counter_read();
	k.soft = 0;
	k.hard = ns_to_counts(CALIB_STEP_NS);
	latch_write(&k);
}

/* Re-anchors.  (Its phases are out of line: their locals are on the stack
 * only while each runs, so that a re-anchor fits a signal handler's small
 * alternate stack: docs/fastclock.3, "Stack use".)  seen is the sequence number of the copy that made the caller
 * decide; if another thread re-anchored since, there is nothing to do.  The
 * phases, as the kernel's do_hres calls its steps: re-check trust, sample
 * the kernel, choose the rates, keep calibrating or judge the old line,
 * publish the new one. */
/* A re-anchor's lines and samples: beside the writer's state, not on the
 * reader's stack (a signal handler's may be small), and like it used only
 * with the writer's lock held (a handler that interrupted the writer
 * cannot take it; a forked child's copy is its own). */
static struct {
	struct line old, next;
	struct anchor a;
} resync_work;

void fc_int_resync(unsigned seen, bool force_hard)
{
	struct line *L = &resync_work.old, *N = &resync_work.next;
	struct anchor *a = &resync_work.a;
	unsigned s = current_line(L);
	if (seen != s && !force_hard)
		return;
	uint64_t now = fc_counter_read();
	if (!trust_holds(L, now))
		return;
	memset(a, 0, sizeof *a);
	if (!sample_kernel(L, a))
		return;
	choose_rates(a);
	if (fc_int_writer.r_err_ppm > START_ERR_PPM && !(L->flags & L_COUNTER)) {
		keep_calibrating(L);
		return;
	}
	struct judgement j = judge_old_line(L, a, now, force_hard);
	publish_line(L, a, &j, N);
	/* the counter after the new copy is visible to every reader (a store
	 * still in this CPU's buffer would let one read the old copy at a
	 * later counter), then the copy again, closed */
	fc_fence_full();
	floors_after_late(N, L, j.paused, fc_counter_read());
	N->flags &= ~(uint32_t)L_OPEN;
	latch_write(N);
}
