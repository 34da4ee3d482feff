/* SPDX-License-Identifier: MIT */
/*
 * test_fastclock_sync.c: libfastclock's writer (lib/fastclock_sync.c,
 * included here to reach its static functions) and the checks' arithmetic
 * (lib/fastclock_impl.h), apart from any thread or clock.
 *
 * The new line: publish_line given an old line and what a re-anchor
 * measured, and the latch read back.  The invariant the readers'
 * never-backwards rests on (the top of lib/fastclock.c): the new copy's
 * function of the counter, F' (the line up to its end, then its value
 * there), is at or above the old copy's F at every counter value from the
 * new line's anchor to the new line's end, and a writer that publishes
 * after that end raises the floors to what the old copy may have served
 * (floors_after_late) while readers that meet the new line past its end
 * serve the kernel plus the bound: so nothing the old copy served, however
 * late a preempted writer publishes the new one, exceeds what the new one
 * serves later.  The cases: the new period longer, equal and shorter than
 * what was left of the old one (a 10 ms line after a 17.8 ms one, the case the
 * ThreadSanitizer test found: the new line stood still below the old one's
 * values), the old line ahead of and behind the kernel, slewing and
 * restarted from the kernel, and a line cut short at a second's edge where
 * the kernel's rate changes; each published on time, just before and just
 * after its end, and after both ends.
 *
 * The checks: how often they come near a change of the kernel's rate
 * (check_every_ns, and the changes factor_in_force notes), and what a
 * check's bracket lets it say (check_verdict).  Kernel mode after a
 * counter line: its floor (fc_int_go_kernel, kernel_floor); kernel mode
 * while calibrating raises the floor.  fc_info's bound covers the floors'
 * lead; a kernel-mode parent's child on another clock starts afresh.
 */
#include "fastclock.c"  /* the readers' kernel_backed and serve_kernel */
#include "fastclock_sync.c"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define COUNTS_PER_NS 2.3

/* The line and its function as the readers see them. */
static int64_t F(const struct line *L, uint64_t t)
{
	return follow(L, &L->mono, t - L->tsc0);
}

static int64_t F_raw(const struct line *L, uint64_t t)
{
	return follow(L, &L->raw, t - L->tsc0);
}

struct line_case {
	const char *name;
	double old_period_ms;   /* the old line's soft end; hard is 1 ms later */
	double into_old_ms;     /* the new anchor, this far into the old line */
	double new_period_ms;   /* the new line's interval */
	double ahead_us;        /* how far the old line runs ahead of the kernel (<0: behind) */
	bool expired;           /* restarted from the kernel instead of slewed */
};

static const struct line_case cases[] = {
	{ "shorter after longer, ahead (the case found)", 16.8, 0.033, 10, 125, false },
	{ "shorter after longer, ahead, restarted", 16.8, 0.033, 10, 125, true },
	{ "shorter after longer, behind", 16.8, 2, 10, -40, false },
	{ "equal periods", 10, 9, 10, 3, false },
	{ "longer after shorter", 10, 9.5, 50, 60, false },
	{ "anchored past the old line's end", 10, 12, 10, 80, true },
	{ "shortest after longest", 250, 1, 10, 300, false },
	{ "cut short at a rate change's edge", 16.8, 2, 0.3, 40, false },
};

/* What readers serve from the new copy N at the counter t (fastclock.c's
 * own functions), the floors as they are: on the line before its end; past
 * it, with the writer still holding the lock, kernel_backed (which raises
 * the floor: a probe on a copy of it); once the writer let go, a re-anchor
 * from N's function (at least N's end). */
static int64_t served(const struct line *N, uint64_t t, int64_t kernel, bool writer_holds)
{
	uint64_t d = t - N->tsc0;
	_Atomic int64_t floor = atomic_load(&fc_int_latch.floor_mono);
	if (d < N->hard)
		return serve(seg_at(N->mono.ns0, N->mono.frac0, N->mono.mult, d), &floor);
	if (writer_holds)
		return kernel_backed(N, &N->mono, d, kernel, &floor);
	return serve(F(N, t), &floor);
}

static void check_case(const struct line_case *c)
{
	unit_case("%s", c->name);
	memset(&fc_int_writer, 0, sizeof fc_int_writer);
	fc_int_writer.counts_per_ns = COUNTS_PER_NS;
	fc_int_writer.r_raw = 1 / COUNTS_PER_NS;

	struct line L;
	memset(&L, 0, sizeof L);
	L.flags = L_COUNTER;
	L.tsc0 = 1000000000ULL;
	L.soft = ns_to_counts(c->old_period_ms * 1e6);
	L.hard = ns_to_counts(c->old_period_ms * 1e6 + END_AFTER_DUE_NS);
	L.err = 300;
	L.mono.ns0 = L.raw.ns0 = 5000000000LL;
	/* the old line a little fast (100 ppm), and the kernel at its rate,
	 * ahead_us behind it: the line's lead stays what the checks allow */
	double rate = 1.0001 / COUNTS_PER_NS;
	L.mono.mult = L.raw.mult = mult_of(rate);

	struct anchor a;
	memset(&a, 0, sizeof a);
	a.ta = L.tsc0 + ns_to_counts(c->into_old_ms * 1e6);
	/* the samples just before the anchor (an 80-count bracket) */
	a.sm.t0 = a.sr.t0 = a.ta - 200;
	a.sm.t1 = a.sr.t1 = a.ta - 120;
	int64_t lead = (int64_t)(c->ahead_us * 1000);
	int64_t at_mid = seg_at(L.mono.ns0, L.mono.frac0, L.mono.mult, mid(&a.sm) - L.tsc0);
	a.sm.k = a.sr.k = at_mid - lead;
	a.target = rate;
	fc_int_writer.r_raw = rate;
	a.interval = (int64_t)(c->new_period_ms * 1e6);

	struct judgement j = judge_old_line(&L, &a, a.ta, c->expired);
	CHECK(!j.paused);
	struct line N;
	publish_line(&L, &a, &j, &N);
	struct line cur;
	current_line(&cur);
	CHECK(cur.tsc0 == N.tsc0 && cur.soft == N.soft && cur.hard == N.hard && cur.flags == N.flags &&
	      cur.err == N.err && cur.mono.ns0 == N.mono.ns0 && cur.mono.mult == N.mono.mult &&
	      cur.raw.ns0 == N.raw.ns0 && cur.raw.mult == N.raw.mult);
	CHECK(N.flags & L_COUNTER);
	CHECK(N.tsc0 == a.ta);
	/* the writer's own period and end (no end moved out, no ratchet) */
	CHECK(N.soft == ns_to_counts((double)a.interval));
	CHECK(N.hard == ns_to_counts((double)a.interval + END_AFTER_DUE_NS));

	uint64_t old_end = L.tsc0 + L.hard, new_end = N.tsc0 + N.hard;
	uint64_t last = (old_end > new_end ? old_end : new_end) + ns_to_counts(5e6);
	/* published on time, just before its end, just after it, and after
	 * both ends: whatever the old copy served until then (its function at
	 * the publication, at most), the new copy serves no less afterwards */
	uint64_t pubs[] = { a.ta + ns_to_counts(0.5e6), new_end - 1, new_end + ns_to_counts(0.2e6), last };
	for (size_t p = 0; p < sizeof pubs / sizeof pubs[0]; p++) {
		uint64_t t_pub = pubs[p];
		atomic_store(&fc_int_latch.floor_mono, INT64_MIN);
		atomic_store(&fc_int_latch.floor_raw, INT64_MIN);
		/* readers between the latch write and the writer's look at the
		 * counter, then the look, then readers after it let go */
		int bad = 0;
		uint64_t first_bad = 0;
		for (int phase = 0; phase < 2; phase++) {
			if (phase == 1)
				CHECK(floors_after_late(&N, &L, false, t_pub) == (t_pub >= new_end));
			for (uint64_t t = a.ta; t <= last; t += 997) {
				uint64_t u = t < t_pub ? t : t_pub;  /* the old copy's last counter */
				int64_t kernel = seg_at(L.mono.ns0, L.mono.frac0, L.mono.mult, t - L.tsc0) - lead;
				/* a reader at t found the new copy: at t >= t_pub once the
				 * writer let go; from the latch write on while it held on */
				if (phase == 1 && t < t_pub)
					continue;
				if (served(&N, t, kernel, phase == 0) < F(&L, u) && !bad++)
					first_bad = t;
			}
		}
		if (bad)
			fprintf(stderr, "  %s, published %.3f ms after the anchor: the new copy below the old one at %d "
			        "counter values, first %.3f ms after the anchor\n", c->name,
			        (double)(t_pub - a.ta) / COUNTS_PER_NS / 1e6, bad,
			        (double)(first_bad - a.ta) / COUNTS_PER_NS / 1e6);
		CHECK_INT(bad, 0);
		/* the floors raised only when late, and then no higher than the
		 * old copy could have served: never ahead of it */
		if (t_pub >= new_end)
			CHECK(atomic_load(&fc_int_latch.floor_mono) == F(&L, t_pub));
		else
			CHECK(atomic_load(&fc_int_latch.floor_mono) == INT64_MIN);
	}
	/* once closed (the writer looked), a reader past the end with the
	 * writer busy serves the kernel or the line's last value, no more: a
	 * starved writer does not push the clock to the top of its bound */
	struct line closed = N;
	closed.flags &= ~(uint32_t)L_OPEN;
	_Atomic int64_t probe = INT64_MIN;
	uint64_t past = N.hard + ns_to_counts(3e6);
	int64_t k_past = seg_at(L.mono.ns0, L.mono.frac0, L.mono.mult, N.tsc0 + past - L.tsc0) - lead;
	int64_t at_end = F(&N, N.tsc0 + N.hard);
	CHECK_INT(kernel_backed(&closed, &closed.mono, past, k_past, &probe), k_past > at_end ? k_past : at_end);
	CHECK(kernel_backed(&N, &N.mono, past, k_past, &probe) >= k_past + N.err);  /* open */
	atomic_store(&fc_int_latch.floor_mono, INT64_MIN);
	atomic_store(&fc_int_latch.floor_raw, INT64_MIN);
}

/* How often the checks come: every 250 us for changes up to adjtime's
 * 500 ppm, more often for larger ones (RATE_STEP_NS of drift between two),
 * never more often than MIN_CHECK_EVERY_NS. */
static void check_periods(void)
{
	unit_case("check periods");
	CHECK_INT(check_every_ns(0), CHECK_EVERY_NS);
	CHECK_INT(check_every_ns(500e-6), CHECK_EVERY_NS);
	CHECK_INT(check_every_ns(-500e-6), CHECK_EVERY_NS);
	CHECK_INT(check_every_ns(6250e-6), 20000);  /* the PLL's first second, 100 ms offset */
	CHECK_INT(check_every_ns(0.125), MIN_CHECK_EVERY_NS);  /* the PLL's largest: 500 ms / 4 */
	for (double r = 1e-4; r < 1; r *= 1.7) {
		int64_t y = check_every_ns(r);
		CHECK(y >= MIN_CHECK_EVERY_NS && y <= CHECK_EVERY_NS);
		CHECK(y == MIN_CHECK_EVERY_NS || r * (double)y <= RATE_STEP_NS + 1e-3);
	}
}

/* A check says PASS only when the kernel's value is within tol of the line
 * at every instant of its bracket: a bracket wider than the room left says
 * UNSURE, even where the lenient reading ("somewhere in it") would pass a
 * line up to the bracket's width beyond tol. */
static void check_verdicts(void)
{
	unit_case("check verdicts");
	int64_t tol = 300;
	/* the line from 1000 to 1100 over the bracket */
	CHECK_INT(check_verdict(1000, 1100, 1050, tol), CHECK_PASS);
	CHECK_INT(check_verdict(1000, 1100, 800, tol), CHECK_PASS);   /* ahead by 200..300 */
	CHECK_INT(check_verdict(1000, 1100, 1300, tol), CHECK_PASS);  /* behind by 200..300 */
	CHECK_INT(check_verdict(1000, 1100, 799, tol), CHECK_UNSURE); /* ahead by 201..301 */
	CHECK_INT(check_verdict(1000, 1100, 699, tol), CHECK_FAIL);   /* ahead by 301..401 */
	CHECK_INT(check_verdict(1000, 1100, 1401, tol), CHECK_FAIL);
	/* held up 10 us inside the read: the lenient reading would pass a line
	 * 5 us ahead; this one cannot say */
	CHECK_INT(check_verdict(1000, 11000, 6000, tol), CHECK_UNSURE);
	CHECK_INT(check_verdict(1000, 11000, 1000 - tol, tol), CHECK_UNSURE);
	CHECK_INT(check_verdict(1000, 11000, 11000 + tol + 1, tol), CHECK_FAIL);
	/* a bracket of zero width: exactly the line within tol */
	CHECK_INT(check_verdict(5000, 5000, 5000 + tol, tol), CHECK_PASS);
	CHECK_INT(check_verdict(5000, 5000, 5000 + tol + 1, tol), CHECK_FAIL);
}

/* The changes factor_in_force notes, and the period choose_rates would
 * set from them: a per-second change seen coming is followed from when it
 * is seen until RATE_SETTLE_NS past its edge; a change of tick or freq (at
 * once) for RATE_SETTLE_NS; a larger change is not hidden by a smaller one
 * seen meanwhile. */
static void check_rate_changes(void)
{
	unit_case("rate changes followed");
	memset(&fc_int_writer, 0, sizeof fc_int_writer);
	atomic_store(&fc_int_offsets.rt_boot_off, 0);
	atomic_store(&fc_int_offsets.boot_off, 0);
	struct anchor a;
	memset(&a, 0, sizeof a);
	a.sm.k = 10 * NS_PER_S + 300000000;  /* 0.7 s before an edge */
	a.factor = 1.0;
	a.per_second = 0;
	CHECK_INT(factor_in_force(&a), 0);
	CHECK(fc_int_writer.rate_change_until == 0);  /* nothing changed: nothing followed */
	/* a PLL offset handed in: 6250 ppm from the next edge */
	a.sm.k += 100000000;
	a.factor = 1.0;
	a.per_second = 6250e-6;
	CHECK_INT(factor_in_force(&a), 600000000);
	CHECK(a.factor == 1.0);  /* not yet in force */
	CHECK(fc_int_writer.rate_change == 6250e-6);
	CHECK_INT(fc_int_writer.rate_change_until, 11 * NS_PER_S + RATE_SETTLE_NS);
	/* past the edge: in force; still followed */
	a.sm.k = 11 * NS_PER_S + 1000;
	a.factor = 1.0;
	CHECK_INT(factor_in_force(&a), 0);
	CHECK(a.factor == 1.0 + 6250e-6);
	CHECK(a.sm.k < fc_int_writer.rate_change_until);
	/* a frequency step of 100 ppm meanwhile: the larger change still followed */
	a.factor = 1.0001;
	factor_in_force(&a);
	CHECK(fc_int_writer.rate_change == 6250e-6);
	/* after the window: a frequency step of 1000 ppm alone, followed for
	 * RATE_SETTLE_NS from when it is seen */
	a.sm.k = 13 * NS_PER_S;
	a.factor = 1.0011;
	factor_in_force(&a);
	CHECK(fabs(fc_int_writer.rate_change - 1000e-6) < 1e-12);
	CHECK_INT(fc_int_writer.rate_change_until, 13 * NS_PER_S + RATE_SETTLE_NS);
	CHECK_INT(check_every_ns(fc_int_writer.rate_change), 125000);
}

/* What choose_rates publishes for the readers: the check period Y in
 * counts, 250 us with nothing in sight, 20 us from when a 6250 ppm PLL
 * chunk is seen until RATE_SETTLE_NS past its edge, then 250 us again. */
static void check_period_published(void)
{
	unit_case("check period published");
	memset(&fc_int_writer, 0, sizeof fc_int_writer);
	fc_int_writer.counts_per_ns = COUNTS_PER_NS;
	fc_int_writer.r_raw = 1 / COUNTS_PER_NS;
	atomic_store(&fc_int_offsets.rt_boot_off, 0);
	atomic_store(&fc_int_offsets.boot_off, 0);
	int64_t at[] = { 10 * NS_PER_S + 300000000, 10 * NS_PER_S + 400000000, 11 * NS_PER_S + 500000000,
	                 12 * NS_PER_S + 1000, 13 * NS_PER_S + 500000000 };
	double per_second[] = { 0, 6250e-6, 6250e-6, 6250e-6, 6250e-6 };
	int64_t want_ns[] = { CHECK_EVERY_NS, 20000, 20000, CHECK_EVERY_NS, CHECK_EVERY_NS };
	for (int i = 0; i < 5; i++) {
		struct anchor a;
		memset(&a, 0, sizeof a);
		a.sm.k = a.sr.k = at[i];
		a.sm.t0 = a.sr.t0 = 1000000 + (uint64_t)i * 1000000000ULL;
		a.sm.t1 = a.sr.t1 = a.sm.t0 + 80;
		a.c0 = a.sm.t0;
		a.c1 = a.c0 + 2000;
		a.factor = 1.0;
		a.per_second = per_second[i];
		choose_rates(&a);
		CHECK_INT(atomic_load(&fc_int_latch.hw_step), ns_to_counts((double)want_ns[i]));
	}
}

/* Kernel mode for good after a counter line (the kernel left the counter):
 * floored at the line's value at the reader's counter, up to the line's
 * end, so that it serves nothing below what the old copy served (whenever
 * the latch sent readers here) and nothing ahead of the line (a floor at
 * the line's end ran the clock up to a line's length ahead of the kernel);
 * a second move to kernel mode keeps that floor. */
static void check_kernel_floor(void)
{
	unit_case("kernel mode after a counter line");
	memset(&fc_int_writer, 0, sizeof fc_int_writer);
	fc_int_writer.counts_per_ns = COUNTS_PER_NS;
	struct line L;
	memset(&L, 0, sizeof L);
	L.flags = L_COUNTER;
	L.tsc0 = 1000000000ULL;
	L.soft = ns_to_counts(250e6);
	L.hard = ns_to_counts(251e6);
	L.err = 300;
	L.mono.ns0 = L.raw.ns0 = 5000000000LL;
	L.mono.mult = L.raw.mult = mult_of(1.0001 / COUNTS_PER_NS);
	fc_int_go_kernel(&L, FC_REASON_KERNEL_LEFT, "test");
	struct line K;
	current_line(&K);
	CHECK(!(K.flags & L_COUNTER));
	CHECK(K.hard == UINT64_MAX && K.soft == 0 && fc_int_writer.permanent);
	int bad = 0;
	for (uint64_t t = L.tsc0; t <= L.tsc0 + L.hard + 100000; t += 9973)
		if (kernel_floor(&K, &K.mono, t) != F(&L, t) || kernel_floor(&K, &K.raw, t) != F_raw(&L, t))
			bad++;
	CHECK_INT(bad, 0);
	/* 2 ms into the line, the floor is the line there, not its end 249 ms on */
	uint64_t t = L.tsc0 + ns_to_counts(2e6);
	CHECK(kernel_floor(&K, &K.mono, t) < F(&L, L.tsc0 + L.hard) - 200000000);
	/* a counter behind the anchor (reset): the line's end */
	CHECK(kernel_floor(&K, &K.mono, L.tsc0 - 5) == F(&L, L.tsc0 + L.hard));
	/* again (kernel mode to kernel mode): the same floor */
	fc_int_go_kernel(&K, FC_REASON_KERNEL_CLOCK_FAILED, "test");
	struct line K2;
	current_line(&K2);
	CHECK(kernel_floor(&K2, &K2.mono, t) == kernel_floor(&K, &K.mono, t));
	/* from nothing (start-up): the floor is ns0 */
	struct line zero;
	memset(&zero, 0, sizeof zero);
	zero.mono.ns0 = 77;
	fc_int_go_kernel(&zero, FC_REASON_NO_FREQUENCY, "test");
	current_line(&K2);
	CHECK(K2.tail == 0 && kernel_floor(&K2, &K2.mono, t) == 77);
}

/* serve_kernel on the tail, against the real kernel clock: a CPU whose
 * counter is past the tail serves the line's end and raises the floor, so
 * one whose counter disagrees (behind) serves no less; a counter behind
 * the anchor, or a tail far ahead of the kernel (a pause), gives the
 * kernel plus the bound, not the line's end. */
static void check_serve_tail(void)
{
	unit_case("kernel mode on the tail");
	memset(&fc_int_writer, 0, sizeof fc_int_writer);
	fc_int_writer.counts_per_ns = COUNTS_PER_NS;
	for (int c = 0; c < 3; c++) {
		int64_t ahead = c == 2 ? 5000000 : 100000;  /* the line's start ahead of the kernel */
		struct line L;
		memset(&L, 0, sizeof L);
		L.flags = L_COUNTER;
		L.tsc0 = 1000000000ULL;
		L.hard = ns_to_counts(200000);
		L.err = 300;
		L.mono.ns0 = fc_kclock_ns(CLOCK_MONOTONIC) + ahead;
		L.mono.mult = mult_of(1 / COUNTS_PER_NS);
		L.raw = L.mono;
		fc_int_go_kernel(&L, FC_REASON_KERNEL_LEFT, "test");
		struct line K;
		current_line(&K);
		_Atomic int64_t floor = INT64_MIN;
		int64_t end = F(&L, L.tsc0 + L.hard);
		if (c == 0) {
			/* past the tail, then a CPU whose counter is behind it */
			int64_t a = serve_kernel(CLOCK_MONOTONIC, &K, &K.mono, L.tsc0 + L.hard + 5, &floor);
			CHECK(a >= end);
			CHECK(atomic_load(&floor) >= end);
			int64_t b = serve_kernel(CLOCK_MONOTONIC, &K, &K.mono, L.tsc0 + 10, &floor);
			CHECK(b >= a);
		} else {
			/* c 1: a counter behind the anchor; c 2: 5 ms ahead (a pause) */
			uint64_t t = c == 1 ? L.tsc0 - 5 : L.tsc0 + L.hard + 5;
			int64_t k0 = fc_kclock_ns(CLOCK_MONOTONIC);
			int64_t v = serve_kernel(CLOCK_MONOTONIC, &K, &K.mono, t, &floor);
			int64_t k1 = fc_kclock_ns(CLOCK_MONOTONIC);
			CHECK(v >= k0 + L.err && v <= k1 + L.err);
			CHECK(v < end);
		}
	}
}

/* Kernel mode while calibrating (not for good: a counter line follows,
 * started from samples a held-up writer took earlier) raises the floor
 * with each kernel value it serves, so that line never serves below one;
 * for good, with no tail, it leaves the floor alone. */
static void check_calibrating_raises_floor(void)
{
	unit_case("kernel mode while calibrating raises the floor");
	for (int for_good = 0; for_good < 2; for_good++) {
		struct line K;
		memset(&K, 0, sizeof K);
		K.mono.ns0 = K.raw.ns0 = INT64_MIN;
		K.hard = for_good ? UINT64_MAX : 1000;
		_Atomic int64_t floor = INT64_MIN;
		int64_t k0 = fc_kclock_ns(CLOCK_MONOTONIC);
		int64_t v = serve_kernel(CLOCK_MONOTONIC, &K, &K.mono, 5, &floor);
		CHECK(v >= k0);
		if (for_good)
			CHECK(atomic_load(&floor) == INT64_MIN);
		else
			CHECK(atomic_load(&floor) == v);
	}
}

/* fc_info's bound covers what the floors serve: a floor 5 ms ahead of the
 * kernel (a writer that published late raised it to the old line's value)
 * is stated, not the line's bound alone.  The library started for real. */
static void check_info_floor_lead(void)
{
	unit_case("fc_info states the floors' lead");
	atomic_store(&fc_int_latch.floor_mono, INT64_MIN);
	atomic_store(&fc_int_latch.floor_raw, INT64_MIN);
	memset(&fc_int_writer, 0, sizeof fc_int_writer);
	struct fc_info in;
	CHECK_INT(fc_info(&in), 0);
	int64_t line_bound = in.error_bound_ns;
	CHECK(line_bound < 5000000);
	int64_t f = fc_kclock_ns(CLOCK_MONOTONIC) + 5000000;
	atomic_store(&fc_int_latch.floor_mono, f);
	CHECK_INT(fc_info(&in), 0);
	int64_t after = fc_kclock_ns(CLOCK_MONOTONIC);
	/* f less the kernel's MONOTONIC when fc_info read it */
	CHECK(in.error_bound_ns >= f - after && in.error_bound_ns <= 5000000);
	int64_t k0 = fc_kclock_ns(CLOCK_MONOTONIC);
	int64_t v = fc_now_ns();
	CHECK(v - k0 <= in.error_bound_ns);
	atomic_store(&fc_int_latch.floor_mono, INT64_MIN);
	CHECK_INT(fc_info(&in), 0);
	CHECK(in.error_bound_ns < 5000000);
}

/* A child forked into another time namespace by a parent in kernel mode
 * (the kernel left the counter): the parent's floors are another clock's,
 * far ahead of the child's MONOTONIC (played here by floors 10 s ahead of
 * the one namespace), and the child's first read starts afresh on its own
 * clock (fc_int_new_mm) instead of serving them.  Last: the test process
 * stays in kernel mode for good. */
static void check_child_of_kernel_mode(void)
{
	unit_case("a kernel-mode parent's child on another clock");
	(void)fc_now_ns();
	struct fc_mm *held = trylock();
	CHECK(held != NULL);
	if (!held)
		return;
	struct line L;
	current_line(&L);
	fc_int_go_kernel(&L, FC_REASON_KERNEL_LEFT, "test");
	unlock(held);
	int km = 0;
	(void)slow(MONO, &km);
	CHECK_INT(km, 1);
	atomic_store(&fc_int_latch.floor_mono, fc_kclock_ns(CLOCK_MONOTONIC) + 10 * NS_PER_S);
	CHECK(fc_now_ns() >= fc_kclock_ns(CLOCK_MONOTONIC) + 9 * NS_PER_S);  /* the parent serves its floor */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int64_t k0 = fc_kclock_ns(CLOCK_MONOTONIC);
		int64_t v = fc_now_ns();
		int64_t k1 = fc_kclock_ns(CLOCK_MONOTONIC);
		_exit(v >= k0 && v <= k1 + 1000000 ? 0 : 1);
	}
	int status = 0;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* parts_to_timespec (the fast path's timespec: base's seconds divided
 * while the counter is read, the carry after q) agrees with the whole sum
 * floor-divided, at every edge: q carrying base's ns past a second, q of a
 * second or more (divided whole), bases before the epoch, and at random. */
static struct timespec floor_split(int64_t v)
{
	struct timespec ts;
	int64_t sec = v / NS_PER_S, ns = v % NS_PER_S;
	if (ns < 0) {
		ns += NS_PER_S;
		sec--;
	}
	ts.tv_sec = (time_t)sec;
	ts.tv_nsec = (long)ns;
	return ts;
}

static void check_timespec_parts(void)
{
	unit_case("parts_to_timespec: base + q split as the whole sum");
	const int64_t bases[] = {0, 1, NS_PER_S - 1, NS_PER_S, NS_PER_S + 1, 1764370000LL * NS_PER_S + 999999999,
	                         1764370000LL * NS_PER_S, 1764370000LL * NS_PER_S + 1, -1, -NS_PER_S, -NS_PER_S - 1,
	                         INT64_MAX / 2};
	const int64_t qs[] = {0, 1, 2, NS_PER_S - 2, NS_PER_S - 1, NS_PER_S, NS_PER_S + 1, 3 * NS_PER_S + 7};
	int bad = 0;
	for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
		for (size_t j = 0; j < sizeof qs / sizeof qs[0]; j++) {
			struct timespec got, want = floor_split(bases[i] + qs[j]);
			parts_to_timespec(bases[i], qs[j], &got);
			if (got.tv_sec != want.tv_sec || got.tv_nsec != want.tv_nsec) {
				if (bad++ < 5)
					fprintf(stderr, "  base %lld q %lld: %lld.%09ld, want %lld.%09ld\n", (long long)bases[i],
					        (long long)qs[j], (long long)got.tv_sec, got.tv_nsec, (long long)want.tv_sec,
					        want.tv_nsec);
			}
		}
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int k = 0; k < 1000000; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int64_t base = (int64_t)(x >> 2) - (int64_t)(x & 1 ? 0 : (1ll << 61));
		int64_t q = (int64_t)((x >> 20) % (2 * (uint64_t)NS_PER_S));
		struct timespec got, want = floor_split(base + q);
		parts_to_timespec(base, q, &got);
		if (got.tv_sec != want.tv_sec || got.tv_nsec != want.tv_nsec)
			bad++;
	}
	CHECK_INT(bad, 0);
}

/* A counter that went back (reset across a suspend): the marks kept in
 * counts, the last check's and when REALTIME's offset is next due, are
 * ahead of it; judge_old_line sets both so that the next read checks and
 * the next REALTIME read refreshes, not only once the counter passes them
 * again. */
static void check_counter_reset_marks(void)
{
	unit_case("a counter reset makes the next check and REALTIME refresh due");
	(void)fc_now_ns();  /* started */
	struct fc_mm *m = mm_now();
	atomic_store(&m->hw, 5ull * 86400 * 3000000000ull);
	atomic_store(&fc_int_offsets.rt_due, 5ull * 86400 * 3000000000ull);
	struct line L;
	memset(&L, 0, sizeof L);
	L.flags = L_COUNTER;
	L.tsc0 = 4ull * 86400 * 3000000000ull;
	L.soft = L.hard = 3000000000ull;
	struct anchor a;
	memset(&a, 0, sizeof a);
	a.sm.t0 = a.sr.t0 = 1000000;
	a.sm.t1 = a.sr.t1 = 1000100;
	a.sm.k = a.sr.k = fc_kclock_ns(CLOCK_MONOTONIC);
	a.ta = 1000200;
	struct judgement j = judge_old_line(&L, &a, 1000300, false);
	CHECK(j.paused && j.expired);
	CHECK_INT(atomic_load(&m->hw), 0);
	CHECK(!((int64_t)(1000300 - atomic_load(&fc_int_offsets.rt_due)) < 0));
}

int main(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_case(&cases[i]);
	check_periods();
	check_verdicts();
	check_rate_changes();
	check_period_published();
	check_kernel_floor();
	check_serve_tail();
	check_calibrating_raises_floor();
	check_info_floor_lead();
	check_child_of_kernel_mode();
	check_timespec_parts();
	check_counter_reset_marks();
	return unit_done("test_fastclock_sync");
}
