/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of lib/tscsync: the cross-CPU warp test fed SIMULATED counters
 * with a known offset, a known backward step and known gaps between reads,
 * so that what it must report is known to the cycle.  The threaded runner
 * is tested the same way (a simulated counter shared by two threads), then
 * once on this machine's real counter, asserting only what holds on any
 * machine, busy or not.  Needs nothing but lib/: tests/arm64/run builds it
 * for aarch64 too.
 */
#include "counter.h"
#include "tscsync.h"
#include "unit.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>

/* Two counters over one simulated real time: A reads t, B reads t + off_b.
 * Each read happens gap (or the next of gaps[]) after the previous one.  At
 * read number glitch_at, B's value is glitch cycles lower, once. */
struct sim {
	uint64_t t;
	uint64_t gap;
	const uint64_t *gaps;
	int n_gaps, k;
	int64_t off_b;
	uint64_t reads, glitch_at;
	int64_t glitch;
};

static uint64_t sim_read(void *arg, int side)
{
	struct sim *s = arg;
	s->t += s->n_gaps ? s->gaps[s->k++ % s->n_gaps] : s->gap;
	s->reads++;
	if (side == FC_SYNC_A)
		return s->t;
	int64_t v = (int64_t)s->t + s->off_b;
	if (s->reads == s->glitch_at)
		v -= s->glitch;
	return (uint64_t)v;
}

static struct sim sim_new(int64_t off_b, uint64_t gap)
{
	return (struct sim){ .t = 1000000000, .gap = gap, .off_b = off_b };
}

static void run(struct fc_sync_acc *acc, struct sim *s, uint64_t rounds)
{
	fc_sync_acc_init(acc);
	fc_sync_alternate(acc, sim_read, s, rounds);
}

/* B ahead of A by more than a one-way trip: A sees time go backwards. */
static void test_offset_ahead(void)
{
	struct sim s = sim_new(1000, 100);
	struct fc_sync_acc acc;
	run(&acc, &s, 1000);
	CHECK_INT(acc.reads[FC_SYNC_A], 1000);
	CHECK_INT(acc.reads[FC_SYNC_B], 1000);
	CHECK_INT(acc.max_back[FC_SYNC_A], 900);   /* b_i - a_(i+1) = 1000 - 100 */
	CHECK_INT(acc.max_back[FC_SYNC_B], 0);
	CHECK_INT(fc_sync_max_back(&acc), 900);
	CHECK_INT(acc.back_steps, 999);            /* every A read after the first */
	CHECK_INT(acc.off_lo, 900);
	CHECK_INT(acc.off_hi, 1100);
	int64_t mid;
	uint64_t half, by;
	CHECK(fc_sync_offset(&acc, &mid, &half));
	CHECK_INT(mid, 1000);
	CHECK_INT(half, 101);   /* the round trip, and one count */
	CHECK(!fc_sync_moved(&acc, &by));
}

static void test_offset_behind(void)
{
	struct sim s = sim_new(-1000, 100);
	struct fc_sync_acc acc;
	run(&acc, &s, 500);
	CHECK_INT(acc.max_back[FC_SYNC_A], 0);
	CHECK_INT(acc.max_back[FC_SYNC_B], 900);   /* a_i - b_i = 1000 - 100 */
	CHECK_INT(acc.off_lo, -1100);
	CHECK_INT(acc.off_hi, -900);
	int64_t mid;
	uint64_t half;
	CHECK(fc_sync_offset(&acc, &mid, &half));
	CHECK_INT(mid, -1000);
	CHECK_INT(half, 101);   /* the round trip, and one count */
}

/* An offset smaller than the round trip cannot be seen as a warp, but the
 * bounds still contain it. */
static void test_small_offset(void)
{
	struct sim s = sim_new(30, 100);
	struct fc_sync_acc acc;
	run(&acc, &s, 200);
	CHECK_INT(acc.back_steps, 0);
	CHECK_INT(fc_sync_max_back(&acc), 0);
	CHECK_INT(acc.off_lo, -70);
	CHECK_INT(acc.off_hi, 130);
	int64_t mid;
	uint64_t half;
	CHECK(fc_sync_offset(&acc, &mid, &half));
	CHECK_INT(mid, 30);
	CHECK_INT(half, 101);   /* the round trip, and one count */
	CHECK(mid - (int64_t)half <= 30 && 30 <= mid + (int64_t)half);
}

/* Synchronised counters, one read of B glitching 5000 cycles back: the
 * backward step is reported with its exact size, once, and the bounds
 * cross (the offset "moved"). */
static void test_known_backward_step(void)
{
	struct sim s = sim_new(0, 100);
	s.glitch_at = 500;   /* read 500 is B's (reads alternate A, B from 1) */
	s.glitch = 5000;
	struct fc_sync_acc acc;
	run(&acc, &s, 1000);
	CHECK_INT(acc.back_steps, 1);
	CHECK_INT(acc.max_back[FC_SYNC_B], 4900);  /* 5000 back, 100 later */
	CHECK_INT(acc.max_back[FC_SYNC_A], 0);
	CHECK_INT(fc_sync_max_back(&acc), 4900);
	CHECK_INT(acc.off_lo, -100);
	CHECK_INT(acc.off_hi, -4900);
	int64_t mid;
	uint64_t half, by = 0;
	CHECK(!fc_sync_offset(&acc, &mid, &half));
	CHECK(fc_sync_moved(&acc, &by));
	CHECK_INT(by, 4800);
}

/* Uneven gaps: the tightest bracket on each side is the one kept. */
static void test_tightest_bracket(void)
{
	/* Gaps alternate after-A, after-B: the shortest after an A read is 40,
	 * the shortest after a B read is 60. */
	static const uint64_t gaps[] = { 300, 250, 60, 400, 180, 40, 500, 90 };
	struct sim s = sim_new(500, 0);
	s.gaps = gaps;
	s.n_gaps = 8;
	struct fc_sync_acc acc;
	run(&acc, &s, 400);
	/* The gap before a read is the one after the previous read: the
	 * sequence is gap, A, gap, B, ...; B's value minus the A before it is
	 * off + the gap between them, and so on. */
	CHECK_INT(acc.off_hi, 500 + 40);
	CHECK_INT(acc.off_lo, 500 - 60);
	CHECK_INT(acc.max_back[FC_SYNC_A], 440);
}

/* Not alternating (the kernel's spinlock lets a side go twice): a counter
 * going back on one CPU is kept apart, and cross bounds still work. */
static void test_any_interleaving(void)
{
	struct fc_sync_acc acc;
	fc_sync_acc_init(&acc);
	fc_sync_acc_add(&acc, FC_SYNC_A, 100);
	fc_sync_acc_add(&acc, FC_SYNC_A, 90);    /* A back by 10 on its own */
	fc_sync_acc_add(&acc, FC_SYNC_B, 200);   /* B - A <= 200 - 90 */
	fc_sync_acc_add(&acc, FC_SYNC_B, 210);
	fc_sync_acc_add(&acc, FC_SYNC_A, 150);   /* A sees 210 -> 150: back 60 */
	CHECK_INT(acc.max_back_self, 10);
	CHECK_INT(acc.max_back[FC_SYNC_A], 60);
	CHECK_INT(acc.back_steps, 2);
	CHECK_INT(acc.off_hi, 110);
	CHECK_INT(acc.off_lo, 60);
	CHECK_INT(fc_sync_max_back(&acc), 60);
}

/* The threaded runner with a simulated counter: the turn-taking makes the
 * reads strictly alternate, so the result is exact even across threads. */
struct shared_sim {
	atomic_ullong t;
	int64_t off_b;
};

static uint64_t shared_read(void *arg, int side)
{
	struct shared_sim *s = arg;
	uint64_t t = atomic_fetch_add(&s->t, 100) + 100;
	return side == FC_SYNC_A ? t : (uint64_t)((int64_t)t + s->off_b);
}

static void test_threads_simulated(void)
{
	struct shared_sim s = { 1000000, 1000 };
	struct fc_sync_opts o = {
		.cpu_a = -1, .cpu_b = -1, .seconds = 0, .min_rounds = 300, .max_seconds = 30,
		.read = shared_read, .arg = &s,
	};
	struct fc_sync_result r;
	CHECK_INT(fc_sync_pair(&o, &r), 0);
	CHECK(r.rounds >= 1);
	CHECK(!r.cut_short);
	CHECK_INT(r.acc.max_back[FC_SYNC_A], 900);
	CHECK_INT(r.acc.max_back[FC_SYNC_B], 0);
	CHECK_INT(r.acc.off_lo, 900);
	CHECK_INT(r.acc.off_hi, 1100);
	CHECK(r.acc.reads[FC_SYNC_A] >= r.rounds && r.acc.reads[FC_SYNC_A] <= r.rounds + 1);
}

static void test_bad_arguments(void)
{
	struct fc_sync_result r;
	struct fc_sync_opts o = { .cpu_a = 0, .cpu_b = 0, .seconds = 0.01, .min_rounds = 1, .max_seconds = 1 };
	CHECK_INT(fc_sync_pair(&o, &r), -EINVAL);          /* the same CPU twice */
	o.cpu_b = CPU_SETSIZE;
	CHECK_INT(fc_sync_pair(&o, &r), -EINVAL);          /* out of range */
	o.cpu_b = -5;
	CHECK_INT(fc_sync_pair(&o, &r), -EINVAL);
	/* A CPU that is not online: the kernel refuses the pinning. */
	o.cpu_b = CPU_SETSIZE - 1;
	if (FC_COUNTER_KIND != FC_COUNTER_NONE)
		CHECK_INT(fc_sync_pair(&o, &r), -EINVAL);
}

/* The real counter between two CPUs this process may use.  Only what holds
 * on any machine: it runs, and what it reports is consistent. */
static void test_real_counter(void)
{
	struct fc_counter_info ci;
	fc_counter_probe(&ci);
	cpu_set_t set;
	CPU_ZERO(&set);
	if (ci.usable != 0 || sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 2) {
		printf("test_tscsync: fewer than 2 CPUs allowed (or no counter): real-counter test skipped\n");
		return;
	}
	int cpus[2], n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	struct fc_sync_opts o = { .cpu_a = cpus[0], .cpu_b = cpus[1], .seconds = 0.02, .min_rounds = 100,
	                          .max_seconds = 20 };
	struct fc_sync_result r;
	int e = fc_sync_pair(&o, &r);
	if (e == -EINVAL || e == -EPERM) {
		printf("test_tscsync: pinning refused here (%d): real-counter test skipped\n", e);
		return;
	}
	CHECK_INT(e, 0);
	CHECK(r.rounds >= 1);
	if (r.rounds < 2) {   /* a machine too busy to run both threads: nothing more to check */
		printf("test_tscsync: only %llu round(s) in %.1f s: consistency not checked\n",
		       (unsigned long long)r.rounds, r.elapsed_s);
		return;
	}
	CHECK(r.acc.have_lo && r.acc.have_hi);
	uint64_t by;
	int64_t mid;
	uint64_t half;
	/* Either the bounds hold together, or a warp explains them. */
	CHECK(fc_sync_offset(&r.acc, &mid, &half) || (fc_sync_moved(&r.acc, &by) && fc_sync_max_back(&r.acc) > 0));
	CHECK_INT(r.acc.max_back_self, 0);   /* one CPU never goes back on itself */
}

int main(void)
{
	test_offset_ahead();
	test_offset_behind();
	test_small_offset();
	test_known_backward_step();
	test_tightest_bracket();
	test_any_interleaving();
	test_threads_simulated();
	test_bad_arguments();
	test_real_counter();
	return unit_done("test_tscsync");
}
