/* SPDX-License-Identifier: MIT */
/*
 * fastclock.c: libfastclock's clock, the readers and the API (include/fastclock.h;
 * re-anchoring is in fastclock_sync.c; the design is in
 * docs/fastclock-internals.md).
 *
 * The kernel's model, in user space: ns = ns0 + ((counter - tsc0) * mult +
 * frac0) >> 32, one such line for CLOCK_MONOTONIC and one for
 * CLOCK_MONOTONIC_RAW, published through a latch (two copies and a sequence
 * number, the kernel's seqcount_latch): a reader never waits, even in a
 * signal handler that interrupted the writer.  There is no thread: the
 * reader that finds the line due re-anchors it, if it wins a trylock.
 *
 * Never backwards, by construction, and never behind or stale, whatever
 * the scheduler does to the thread that re-anchors:
 *
 *   - Each line is a function of the counter fixed when it is published,
 *     F(t) = the line up to its end H (re-anchoring is due some time before
 *     H), then its value at H.  A new line N (any positive slope) is
 *     started at ta at or above F at ta and at H.  F being concave and N
 *     straight, N is above F on [ta, H]; past N's own end H', F' stands at
 *     N(H').  The old copy is in force until N is published, at t_pub,
 *     however late that is: F' >= F holds on [ta, min(H, H')], which is
 *     enough while t_pub <= H'.  A writer that finds, right after the
 *     latch write (and a full fence), that it published after H' (the
 *     periods vary, so a short line can follow a long one) raises the
 *     floors to F at that moment, above everything the old copy served
 *     (floors_after_late, in fastclock_sync.c), then republishes N without
 *     L_OPEN; a reader that meets N past H' while it is L_OPEN serves at
 *     least the kernel plus N's bound, which F's values did not exceed
 *     (kernel_backed).  (Without
 *     that, a line with a shorter period published after its own end stood
 *     still below what the old copy had served until then: the
 *     never-backwards test under ThreadSanitizer found it, by up to 90 us
 *     there.  Ending N no earlier than H instead made every line that
 *     slewed slower start above the old one's far end: a ratchet.)
 *   - A read that finds the line due re-anchors if it wins a trylock.  A
 *     read past H while another thread holds the lock (preempted, its vCPU
 *     descheduled) does not stand still on F(H): it reads the kernel's clock
 *     itself and serves max(kernel, F, floor) (past a line not yet settled,
 *     L_OPEN, the kernel plus the bound: above), and raises the floor, which
 *     every read then serves at least (the fast path loads it beside the
 *     line).  The worst case of a starved writer is a kernel read, never a
 *     stale value.
 *   - A read more than CHECK_EVERY_NS (250 us) of counter after the last
 *     check (hw) compares the line with the kernel before serving it, so
 *     the kernel changing its rate (an adjtime slew, an NTP frequency step)
 *     is found within that time (more often near a larger change the
 *     writer sees coming, the PLL's: check_every_ns), and passes it only
 *     within the bound at every instant of its bracket (check_verdict: a
 *     reader held up inside it reads again), and a suspend, a VM paused or migrated, or
 *     a forked child in another time namespace shows as a line ahead of (or
 *     behind) the kernel, replaced at once.  When the line is ahead by more
 *     than a pause between checks could explain, nothing was served past the
 *     pause (every read after it was checked), so the new line starts at the
 *     kernel plus the old bound, not at F.
 *   - What a forked child must not inherit (the locks, hw) is in a page
 *     marked MADV_WIPEONFORK, zeroed in the child of fork, _Fork or clone
 *     whether or not atfork handlers ran (struct fc_mm).
 *
 * Kernel mode is floored at F at the reader's counter (kernel_floor: what
 * the old copy may still serve, not more) and at the floor, and, unless it
 * is for good, raises the floor with every kernel value it serves (a
 * counter line that follows starts from samples a held-up writer took
 * earlier).  All of this
 * relies, like the kernel's own vDSO, on the counters of all CPUs agreeing
 * (checked by the kernel when its clocksource is the TSC, and by
 * `clockdoctor tsc` otherwise).
 */
#include "fastclock_impl.h"
#include "fastclock_serve.h"

#include <errno.h>

/* The zero state is kernel mode with soft 0: the first read of each kind
 * goes to the slow path, which initializes.  Until then the address
 * space's part is this one, which start-up replaces by a page of its own. */
static struct fc_mm boot_mm;
struct fc_latch_state fc_int_latch = { .mm = &boot_mm };
struct fc_offsets fc_int_offsets;
struct fc_writer fc_int_writer;

static void ensure_init(void)
{
	struct fc_mm *m = trylock();
	if (m) {
		if (!fc_int_writer.inited)
			fc_int_init_locked();
		unlock(m);
	}
}

__attribute__((constructor)) static void fc_constructor(void)
{
	ensure_init();
}

/* ---- reading ---- */

enum which { MONO, RAW };

static inline int64_t serve(int64_t v, _Atomic int64_t *floor)
{
	int64_t f = atomic_load_explicit(floor, memory_order_relaxed);
	return v > f ? v : f;
}

/* The line is ahead of the kernel by more than a pause between two
 * checks could leave unnoticed: the counter ran while the kernel's clock
 * did not (a suspend, a paused or migrated VM, another time namespace). */
static inline bool paused_ahead(const struct line *L, int64_t ahead_ns)
{
	return ahead_ns > pause_limit_ns(L);
}

/* A read that cannot serve the line (past its end with the writer busy,
 * or a failed check with the writer busy) serves the kernel's clock k,
 * but at least what the line may have served before it: F(d), or after a
 * pause the kernel plus the line's bound (everything served before the
 * pause was within it of a kernel value at most k).  Past the end of a
 * line just published (L_OPEN: its writer has not yet looked at the
 * counter), at least k plus the bound too: a writer that published it
 * after its end left the copy before it in force until then, and that
 * copy's values (within the bound of the kernel's) may be above F(d); the
 * writer's look raises the floors past them (floors_after_late, in
 * fastclock_sync.c).  It raises the floor, so that no later read, on this
 * line or the next, serves less. */
static int64_t kernel_backed(const struct line *L, const struct seg *sg, uint64_t d, int64_t k,
                             _Atomic int64_t *floor)
{
	int64_t v;
	if ((int64_t)d < 0 || paused_ahead(L, seg_at(sg->ns0, sg->frac0, sg->mult, d) - k)) {
		v = k + L->err;  /* the counter went back, or ran through a pause */
	} else {
		v = follow(L, sg, d);
		if ((L->flags & L_OPEN) && d >= L->hard && k + L->err > v)
			v = k + L->err;
	}
	if (k > v)
		v = k;
	raise_i64(floor, v);
	return serve(v, floor);
}

/* The slow path's phases, each called once from slow() below and inlined
 * there: the same work in the same order as one function, with names. */

/* Not started, or the first read of a forked child: start up (or take a
 * page of the child's own) if no other thread is at it.  true when done. */
static bool start_locked(void)
{
	struct fc_mm *held = trylock();
	if (!held)
		return false;
	if (!fc_int_writer.inited)
		fc_int_init_locked();
	else
		fc_int_new_mm();
	unlock(held);
	return true;
}

/* Kernel mode past its hard end (calibrating): measure again if no other
 * thread is, and the copy s is still the one in force.  true when this
 * thread held the lock (the source may have changed: read again). */
static bool recalibrate(unsigned s)
{
	struct fc_mm *held = trylock();
	if (!held)
		return false;
	if (!fc_int_writer.permanent && atomic_load_explicit(&fc_int_latch.seq, memory_order_relaxed) == s)
		fc_int_resync(s, false);
	unlock(held);
	return true;
}

/* Kernel mode: the kernel's clock, floored at what the counter line it
 * replaced may have served, at the counter t (kernel_floor), and at the
 * floor (a copy replaced meanwhile may have a higher one).  Unless kernel
 * mode is for good, a counter line may follow (calibrated at start-up, or
 * after a spell on the kernel), started from the writer's samples: a kernel
 * value served while that writer was held up may be above the new line by
 * its rate error times the delay, so it raises the floor, which every read
 * of the new line serves at least. */
static int64_t serve_kernel(clockid_t id, const struct line *L, const struct seg *sg, uint64_t t,
                            _Atomic int64_t *floor)
{
	int64_t k = fc_kclock_ns(id);
	int64_t f = kernel_floor(L, sg, t);
	if (L->tail && k != INT64_MIN) {
		/* as kernel_backed: a counter behind the line's anchor, or one
		 * that ran through a pause, says nothing of what was served */
		if ((int64_t)(t - L->tsc0) < 0 || paused_ahead(L, f - k))
			f = k + L->err;
		/* the tail follows each CPU's counter, which the kernel may have
		 * left because they disagree: what one served, all serve at
		 * least (past the tail f is constant: a load, no store) */
		raise_i64(floor, f);
	}
	if (k < f)
		k = f;
	if (L->hard != UINT64_MAX)
		raise_i64(floor, k);
	return serve(k, floor);
}

/* The check: the line against the kernel's k (read here, into *k; the
 * first try takes k_read instead, when given: a read of clock id made
 * after d's counter, which the bracket then spans), within
 * the bound less what a rate change can add before the next one, at every
 * instant the kernel's read may have taken its value (check_verdict); a
 * bracket too wide to say (the reader held up inside it) is read again,
 * CHECK_TRIES times in all.  true when the line at d holds. */
static bool line_checks(clockid_t id, const struct line *L, const struct seg *sg, uint64_t d, int64_t *k,
                        int64_t k_read)
{
	int64_t tol = L->err > RATE_STEP_NS ? L->err - RATE_STEP_NS : 0;
	uint64_t t0 = d;
	for (int i = 0; i < CHECK_TRIES; i++) {
		if (i > 0)
			t0 = counter_now() - L->tsc0;
		*k = i == 0 && k_read != INT64_MIN ? k_read : fc_kclock_ns(id);
		uint64_t t1 = counter_now() - L->tsc0;
		if (*k == INT64_MIN)
			return false;
		if ((int64_t)(t1 - t0) < 0 || (int64_t)t0 < 0 || (int64_t)t1 < 0)
			continue;  /* a counter back inside the bracket, or behind the line: it says nothing */
		enum check_verdict v = check_verdict(seg_at(sg->ns0, sg->frac0, sg->mult, t0),
		                                     seg_at(sg->ns0, sg->frac0, sg->mult, t1), *k, tol);
		if (v != CHECK_UNSURE)
			return v == CHECK_PASS;
	}
	return false;
}

/* Due, past the end, counter back, or the check failed: re-anchor if
 * nobody else is.  true when this thread did (read again). */
static bool reanchor(unsigned s, uint64_t d)
{
	struct fc_mm *held = trylock();
	if (!held)
		return false;
	if ((int64_t)d < 0)
		fc_int_writer.backwards++;
	fc_int_resync(s, false);  /* it tells a due line from an expired one */
	unlock(held);
	return true;
}

/* Another thread holds the writer's lock: the line while it is checked
 * and not past its end, else the kernel's clock k (read here unless the
 * check read it), backed by what the line may have served. */
static int64_t serve_writer_busy(clockid_t id, const struct line *L, const struct seg *sg, uint64_t d, bool gap,
                                 int64_t k, _Atomic int64_t *floor)
{
	if (!gap && (int64_t)d >= 0 && d < L->hard)  /* someone is re-anchoring; checked */
		return serve(follow(L, sg, d), floor);
	if (k == INT64_MIN)
		k = fc_kclock_ns(id);
	if (k == INT64_MIN)
		return serve(follow(L, sg, d), floor);
	return kernel_backed(L, sg, d, k, floor);
}

/* The counter refused at start-up (it cannot be read, or a read costs no
 * less than the kernel's clock: fastclock_start.c) and so never served:
 * each clock is the kernel's, read once.  Nothing to floor, follow or
 * refresh: the kernel's clocks keep their own promises (MONOTONIC never
 * back, in every thread and time namespace), and a line's floors and
 * offsets, which keep the library's values consistent with what the
 * counter served, have nothing to be consistent with.  Without this,
 * kernel mode reads MONOTONIC through the line's floor and makes REALTIME
 * from it and the offsets it refreshes every FC_STEP_CHECK_NS: several
 * kernel reads where the kernel's clock is a system call (a trapped
 * counter's machine) for a value no better. */
static inline bool kernel_only(void)
{
	return atomic_load_explicit(&fc_int_latch.no_counter, memory_order_relaxed);
}

/* Everything but the fast case: due, past the line's end, a read long
 * after the last (checked first), kernel mode, not started, a new child. */
__attribute__((noinline)) static int64_t slow(enum which w, int *kernel_mode)
{
	clockid_t id = w == MONO ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_RAW;
	_Atomic int64_t *floor = w == MONO ? &fc_int_latch.floor_mono : &fc_int_latch.floor_raw;
	for (int round = 0;; round++) {
		struct fc_mm *m = mm_now();
		if (!atomic_load_explicit(&m->ok, memory_order_acquire)) {
			/* not started, or the first read of a forked child */
			if (round < 3 && start_locked())
				continue;
			*kernel_mode = 1;
			return fc_kclock_ns(id);  /* another thread is setting up */
		}
		if (kernel_only()) {
			*kernel_mode = 1;
			return fc_kclock_ns(id);
		}
		struct line L;
		uint64_t t;
		unsigned s = read_line(&L, &t);
		const struct seg *sg = w == MONO ? &L.mono : &L.raw;
		uint64_t d = t - L.tsc0;
		if (!(L.flags & L_COUNTER)) {
			*kernel_mode = 1;
			/* kernel mode: hard is when to look again (calibration) */
			if (round == 0 && d >= L.hard && recalibrate(s))
				continue;  /* read again: the source may have changed */
			return serve_kernel(id, &L, sg, t, floor);
		}
		*kernel_mode = 0;
		bool gap = (int64_t)(t - atomic_load_explicit(&m->hw, memory_order_relaxed)) >
		           (int64_t)atomic_load_explicit(&fc_int_latch.hw_step, memory_order_relaxed);
		bool on_line = (int64_t)d >= 0 && d < L.soft;
		if (on_line && !gap)  /* another thread checked since the fast path looked */
			return serve(seg_at(sg->ns0, sg->frac0, sg->mult, d), floor);
		/* a resume may have moved BOOTTIME - MONOTONIC with the line
		 * still right: before the check vouches for it (boot_off is
		 * stored before hw, which the other clocks' readers load first) */
		int64_t k_follow;
		bool followed = fc_int_check_follow(&k_follow);
		int64_t k = INT64_MIN;
		/* a follow's last read of MONOTONIC was made after t (d's
		 * counter) and before the counter line_checks reads next: the
		 * check's reading of the kernel's clock, one system call less.
		 * Where each kernel read is one (hpet), a check is one system
		 * call when nothing moved, three when the follow runs. */
		if (on_line && followed &&
		    line_checks(id, &L, sg, d, &k, id == CLOCK_MONOTONIC ? k_follow : INT64_MIN)) {
			fc_fence_release();
			raise_u64(&m->hw, t);
			return serve(seg_at(sg->ns0, sg->frac0, sg->mult, d), floor);
		}
		if (round < 3 && reanchor(s, d))
			continue;
		return serve_writer_busy(id, &L, sg, d, gap, k, floor);
	}
}

/* The fast path, inlined into each entry point: true with *v set, or false
 * when the slow path must answer (due, expired, a check due, kernel mode,
 * the floor above the line).  No pointer to a local escapes, so the
 * callers need no stack frame.
 *
 * Shaped for the ordered read, where the fence before the counter waits
 * for everything before it, so that what follows the counter is a call's
 * cost: the loads overlap the counter's latency, and after it come only a
 * subtraction, a 64-bit multiply (d < soft keeps d * mult + frac0 within
 * 64 bits: soft_capped), an add, a shift and an add.  The tests that send
 * a read elsewhere are branches, predicted, off that chain; the floor too
 * (above the line only for the few microseconds after a read that served
 * the kernel's clock plus the bound: the slow path serves it then). */
static inline __attribute__((always_inline)) bool fast_parts(bool ordered, bool raw, uint64_t *tp, int64_t *v,
                                                             int64_t *ns0p, int64_t *qp)
{
	unsigned s;
	uint64_t d, soft, frac0, mult, t;
	int64_t ns0;
	if (__builtin_expect(atomic_load_explicit(&fc_int_latch.no_counter, memory_order_relaxed), 0))
		return false;  /* reading it would fault, or there is none */
	do {
		/* The counter first: its latency then overlaps the loads below,
		 * which the lfence would otherwise wait for.  Reading it before
		 * the parameters is safe: a value older than the line they
		 * describe gives a negative delta, which the slow path reads
		 * again in the other order. */
		t = ordered ? fc_counter_read() : fc_counter_read_unordered();
		__asm__("" : "+r"(t));  /* one register from here: none to save */
		/* the latch's reader, R1 R2 F2 R3 of fastclock_impl.h: ldar,
		 * five ldr, dmb ishld, ldr on arm64 */
		s = atomic_load_explicit(&fc_int_latch.seq, memory_order_acquire);
		/* the copy's offset opaque, so that the loads index one base
		 * register: otherwise the compiler hoists each field's address
		 * into a callee-saved register, and saving them costs more than
		 * the loads */
		uintptr_t off = (uintptr_t)(s & 1) * sizeof(struct copy_fast);
		__asm__("" : "+r"(off));
		const struct copy_fast *c = (const struct copy_fast *)((const char *)fc_int_latch.f + off);
		d = t - atomic_load_explicit(&c->tsc0, FC_COPY_LOAD);
		soft = atomic_load_explicit(&c->soft, FC_COPY_LOAD);
		if (!raw) {
			ns0 = atomic_load_explicit(&c->ns0, FC_COPY_LOAD);
			frac0 = atomic_load_explicit(&c->frac0, FC_COPY_LOAD);
			mult = atomic_load_explicit(&c->mult, FC_COPY_LOAD);
		} else {
			const struct seg_a *sg = &fc_int_latch.r[s & 1].raw;
			ns0 = atomic_load_explicit(&sg->ns0, FC_COPY_LOAD);
			frac0 = atomic_load_explicit(&sg->frac0, FC_COPY_LOAD);
			mult = atomic_load_explicit(&sg->mult, FC_COPY_LOAD);
		}
		fc_fence_acquire();
	} while (atomic_load_explicit(&fc_int_latch.seq, memory_order_relaxed) != s);
	*tp = t;
	const struct fc_mm *m = atomic_load_explicit(&fc_int_latch.mm, memory_order_relaxed);
	uint64_t since = t - atomic_load_explicit(&m->hw, memory_order_relaxed);
	/* due, or a check is due */
	if (__builtin_expect(d >= soft || since > atomic_load_explicit(&fc_int_latch.hw_step, memory_order_relaxed), 0))
		return false;
	int64_t q = (int64_t)((d * mult + frac0) >> 32);
	int64_t x = ns0 + q;  /* seg_at, exactly: d < soft */
	/* after R1's acquire (and F2): at least every floor raised before the
	 * copy in hand was published (its W1 or W3 is a release) */
	int64_t f = atomic_load_explicit(raw ? &fc_int_latch.floor_raw : &fc_int_latch.floor_mono, memory_order_relaxed);
	if (__builtin_expect(x < f, 0))
		return false;
	*v = x;
	*ns0p = ns0;
	*qp = q;
	return true;
}

static inline __attribute__((always_inline)) bool fast_read(bool ordered, bool raw, uint64_t *tp, int64_t *v)
{
	int64_t ns0, q;
	return fast_parts(ordered, raw, tp, v, &ns0, &q);
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

/* fc_now_ns and fc_now_ns_unordered, which differ only in the counter
 * read: the fast path inlined, the slow one a tail call. */
static inline __attribute__((always_inline)) int64_t now_ns(bool ordered)
{
	uint64_t t;
	int64_t v;
	if (__builtin_expect(fast_mono(ordered, &t, &v), 1))
		return v;
	return slow_mono();
}

int64_t fc_now_ns(void)
{
	return now_ns(true);
}

int64_t fc_now_ns_unordered(void)
{
	return now_ns(false);
}

/* Whether REALTIME's offset is due for a check at counter t: t at or past
 * rt_due.  Signed, so that a read whose counter predates another thread's
 * check (rt_due moved past it) is not due. */
static inline bool rt_is_due(uint64_t t)
{
	return (int64_t)(t - atomic_load_explicit(&fc_int_offsets.rt_due, memory_order_relaxed)) >= 0;
}

/* The REALTIME offset is re-read every FC_STEP_CHECK_NS, timed by the
 * counter (the test inlined here), or in kernel mode by MONOTONIC itself
 * (fc_int_offsets_due_kernel). */
static void offsets_due(int kernel_mode, uint64_t t, int64_t m)
{
	if (kernel_mode)
		fc_int_offsets_due_kernel(m);
	else if (rt_is_due(t))
		fc_int_rt_check(t);
}

/* MONOTONIC m (read through a check, or after one) as BOOTTIME, and
 * *off (when not NULL) an offset to BOOTTIME, loaded after the line's
 * check (hw, which the read of MONOTONIC loaded: the fence) and before
 * boot_off (acquire), so that boot_off is at least what the offset was
 * made from and what the check left. */
static inline int64_t boot_of(int64_t m, _Atomic int64_t *off, int64_t *off_value)
{
	fc_fence_acquire();
	if (off)
		*off_value = atomic_load_explicit(off, memory_order_acquire);
	return m + atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed);
}

/* MONOTONIC plus BOOTTIME's offset plus REALTIME's to BOOTTIME, in both
 * modes: in kernel mode, MONOTONIC is the kernel's floored at the last
 * line, so the wall clock does not go back either when the library leaves
 * the counter. */
/* MONOTONIC's slow path for the REALTIME readers: the value and the
 * counter it was read at, 0 in kernel mode, in two registers (no local
 * whose address escapes, so the callers need no stack frame). */
struct mono_read {
	int64_t v;
	uint64_t t;
};

__attribute__((noinline)) static struct mono_read read_mono_slow(void)
{
	int km;
	struct mono_read r;
	r.v = slow(MONO, &km);
	r.t = km ? 0 : counter_now();
	return r;
}

/* Every case: MONOTONIC from either path, the offsets' refresh when due,
 * the kernel's clock around a leap second. */
__attribute__((noinline)) static int64_t realtime_slow(void)
{
	uint64_t t;
	int64_t m;
	if (kernel_only())
		return fc_kclock_ns(CLOCK_REALTIME);
	if (!fast_mono(true, &t, &m)) {
		struct mono_read r = read_mono_slow();
		m = r.v;
		t = r.t;
	}
	offsets_due(t == 0, t, m);
	int64_t rb;
	int64_t b = boot_of(m, &fc_int_offsets.rt_boot_off, &rb);
	if (__builtin_expect(b >= atomic_load_explicit(&fc_int_offsets.leap_lo, memory_order_relaxed) &&
	                     b < atomic_load_explicit(&fc_int_offsets.leap_hi, memory_order_relaxed), 0)) {
		/* around a leap second: the kernel's, which applies it at its tick */
		int64_t k = fc_kclock_ns(CLOCK_REALTIME);
		if (k != INT64_MIN)
			return k;
	}
	return b + rb;
}

/* The common case inlined, with no call and so no stack frame: the fast
 * path, the offsets not due, no leap second near, REALTIME as base + q
 * (true); else false, and realtime_slow answers (it reads again: a later
 * value, never less). */
static inline __attribute__((always_inline)) bool realtime_parts(int64_t *basep, int64_t *qp)
{
	uint64_t t;
	int64_t m, ns0, q;
	if (__builtin_expect(fast_parts(true, false, &t, &m, &ns0, &q), 1) &&
	    __builtin_expect(!rt_is_due(t), 1)) {
		int64_t rb;
		int64_t b = boot_of(m, &fc_int_offsets.rt_boot_off, &rb);
		/* The answer is b + rb, made as (ns0 + boot_off + rb) + q: the
		 * offsets' sum is ready while the counter is read, so the
		 * answer's chain after the counter is MONOTONIC's (one add
		 * after the multiply, not three).  Opaque, or the compiler
		 * finds m = ns0 + q in it and adds the offsets after. */
		int64_t base = ns0 + (b - m) + rb;
		__asm__("" : "+r"(base));
		if (__builtin_expect(b < atomic_load_explicit(&fc_int_offsets.leap_lo, memory_order_relaxed) ||
		                     b >= atomic_load_explicit(&fc_int_offsets.leap_hi, memory_order_relaxed), 1)) {
			*basep = base;
			*qp = q;
			return true;
		}
	}
	return false;
}

static inline __attribute__((always_inline)) int64_t realtime_ns(void)
{
	int64_t base, q;
	if (__builtin_expect(realtime_parts(&base, &q), 1))
		return base + q;
	return realtime_slow();
}

int64_t fc_realtime_ns(void)
{
	return realtime_ns();
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

__attribute__((noinline)) static int gettime_other(clockid_t clock, struct timespec *ts)
{
	if (!ts)
		return -EFAULT;
	if (kernel_only())
		return fc_kclock(clock, ts);
	int km = 0;
	uint64_t t = 0;
	int64_t v, off;
	switch (clock) {
	case CLOCK_MONOTONIC:
		v = read_mono(true, &km, &t);
		break;
	case CLOCK_REALTIME:
		v = fc_realtime_ns();
		break;
	case CLOCK_BOOTTIME:
		v = boot_of(read_mono(true, &km, &t), NULL, NULL);
		if (km) {
			/* the kernel's (it knows of a resume at once), floored */
			int64_t k = fc_kclock_ns(CLOCK_BOOTTIME);
			if (k > v)
				v = k;
		}
		break;
	case CLOCK_TAI:
		if (!atomic_load_explicit(&fc_int_offsets.tai_ok, memory_order_relaxed))
			return fc_kclock(clock, ts);  /* no CLOCK_TAI to take the offset from */
		v = read_mono(true, &km, &t);
		offsets_due(km, t, v);
		v = boot_of(v, &fc_int_offsets.tai_boot_off, &off);
		v += off;
		break;
	case CLOCK_MONOTONIC_RAW:
		v = read_raw(&km);
		break;
	default:
		return fc_kclock(clock, ts);
	}
	to_timespec(v, ts);
	return 0;
}


/* The two ids programs ask for most, each with no stack frame: MONOTONIC's
 * fast path inlined (its slow path in gettime_other, the id a constant:
 * its register is free above), and REALTIME's. */
static inline __attribute__((always_inline)) int gettime_mono(struct timespec *ts)
{
	uint64_t t;
	int64_t v, ns0, q;
	if (__builtin_expect(fast_parts(true, false, &t, &v, &ns0, &q), 1)) {
		parts_to_timespec(ns0, q, ts);
		return 0;
	}
	return gettime_other(CLOCK_MONOTONIC, ts);
}

static inline __attribute__((always_inline)) int gettime_realtime_inline(struct timespec *ts)
{
	int64_t base, q;
	if (__builtin_expect(realtime_parts(&base, &q), 1))
		parts_to_timespec(base, q, ts);
	else
		to_timespec(realtime_slow(), ts);
	return 0;
}

__attribute__((noinline)) static int gettime_realtime(struct timespec *ts)
{
	return gettime_realtime_inline(ts);
}

int fc_gettime(clockid_t clock, struct timespec *ts)
{
	if (__builtin_expect(ts != NULL, 1)) {
		if (clock == CLOCK_MONOTONIC)
			return gettime_mono(ts);
		else if (clock == CLOCK_REALTIME)
			return gettime_realtime(ts);
	}
	return gettime_other(clock, ts);
}

/* The accelerator's (fastclock_serve.h): fc_gettime's answers without its
 * dispatch on the id and the pointer (a call and taken branches less). */
int fc_int_serve_mono(struct timespec *ts)
{
	return gettime_mono(ts);
}

int fc_int_serve_realtime(struct timespec *ts)
{
	return gettime_realtime_inline(ts);
}

/* REALTIME as a timeval, the microseconds truncated as from a timespec
 * (parts_to_timespec's seconds, then the ns under a second divided). */
void fc_int_serve_timeval(struct timeval *tv)
{
	struct timespec ts;
	(void)gettime_realtime_inline(&ts);
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = (suseconds_t)((uint64_t)ts.tv_nsec / 1000);
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
	struct fc_mm *held;
	while (!(held = trylock())) {
		if (++spins > 20000)
			return -EAGAIN;
		fc_cpu_relax();
	}
	if (!fc_int_writer.inited) {
		/* start-up replaces the page the lock is in: take it again */
		fc_int_init_locked();
		unlock(held);
		return fc_info(info);
	}
	memset(info, 0, sizeof *info);
	struct line L;
	current_line(&L);
	info->source = (L.flags & L_COUNTER) ? FC_SOURCE_COUNTER : FC_SOURCE_KERNEL;
	if (info->source == FC_SOURCE_KERNEL && fc_int_writer.trusted) {
		/* trusted, but the frequency is not yet measured well enough */
		info->reason = fc_int_writer.trust.reason;
		size_t n = fc_text_put(info->reason_text, 151, 0, fc_int_writer.trust.text);  /* 150 of it at most */
		fc_text_put(info->reason_text, sizeof info->reason_text, n, "; measuring the counter's frequency first");
	} else {
		info->reason = fc_int_writer.reason;
		fc_text_put(info->reason_text, sizeof info->reason_text, 0, fc_int_writer.reason_text);
	}
	const char *cs = fc_trust_counter_clocksource(fc_int_writer.facts.counter_kind);
	fc_text_put(info->counter, sizeof info->counter, 0,
	            fc_int_writer.facts.counter_kind == FC_COUNTER_ARM64_CNTVCT ? "cntvct_el0" : cs ? cs : "none");
	fc_text_put(info->kernel_clocksource, sizeof info->kernel_clocksource, 0, fc_int_writer.facts.clocksource);
	info->kernel_vdso_fast = fc_int_writer.trust.vdso_fast;
	if (info->source == FC_SOURCE_COUNTER) {
		info->counter_hz = fc_int_writer.r_raw > 0 ? 1e9 / fc_int_writer.r_raw : 0;
		fc_text_put(info->freq_from, sizeof info->freq_from, 0, fc_int_writer.freq_from);
		info->freq_err_ppm = fc_int_writer.r_err_ppm;
		info->error_bound_ns = L.err;
	}
	/* Reads serve at least the floors, which may lead the kernel by more
	 * than the line's bound (a writer that published late raised them to
	 * the old line's value), and kernel mode's too (the last line at the
	 * reader's counter): the bound stated covers that lead, and is 0 in
	 * kernel mode only once the kernel has passed them. */
	int64_t floor = atomic_load_explicit(&fc_int_latch.floor_mono, memory_order_relaxed);
	int64_t line_floor = (L.flags & L_COUNTER) ? INT64_MIN : kernel_floor(&L, &L.mono, counter_now());
	if (line_floor > floor)
		floor = line_floor;
	int64_t k = fc_kclock_ns(CLOCK_MONOTONIC);
	if (k != INT64_MIN && floor != INT64_MIN && floor - k > info->error_bound_ns)
		info->error_bound_ns = floor - k;
	info->last_sync_ns = fc_int_writer.last_sync_ns;
	info->sync_interval_ns = fc_int_writer.interval_ns;
	info->syncs = fc_int_writer.syncs;
	info->counter_backwards = fc_int_writer.backwards;
	info->verdict = fc_int_writer.facts.verdict;
	unlock(held);
	return 0;
}

int fc_resync(void)
{
	ensure_init();
	struct fc_mm *held = trylock();
	if (!held)
		return -EBUSY;
	int r = 0;
	struct line L;
	if (!fc_int_writer.trusted)
		r = -ENOTSUP;
	else
		fc_int_resync(current_line(&L), false);
	unlock(held);
	return r;
}
