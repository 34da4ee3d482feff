/* SPDX-License-Identifier: MIT */
/*
 * fastclock_impl.h: libfastclock's inside, shared by fastclock.c (the
 * readers and the API), fastclock_sync.c (re-anchoring), fastclock_offsets.c
 * (the offsets to MONOTONIC) and fastclock_start.c (start-up, forked
 * children).
 * The design is at the top of fastclock.c.  Nothing here is exported from
 * the shared library (-fvisibility=hidden); in the static one, the state's
 * names carry the fc_int_ prefix.
 */
#ifndef FC_FASTCLOCK_IMPL_H
#define FC_FASTCLOCK_IMPL_H

#include "fastclock.h"

#include "counter.h"
#include "fenceorder.h"
#include "fastclock_trust.h"
#include "kclock.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NS_PER_S 1000000000LL

/* L_COUNTER: the line is served (else kernel mode).  L_OPEN: just
 * published, the writer not yet past its look at the counter
 * (floors_after_late): the copy before may have been in force past this
 * line's end. */
enum { L_COUNTER = 1, L_OPEN = 2 };

/* Tunables (docs/fastclock.3). */
#define MIN_INTERVAL_NS 10000000LL     /* re-anchor at least every 10 ms... */
#define MAX_INTERVAL_NS 250000000LL    /* ...and at most every 250 ms */
#define SYNC_BUDGET 1000               /* interval >= 1000 x a re-anchor's cost: <= 0.1 % */
#define END_AFTER_DUE_NS 1000000       /* H: the line proper ends 1 ms after it is due
                                          (its value there from then on) */
#define CHECK_EVERY_NS 250000          /* Y: a read this long (of counter) after the last
                                          one checked is checked against the kernel */
#define RATE_STEP_NS 125               /* what the kernel changing its rate by adjtime's
                                          500 ppm adds over Y: part of every bound */
#define MIN_CHECK_EVERY_NS 1000        /* Y near a larger change of the kernel's rate
                                          (the PLL's): RATE_STEP_NS / the change, not below this */
#define RATE_SETTLE_NS NS_PER_S        /* ...from when it is seen until this long after it
                                          is due (the kernel's tick may take it late) */
#define RT_FULL_EVERY_NS NS_PER_S      /* REALTIME's and TAI's offsets read in full at least this often */
#define FOLLOW_SLACK_NS 1000           /* BOOTTIME - MONOTONIC bracketed this close to boot_off: followed */
#define FOLLOW_TRIES 4                 /* brackets a follow takes at most */
#define FOLLOW_SLACK_MAX_NS 100000     /* the slack grows to this with the kernel's clock's cost */
#define CHECK_TRIES 3                  /* a check whose bracket is too wide to say reads again */
#define RESAMPLE_AFTER_NS 200000       /* samples older than this at the line's start:
                                          sample again */
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

/* A copy of the line, in two parts.  What a MONOTONIC read on the fast
 * path loads (the anchor, its end of service, the MONOTONIC segment) is
 * 32 bytes, so that the first copy's fits the latch's first cache line
 * beside seq and the floor: at rest (seq even) a read touches that line
 * and hw's, nothing else.  soft and frac0 fit 32 bits: store_copy keeps
 * them so (frac0 is below 2^32 by construction; soft is capped, a line
 * then only re-anchors sooner). */
struct copy_fast {
	_Atomic uint64_t tsc0;
	_Atomic int64_t ns0;     /* MONOTONIC */
	_Atomic uint64_t mult;   /* MONOTONIC */
	_Atomic uint32_t frac0;  /* MONOTONIC */
	_Atomic uint32_t soft;
};

struct copy_rest {
	_Atomic uint64_t hard, tail;
	_Atomic uint32_t flags;
	_Atomic int64_t err;
	struct seg_a raw;
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
	uint64_t tail;   /* kernel mode after a counter line: that line's end H, in counts
	                    after tsc0; the line (tsc0, mono, raw) up to there floors kernel
	                    mode (kernel_floor).  0: ns0 alone floors it */
	uint32_t flags;
	int64_t err;     /* the bound reported by fc_info; kernel mode: 0 */
	struct seg mono, raw;  /* kernel mode without a tail: ns0 is the floor */
};

/* The zero state is kernel mode with soft 0: the first read of each kind
 * goes to the slow path, which initializes.  The first cache line holds
 * everything a MONOTONIC read on the fast path loads but hw (the address
 * space's, below): seq, no_counter, mm, hw_step, floor_mono and the first
 * copy's fast part (the one in force whenever no re-anchor is under way).
 * Readers only load; the line is written by a re-anchor (every 10 to 250
 * ms) and by a slow-path read that raises the floor. */
struct fc_latch_state {
	_Alignas(64) atomic_uint seq;
	atomic_bool no_counter;  /* never execute the counter read (PR_SET_TSC, no TSC) */
	_Atomic(struct fc_mm *) mm;   /* this address space's part (below) */
	_Atomic uint64_t hw_step;     /* Y in counts: between checks (0: not started) */
	_Atomic int64_t floor_mono;   /* the highest value a slow-path read served, and */
	struct copy_fast f[2];        /* f[0]: bytes 32-63, f[1]: the next line */
	_Atomic int64_t floor_raw;    /* every read serves at least it */
	struct copy_rest r[2];
};
extern struct fc_latch_state fc_int_latch;
_Static_assert(sizeof(struct copy_fast) == 32 && offsetof(struct fc_latch_state, f) == 32,
               "the first copy's fast part shares the first cache line with seq and floor_mono");

/* What must not survive into a forked child: the locks (their holder is
 * not in the child) and hw.  It lives in a page of its own marked
 * MADV_WIPEONFORK (Linux 4.14), which a child of fork, _Fork or clone
 * without CLONE_VM finds zeroed, whichever way it was made and whether or
 * not pthread_atfork handlers ran; threads and CLONE_VM children share it
 * as they share the rest of memory.  ok is 0 in a fresh child: its first
 * slow-path read repairs the latch and checks the clock before anything
 * else (fc_int_new_mm).  hw is the highest counter value at which a read
 * compared the line with the kernel and found it within its bound; a read
 * more than hw_step past it does that first
 * (a pause, a resume, a time namespace). */
struct fc_mm {
	_Alignas(64) _Atomic uint64_t hw;
	atomic_int lock;      /* the writer's */
	atomic_int rt_lock;   /* the REALTIME offset's refresher's */
	atomic_bool ok;
};

/* The offsets that make the other clocks from MONOTONIC, refreshed by
 * readers and re-anchors.  BOOTTIME - MONOTONIC is the only one a resume
 * moves: the kernel adds the time asleep to REALTIME and BOOTTIME alike
 * (__timekeeping_inject_sleeptime, kernel/time/timekeeping.c), so REALTIME
 * and TAI are kept as offsets to BOOTTIME, and an offset measured before a
 * suspend is still right when a refresher held up across it stores it
 * after.  boot_off is only ever raised, so a late store of it is harmless
 * too. */
struct fc_offsets {
	/* The first cache line: all that a REALTIME or TAI read on the fast
	 * path loads (the offsets, when to check them, the leap span), so
	 * that it touches this line and the latch's, nothing else. */
	_Alignas(64) _Atomic int64_t rt_boot_off; /* REALTIME - BOOTTIME */
	_Atomic uint64_t rt_due;      /* counter at which the next check is due: the
	                                 last check's plus rt_every (one compare a read) */
	_Atomic uint64_t rt_every;    /* counts between checks; 0 until known */
	_Atomic int64_t boot_off;     /* BOOTTIME - MONOTONIC: raised by a resume only (in one time namespace) */
	_Atomic int64_t leap_lo, leap_hi;  /* BOOTTIME span around a pending leap second,
	                                      in which REALTIME and TAI are the kernel's */
	_Atomic int64_t tai_boot_off; /* TAI - BOOTTIME, one value (never half a leap) */
	atomic_bool tai_ok;           /* CLOCK_TAI could be read */
	/* kernel mode and the refreshers only */
	_Alignas(64) _Atomic int64_t boot_followed; /* kernel mode: MONOTONIC at the last follow... */
	_Atomic int64_t rt_checked_ns;/* ...and at the last refresh of REALTIME's offset */
	_Atomic int64_t rt_full_mono; /* MONOTONIC at the last full refresh (the quiet
	                                 checks between read no TAI) */
	atomic_uint boot_jumps;       /* resumes a follow took */
	_Atomic int64_t boot_slack;   /* what a bracket may be off (fc_int_boot_start) */
};
_Static_assert(offsetof(struct fc_offsets, tai_ok) < 64,
               "a REALTIME or TAI read on the fast path loads one line of the offsets");

extern struct fc_offsets fc_int_offsets;

/* ns as a timespec.  At or after the epoch (every clock but a REALTIME
 * set before 1970) an unsigned division by the constant, which the
 * compiler makes a multiply and shifts, and the remainder by a multiply:
 * the signed one needs sign fix-ups on top. */
static inline void to_timespec(int64_t v, struct timespec *ts)
{
	if (__builtin_expect(v >= 0, 1)) {
		uint64_t sec = (uint64_t)v / NS_PER_S;
		ts->tv_sec = (time_t)sec;
		ts->tv_nsec = (long)((uint64_t)v - sec * NS_PER_S);
		return;
	}
	ts->tv_sec = v / NS_PER_S;
	ts->tv_nsec = v % NS_PER_S;
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += NS_PER_S;
		ts->tv_sec--;
	}
}

/* base + q as a timespec, where base is known before the counter is read
 * (ns0, plus the offsets for REALTIME) and q, the ns since, comes after it:
 * base's division into seconds (a multiply and shifts) is done while the
 * counter is read, and after q only an add, a compare and a subtract
 * (conditional moves) remain, the vDSO's own chain (it keeps seconds and
 * ns apart).  q is below a second whenever the line is re-anchored at
 * least every second; a longer q, or a base before the epoch, divides the
 * sum. */
static inline __attribute__((always_inline)) void parts_to_timespec(int64_t base, int64_t q, struct timespec *ts)
{
	if (__builtin_expect(base >= 0 && (uint64_t)q < NS_PER_S, 1)) {
		uint64_t sec = (uint64_t)base / NS_PER_S;
		uint64_t ns = (uint64_t)base - sec * NS_PER_S + (uint64_t)q;
		uint64_t over = ns >= NS_PER_S;
		ts->tv_sec = (time_t)(sec + over);
		ts->tv_nsec = (long)(ns - (over ? NS_PER_S : 0));
		return;
	}
	to_timespec(base + q, ts);
}

/* REALTIME - MONOTONIC as the readers make it. */
static inline int64_t rt_mono_off(void)
{
	int64_t rb = atomic_load_explicit(&fc_int_offsets.rt_boot_off, memory_order_acquire);
	return rb + atomic_load_explicit(&fc_int_offsets.boot_off, memory_order_relaxed);
}

/* The writer's state: touched only with lock_word held. */
struct fc_writer {
	bool inited;
	struct fc_trust_facts facts;
	struct fc_trust trust;
	enum fc_source source;
	enum fc_reason reason;
	char reason_text[200];
	char why[160];         /* trust_holds's text (not on the reader's stack) */
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
	unsigned boot_jumps_seen;  /* fc_int_offsets.boot_jumps at the last refresh */
	bool have_per_second;
	double per_second;      /* the rate second_overflow adds now (PLL chunk, adjtime slew) */
	double per_second_next; /* what adjtimex says it adds from its next second */
	int64_t per_second_from;/* MONOTONIC of that second's edge (0: nothing pending) */
	double base_factor;     /* the part adjtimex applies at once (tick, freq), as last read */
	double rate_change;     /* the last change of the kernel's rate seen coming (a factor)... */
	int64_t rate_change_until; /* ...and the MONOTONIC until which the checks follow it */
	uint64_t test_writer_delay;  /* counts; FASTCLOCK_TEST_WRITER_DELAY_US (tests only) */
	int test_writer_pid;         /* ...in this process only, not its forked children */
};
extern struct fc_writer fc_int_writer;

/* ---- the latch ---- */

/* The most counts after tsc0 a fast-path read may be at: where the
 * product d * mult + frac0 of both segments still fits 64 bits (about 4 s
 * of counter, far beyond MAX_INTERVAL_NS), so that the fast path
 * multiplies in 64 bits (as the kernel's vDSO does) and serves exactly
 * what seg_at's 128 bits give; and what soft's 32 bits hold. */
static inline uint64_t soft_capped(const struct line *l)
{
	uint64_t m = l->mono.mult > l->raw.mult ? l->mono.mult : l->raw.mult;
	uint64_t cap = m ? (UINT64_MAX - UINT32_MAX) / m : UINT64_MAX;
	if (cap > UINT32_MAX)
		cap = UINT32_MAX;
	return l->soft < cap ? l->soft : cap;
}

/* A segment's value as ns0 and a fraction below 2^32, the same value
 * (ns0 * 2^32 + frac0) however it was built. */
static inline void seg_normal(const struct seg *in, int64_t *ns0, uint64_t *frac0)
{
	*ns0 = in->ns0 + (int64_t)(in->frac0 >> 32);
	*frac0 = in->frac0 & 0xffffffffu;
}

static inline void store_copy(struct fc_latch_state *lt, unsigned i, const struct line *l)
{
	struct copy_fast *f = &lt->f[i & 1];
	struct copy_rest *r = &lt->r[i & 1];
	int64_t ns0;
	uint64_t frac0;
	atomic_store_explicit(&f->tsc0, l->tsc0, FC_COPY_STORE);
	atomic_store_explicit(&f->soft, (uint32_t)soft_capped(l), FC_COPY_STORE);
	seg_normal(&l->mono, &ns0, &frac0);
	atomic_store_explicit(&f->ns0, ns0, FC_COPY_STORE);
	atomic_store_explicit(&f->frac0, (uint32_t)frac0, FC_COPY_STORE);
	atomic_store_explicit(&f->mult, l->mono.mult, FC_COPY_STORE);
	atomic_store_explicit(&r->hard, l->hard, FC_COPY_STORE);
	atomic_store_explicit(&r->tail, l->tail, FC_COPY_STORE);
	atomic_store_explicit(&r->flags, l->flags, FC_COPY_STORE);
	atomic_store_explicit(&r->err, l->err, FC_COPY_STORE);
	seg_normal(&l->raw, &ns0, &frac0);
	atomic_store_explicit(&r->raw.ns0, ns0, FC_COPY_STORE);
	atomic_store_explicit(&r->raw.frac0, frac0, FC_COPY_STORE);
	atomic_store_explicit(&r->raw.mult, l->raw.mult, FC_COPY_STORE);
}

static inline void load_copy(const struct fc_latch_state *lt, unsigned i, struct line *l)
{
	const struct copy_fast *f = &lt->f[i & 1];
	const struct copy_rest *r = &lt->r[i & 1];
	l->tsc0 = atomic_load_explicit(&f->tsc0, FC_COPY_LOAD);
	l->soft = atomic_load_explicit(&f->soft, FC_COPY_LOAD);
	l->mono.ns0 = atomic_load_explicit(&f->ns0, FC_COPY_LOAD);
	l->mono.frac0 = atomic_load_explicit(&f->frac0, FC_COPY_LOAD);
	l->mono.mult = atomic_load_explicit(&f->mult, FC_COPY_LOAD);
	l->hard = atomic_load_explicit(&r->hard, FC_COPY_LOAD);
	l->tail = atomic_load_explicit(&r->tail, FC_COPY_LOAD);
	l->flags = atomic_load_explicit(&r->flags, FC_COPY_LOAD);
	l->err = atomic_load_explicit(&r->err, FC_COPY_LOAD);
	l->raw.ns0 = atomic_load_explicit(&r->raw.ns0, FC_COPY_LOAD);
	l->raw.frac0 = atomic_load_explicit(&r->raw.frac0, FC_COPY_LOAD);
	l->raw.mult = atomic_load_explicit(&r->raw.mult, FC_COPY_LOAD);
}

/* Readers use copy seq & 1 (f[seq & 1] and r[seq & 1]).  The writer moves readers to the other copy,
 * rewrites this one, moves them back, and rewrites the other: each store of
 * seq is a release (the copy readers are sent to is complete) followed by a
 * release fence (a reader that saw any of the following stores sees seq
 * changed at its check, through its acquire fence).
 *
 * On a machine that reorders (arm64; x86 only lets a load pass an earlier
 * store, which nothing here depends on), as GCC and Clang compile it:
 *
 *   writer                              reader
 *   stlr  seq = s+1        (W1)         ldar  s = seq                (R1)
 *   dmb   ish              (F1)         ldr   copy s&1's words       (R2)
 *   str   copy s&1's words (W2)         isb; mrs cntvct_el0; isb     (t, if asked)
 *   stlr  seq = s+2        (W3)         dmb   ishld                  (F2)
 *   dmb   ish              (F3)         ldr   seq, again             (R3)
 *   str   copy (s+1)&1's   (W4)
 *
 *   - W1 and W3 are releases: every store before them, the other copy's
 *     (W4 of the last write), the floors a writer raised, is visible to a
 *     reader whose R1 (an acquire: no later load is satisfied before it)
 *     reads them, so the copy R1 sends it to is complete;
 *   - a release orders what comes before it only: without F1 the CPU may
 *     make the W2 stores visible before W1, and a reader would read half a
 *     new copy under the old seq and pass its check.  F1 (and F3 for W4)
 *     is the smp_wmb of the kernel's write_seqcount_latch;
 *   - F2 (the kernel's smp_rmb) keeps the R2 loads from being satisfied
 *     after R3: if any of them read a W2 or W4 store, F1 or F3 before that
 *     store synchronizes with F2 (C11's fence-to-fence rule), so R3 reads
 *     W1 or a later seq, not s, and the reader retries.
 *
 * So a reader never keeps a copy mixed from two lines, and, seq only
 * growing, never takes a copy older than one it took before.  The
 * counter read inside (read_line's t) is fenced by isb on both sides
 * (counter.h): it is not taken before R1 and R2 are issued, nor after F2.
 * tests/unit/test_latch_litmus.c runs this on whatever CPU builds it (and
 * under qemu-user from tests/arm64/run, which does not reorder as
 * hardware does).  Under ThreadSanitizer the fences are the copies' own
 * release and acquire (fenceorder.h). */
static inline void latch_store(struct fc_latch_state *lt, const struct line *l)
{
	unsigned s = atomic_load_explicit(&lt->seq, memory_order_relaxed);  /* the writer's lock held: its own */
	atomic_store_explicit(&lt->seq, s + 1, memory_order_release);   /* W1 */
	fc_fence_release();                                               /* F1 */
	store_copy(lt, s, l);                                             /* W2 */
	atomic_store_explicit(&lt->seq, s + 2, memory_order_release);   /* W3 */
	fc_fence_release();                                               /* F3 */
	store_copy(lt, s + 1, l);                                         /* W4 */
}

static inline void latch_write(const struct line *l)
{
	latch_store(&fc_int_latch, l);
}

static inline uint64_t latch_counter(const struct fc_latch_state *lt)
{
	return atomic_load_explicit(&lt->no_counter, memory_order_relaxed) ? 0 : fc_counter_read();
}

static inline uint64_t counter_now(void)
{
	return latch_counter(&fc_int_latch);
}

/* The line in force in lt, and in *t (unless NULL) the counter read
 * inside the same read of the latch; returns the copy's sequence number. */
static inline unsigned latch_load(const struct fc_latch_state *lt, struct line *l, uint64_t *t)
{
	unsigned s;
	do {
		s = atomic_load_explicit(&lt->seq, memory_order_acquire);      /* R1 */
		load_copy(lt, s, l);                                           /* R2 */
		if (t)
			*t = latch_counter(lt);
		fc_fence_acquire();                                              /* F2 */
	} while (atomic_load_explicit(&lt->seq, memory_order_relaxed) != s);  /* R3 */
	return s;
}

/* The line in force, and in *t (unless NULL) the counter read inside the
 * same read of the latch; returns the copy's sequence number. */
static inline unsigned read_line(struct line *l, uint64_t *t)
{
	return latch_load(&fc_int_latch, l, t);
}

static inline unsigned current_line(struct line *l)
{
	return read_line(l, NULL);
}

static inline int64_t seg_at(int64_t ns0, uint64_t frac0, uint64_t mult, uint64_t d)
{
	unsigned __int128 p = (unsigned __int128)d * mult + frac0;
	return ns0 + (int64_t)(uint64_t)(p >> 32);
}

/* The same in 2^-32 ns units, exactly. */
typedef __int128 scaled;

static inline scaled seg_scaled(const struct seg *s, uint64_t d)
{
	return (scaled)s->ns0 * ((scaled)1 << 32) + (scaled)s->frac0 + (scaled)((unsigned __int128)d * s->mult);
}

/* ns as scaled, by multiplication: a negative ns (a floor not yet set)
 * must not be shifted */
static inline scaled to_scaled(int64_t ns)
{
	return (scaled)ns * ((scaled)1 << 32);
}

static inline scaled max_scaled(scaled a, scaled b)
{
	return a > b ? a : b;
}

/* A line followed up to end counts after its anchor, then its value there.
 * A counter before the anchor (negative d) is taken as "after everything":
 * the copy's reader computes it so. */
static inline scaled seg_until(const struct seg *s, uint64_t d, uint64_t end)
{
	return seg_scaled(s, d <= end ? d : end);
}

/* F(d) of the top of fastclock.c, scaled: the line up to its end H, then
 * its value at H. */
static inline scaled follow_scaled(const struct line *L, const struct seg *s, uint64_t d)
{
	return seg_until(s, d, L->hard);
}

static inline int64_t follow(const struct line *L, const struct seg *s, uint64_t d)
{
	return (int64_t)(follow_scaled(L, s, d) >> 32);
}

/* Kernel mode's floor of sg at the counter t: the counter line it
 * replaced, followed up to that line's end (tail), or ns0.  A reader of the
 * old copy may hand out the line's value at its counter until the latch
 * sends it here, however late that is, and never more; a floor at the
 * line's end instead ran the clock ahead of the kernel by up to a line's
 * length (tens of ms) when the kernel left the counter.  A counter behind
 * the line's anchor (reset) gives the line's end (serve_kernel caps it). */
static inline int64_t kernel_floor(const struct line *L, const struct seg *sg, uint64_t t)
{
	return L->tail ? (int64_t)(seg_until(sg, t - L->tsc0, L->tail) >> 32) : sg->ns0;
}

/* How far ahead of the kernel a line can be with nothing served past what
 * the kernel's clock plus its bound was: a pause shorter than Y may go
 * unnoticed until the next check (so the values run ahead by at most Y);
 * one longer than Y is noticed at the first read after it, since every
 * read more than Y after the last check is checked.  Twice Y, for margin. */
static inline int64_t pause_limit_ns(const struct line *L)
{
	return 2 * CHECK_EVERY_NS + L->err;
}

/* Y, the counter between two checks, in ns: short enough that the largest
 * change of the kernel's rate in sight (a factor, 0: none) carries a line
 * at most RATE_STEP_NS between two checks, the part of every bound kept
 * for it (RATE_STEP_NS / 500 ppm is CHECK_EVERY_NS). */
static inline int64_t check_every_ns(double rate_change)
{
	double r = rate_change < 0 ? -rate_change : rate_change;
	if (r * CHECK_EVERY_NS <= RATE_STEP_NS)
		return CHECK_EVERY_NS;
	double ns = RATE_STEP_NS / r;
	return ns < MIN_CHECK_EVERY_NS ? MIN_CHECK_EVERY_NS : (int64_t)(ns + 1e-6);  /* not below the exact value by a rounding */
}

/* A check's verdict on the kernel's value k, read between the counter
 * values at which the line is at lo and at hi: within tol of the line at
 * every instant of that bracket (PASS), beyond tol at every instant (FAIL),
 * or either, the bracket being too wide to say (UNSURE: a reader held up
 * inside it; read again).  Passing on "within tol somewhere in the
 * bracket" would vouch for a line up to the bracket's width beyond tol. */
enum check_verdict { CHECK_PASS, CHECK_FAIL, CHECK_UNSURE };

static inline enum check_verdict check_verdict(int64_t lo, int64_t hi, int64_t k, int64_t tol)
{
	if (k >= hi - tol && k <= lo + tol)
		return CHECK_PASS;
	if (k < lo - tol || k > hi + tol)
		return CHECK_FAIL;
	return CHECK_UNSURE;
}

static inline struct fc_mm *mm_now(void)
{
	return atomic_load_explicit(&fc_int_latch.mm, memory_order_acquire);
}

/* Raises a to at least v (a, v in the counter's or MONOTONIC's units,
 * compared as a signed difference: the counter may wrap). */
static inline void raise_u64(_Atomic uint64_t *a, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);
	while ((int64_t)(v - cur) > 0 &&
	       !atomic_compare_exchange_weak_explicit(a, &cur, v, memory_order_relaxed, memory_order_relaxed))
		;
}

static inline void raise_i64(_Atomic int64_t *a, int64_t v)
{
	int64_t cur = atomic_load_explicit(a, memory_order_relaxed);
	while (v > cur && !atomic_compare_exchange_weak_explicit(a, &cur, v, memory_order_relaxed, memory_order_relaxed))
		;
}

/* The writer's lock, in the address space's page: the caller keeps the
 * page it locked and unlocks that one (start-up replaces the page). */
static inline struct fc_mm *trylock(void)
{
	struct fc_mm *m = mm_now();
	int expected = 0;
	if (atomic_compare_exchange_strong_explicit(&m->lock, &expected, 1, memory_order_acquire,
	                                            memory_order_relaxed))
		return m;
	return NULL;
}

static inline void unlock(struct fc_mm *m)
{
	atomic_store_explicit(&m->lock, 0, memory_order_release);
}

/* ---- kernel samples, shared by the writer's files ---- */

struct sample {
	uint64_t t0, t1;  /* the counter around the kernel read */
	int64_t k;        /* the kernel's clock, read somewhere between */
};

static inline uint64_t mid(const struct sample *s)
{
	return s->t0 + (s->t1 - s->t0) / 2;
}

static inline int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

static inline uint64_t ns_to_counts(double ns)
{
	double c = ns * fc_int_writer.counts_per_ns;
	return c <= 0 ? 0 : c >= 1.8e19 ? UINT64_MAX : (uint64_t)c;
}

/* The tightest of `tries` brackets "counter, kernel clock, counter": 0, or
 * the kernel's -errno. */
int fc_int_sample_clock(clockid_t id, int tries, struct sample *best);

/* fastclock_sync.c (re-anchoring), with the writer's lock held */
void fc_int_resync(unsigned seen, bool force_hard);
void fc_int_go_kernel(const struct line *L, enum fc_reason r, const char *text);

/* fastclock_offsets.c: REALTIME's, TAI's and BOOTTIME's offsets (the
 * rt_ ones and fc_int_boot_follow need not hold the writer's lock) */
bool fc_int_rt_refresh(void);
void fc_int_rt_check(uint64_t t);
void fc_int_offsets_due_kernel(int64_t m);
void fc_int_boot_start(void);
void fc_int_boot_refresh(void);
bool fc_int_boot_follow(void);
/* The same, and *mono the kernel's MONOTONIC its last bracket read
 * (INT64_MIN when none): the check's reading of the kernel's clock. */
bool fc_int_boot_follow_mono(int64_t *mono);
/* The check's look for a resume: the follow only when REALTIME -
 * MONOTONIC moved (fastclock_offsets.c); *mono as above. */
bool fc_int_check_follow(int64_t *mono);
bool fc_int_offsets_moved(void);

/* fastclock_start.c: start-up and a forked child's first read, with the
 * writer's lock held */
void fc_int_init_locked(void);
bool fc_int_new_mm(void);

#endif
