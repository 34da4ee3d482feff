/*
 * test_fastclock_line.c: the writer's construction of a new line, apart
 * from any thread or clock: publish_line (lib/fastclock_sync.c, included
 * here to reach its static functions) given an old line and what a
 * re-anchor measured, and the latch read back.  The invariant the readers'
 * never-backwards rests on (the top of lib/fastclock.c): the new copy's
 * function of the counter, F' (the line up to its end, then its value
 * there), is at or above the old copy's F at every counter value from the
 * new line's anchor to its publication (the old copy is in force until
 * then), so that nothing the old copy served, however late a preempted
 * writer publishes the new one, exceeds what the new one serves later.
 * Each case is published on time (0.5 ms after its anchor: the line keeps
 * the end its writer chose, which may be a second's edge where the
 * kernel's rate changes) and late (5 ms past both lines' ends); a line
 * that ends at such an edge keeps its end even when late.  The cases: the new period longer, equal and shorter than what was
 * left of the old one (a 10 ms line after a 17.8 ms one, the case the
 * ThreadSanitizer test found: the new line stood still below the old one's
 * values), the old line ahead of and behind the kernel, slewing and
 * restarted from the kernel.
 */
#include "fastclock_sync.c"
#include "unit.h"

#include <stdio.h>

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
	bool at_edge;           /* the new line ends at a second's edge where the kernel's rate changes */
};

static const struct line_case cases[] = {
	{ "shorter after longer, ahead (the case found)", 16.8, 0.033, 10, 125, false, false },
	{ "shorter after longer, ahead, restarted", 16.8, 0.033, 10, 125, true, false },
	{ "shorter after longer, behind", 16.8, 2, 10, -40, false, false },
	{ "equal periods", 10, 9, 10, 3, false, false },
	{ "longer after shorter", 10, 9.5, 50, 60, false, false },
	{ "anchored past the old line's end", 10, 12, 10, 80, true, false },
	{ "shortest after longest", 250, 1, 10, 300, false, false },
	{ "ending at a rate change's edge", 16.8, 2, 3, 40, false, true },
};

static void check_case(const struct line_case *c, bool late)
{
	unit_case("%s, published %s", c->name, late ? "late" : "on time");
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
	/* the old line a little fast (100 ppm), as a line slewing would be */
	L.mono.mult = L.raw.mult = mult_of(1.0001 / COUNTS_PER_NS);

	struct anchor a;
	memset(&a, 0, sizeof a);
	a.ta = L.tsc0 + ns_to_counts(c->into_old_ms * 1e6);
	/* the samples just before the anchor: the kernel behind the old line
	 * by ahead_us (an 80-count bracket) */
	a.sm.t0 = a.sr.t0 = a.ta - 200;
	a.sm.t1 = a.sr.t1 = a.ta - 120;
	int64_t at_mid = seg_at(L.mono.ns0, L.mono.frac0, L.mono.mult, mid(&a.sm) - L.tsc0);
	a.sm.k = a.sr.k = at_mid - (int64_t)(c->ahead_us * 1000);
	a.target = 1 / COUNTS_PER_NS;
	a.interval = (int64_t)(c->new_period_ms * 1e6);
	a.at_edge = c->at_edge;

	struct judgement j = judge_old_line(&L, &a, a.ta, c->expired);
	CHECK(!j.paused);
	uint64_t intended = ns_to_counts((double)a.interval + END_AFTER_DUE_NS);
	uint64_t old_end = L.tsc0 + L.hard;
	uint64_t now = late ? (old_end > a.ta + intended ? old_end : a.ta + intended) + ns_to_counts(5e6)
	                    : a.ta + ns_to_counts(0.5e6);
	publish_line(&L, &a, &j, now);
	struct line N;
	current_line(&N);
	CHECK(N.flags & L_COUNTER);
	CHECK(N.tsc0 == a.ta);

	/* every counter value from the anchor to the publication, and the ends
	 * before it and their neighbours */
	uint64_t ends[] = { L.tsc0 + L.hard, N.tsc0 + N.hard, N.tsc0 + N.soft, now };
	int bad = 0;
	uint64_t first_bad = 0;
	if (c->at_edge) {
		/* its end kept, late or not: past the edge its rate is wrong (the
		 * late case's exception: the end rule yields to the edge) */
		CHECK(N.hard == intended);
		return;
	}
	for (uint64_t t = a.ta; t <= now; t += 997) {
		if (F(&N, t) < F(&L, t) || F_raw(&N, t) < F_raw(&L, t)) {
			if (!bad++)
				first_bad = t;
		}
	}
	for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
		for (int k = -2; k <= 2; k++) {
			uint64_t t = ends[i] + (uint64_t)(int64_t)k;
			if (t >= a.ta && t <= now && (F(&N, t) < F(&L, t) || F_raw(&N, t) < F_raw(&L, t)) && !bad++)
				first_bad = t;
		}
	if (bad)
		fprintf(stderr, "  %s: the new copy below the old one at %d counter values, first %.3f ms after "
		        "the anchor, by %lld ns\n", c->name, bad, (double)(first_bad - a.ta) / COUNTS_PER_NS / 1e6,
		        (long long)(F(&L, first_bad) - F(&N, first_bad)));
	CHECK_INT(bad, 0);
	if (late) {
		/* its end no earlier than the old one's, nor than its publication */
		CHECK(N.tsc0 + N.hard >= old_end);
		CHECK(N.tsc0 + N.hard > now);
	} else {
		CHECK(N.hard == intended);  /* the writer's own end kept */
	}
}

int main(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		check_case(&cases[i], false);
		check_case(&cases[i], true);
	}
	return unit_done("test_fastclock_line");
}
