/*
 * fastclock.c: libfastclock's clock, the readers and the API (include/fastclock.h;
 * re-anchoring is in fastclock_sync.c; the design is in
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
#include "fastclock_impl.h"

#include <errno.h>
#include <stdio.h>

/* The zero state is kernel mode with soft 0: the first read of each kind
 * goes to the slow path, which initializes. */
struct fc_latch_state G;
struct fc_offsets O;
atomic_int lock_word;
struct fc_writer W;

static void ensure_init(void)
{
	if (trylock()) {
		if (!W.inited)
			fc_int_init_locked();
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
					fc_int_init_locked();
				else if (!W.permanent && atomic_load_explicit(&G.seq, memory_order_relaxed) == s)
					fc_int_resync(s, false);
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
			fc_int_resync(s, false);  /* it tells a due line from an expired one */
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
			fc_int_rt_check(t);
		return;
	}
	static _Atomic int64_t checked_ns;
	int64_t last = atomic_load_explicit(&checked_ns, memory_order_relaxed);
	if (m - last >= FC_STEP_CHECK_NS &&
	    atomic_compare_exchange_strong_explicit(&checked_ns, &last, m, memory_order_relaxed, memory_order_relaxed))
		fc_int_rt_refresh();
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
		fc_int_init_locked();
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
		fc_int_resync(current_line(&L), false);
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
