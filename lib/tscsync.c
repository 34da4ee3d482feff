/* SPDX-License-Identifier: MIT */
/*
 * tscsync.c: the cross-CPU counter test of tscsync.h.
 *
 * The accumulator is plain arithmetic.  The threaded runner only adds the
 * turn-taking: the accumulator lives in shared memory but is touched only by
 * the thread that holds the turn, and the turn passes with a release store
 * and is taken with an acquire load, so each side sees everything the other
 * wrote (C11 <stdatomic.h>, no lock).  The counter read comes after the
 * acquire load (counter.h orders it), and before the release store that
 * hands over the turn, so reads are ordered in real time as they are in the
 * accumulator.
 *
 * A busy machine must not hang or fail the test: a side waiting for its turn
 * checks the clock every few thousand spins and yields the CPU now and
 * then, and the whole test ends at max_seconds whatever happened.
 */
#include "tscsync.h"
#include "counter.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

/* ---- the arithmetic ---- */

void fc_sync_acc_init(struct fc_sync_acc *acc)
{
	memset(acc, 0, sizeof *acc);
	acc->last_side = -1;
}

/* a - b as a signed number, without relying on unsigned-to-signed
 * conversion of out-of-range values. */
static int64_t sdiff(uint64_t a, uint64_t b)
{
	if (a >= b)
		return a - b > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(a - b);
	return b - a > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)(b - a);
}

void fc_sync_acc_add(struct fc_sync_acc *acc, int side, uint64_t value)
{
	side = side == FC_SYNC_B ? FC_SYNC_B : FC_SYNC_A;
	acc->reads[side]++;
	if (acc->last_side >= 0) {
		bool cross = acc->last_side != side;
		if (value < acc->last) {
			uint64_t back = acc->last - value;
			acc->back_steps++;
			uint64_t *max = cross ? &acc->max_back[side] : &acc->max_back_self;
			if (back > *max)
				*max = back;
		}
		if (cross && side == FC_SYNC_A) {
			/* last = b_i, value = a_(i+1): B - A >= b_i - a_(i+1). */
			int64_t d = sdiff(acc->last, value);
			if (!acc->have_lo || d > acc->off_lo)
				acc->off_lo = d;
			acc->have_lo = true;
		} else if (cross) {
			/* last = a_i, value = b_i: B - A <= b_i - a_i. */
			int64_t d = sdiff(value, acc->last);
			if (!acc->have_hi || d < acc->off_hi)
				acc->off_hi = d;
			acc->have_hi = true;
		}
	}
	acc->last = value;
	acc->last_side = side;
}

uint64_t fc_sync_max_back(const struct fc_sync_acc *acc)
{
	uint64_t m = acc->max_back[0] > acc->max_back[1] ? acc->max_back[0] : acc->max_back[1];
	return m > acc->max_back_self ? m : acc->max_back_self;
}

bool fc_sync_offset(const struct fc_sync_acc *acc, int64_t *mid, uint64_t *half)
{
	if (!acc->have_lo || !acc->have_hi || acc->off_lo > acc->off_hi)
		return false;
	/* Halve each bound first: their sum could overflow. */
	*mid = acc->off_lo / 2 + acc->off_hi / 2 + (acc->off_lo % 2 + acc->off_hi % 2) / 2;
	/* Plus one count: a value v stands for any moment the counter read v,
	 * so each bound is good to a count (a coarse counter, such as a 25 MHz
	 * cntvct_el0, can read equal values on both sides). */
	*half = ((uint64_t)acc->off_hi - (uint64_t)acc->off_lo + 1) / 2 + 1;
	return true;
}

bool fc_sync_moved(const struct fc_sync_acc *acc, uint64_t *by)
{
	if (!acc->have_lo || !acc->have_hi || acc->off_lo <= acc->off_hi)
		return false;
	*by = (uint64_t)acc->off_lo - (uint64_t)acc->off_hi;
	return true;
}

void fc_sync_alternate(struct fc_sync_acc *acc, fc_sync_read_fn read, void *arg, uint64_t rounds)
{
	for (uint64_t i = 0; i < rounds; i++) {
		fc_sync_acc_add(acc, FC_SYNC_A, read(arg, FC_SYNC_A));
		fc_sync_acc_add(acc, FC_SYNC_B, read(arg, FC_SYNC_B));
	}
}

/* ---- two threads taking turns ---- */

struct shared {
	atomic_int turn;          /* the side that reads next */
	atomic_int stop;          /* set once by whoever ends the test */
	atomic_int ready;         /* sides pinned and waiting */
	atomic_int err;           /* the first error, -errno */
	struct fc_sync_acc acc;   /* only the turn holder touches it */
	uint64_t rounds;          /* likewise (counted by side B) */
	bool cut_short;           /* likewise */
	const struct fc_sync_opts *opts;
	struct timespec start;
};

struct side {
	struct shared *sh;
	int me;
};

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static uint64_t read_counter(void *arg, int side)
{
	(void)arg;
	(void)side;
	return fc_counter_read();
}

static void fail(struct shared *sh, int err)
{
	int none = 0;
	atomic_compare_exchange_strong(&sh->err, &none, err);
	atomic_store(&sh->stop, 1);
}

static int pin(int cpu)
{
	if (cpu < 0)
		return 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (e)
		return -e;
	/* The kernel moves a thread that narrows its own mask before the call
	 * returns; if we are not there, the pinning did not take. */
	return sched_getcpu() == cpu ? 0 : -EIO;
}

/* Spins until it is side me's turn.  false: the test is over. */
static bool wait_turn(struct shared *sh, int me)
{
	/* Pinned apart, the other side answers within a microsecond: yield
	 * only when it is clearly not running.  Not pinned, both sides may
	 * share a CPU, and the other can only run when this one yields. */
	unsigned long every = sh->opts->cpu_a >= 0 ? 4096 : 16;
	unsigned long spins = 0;
	while (atomic_load_explicit(&sh->turn, memory_order_acquire) != me) {
		if (atomic_load_explicit(&sh->stop, memory_order_relaxed))
			return false;
		fc_cpu_relax();
		/* Now and then: is the test over, and let others run. */
		if (++spins % every == 0) {
			if (since(&sh->start) > sh->opts->max_seconds) {
				atomic_store(&sh->stop, 1);
				return false;
			}
			sched_yield();
		}
	}
	return true;
}

/* After each of B's reads: end the test when it has run long enough and
 * done enough rounds, or ran out of time whatever it did. */
static void maybe_stop(struct shared *sh)
{
	sh->rounds++;
	if (sh->rounds % 256 != 0)
		return;
	double t = since(&sh->start);
	if ((t >= sh->opts->seconds && sh->rounds >= sh->opts->min_rounds) || t > sh->opts->max_seconds) {
		sh->cut_short = sh->rounds < sh->opts->min_rounds;
		atomic_store_explicit(&sh->stop, 1, memory_order_relaxed);
	}
}

static void *side_main(void *p)
{
	struct side *s = p;
	struct shared *sh = s->sh;
	const struct fc_sync_opts *o = sh->opts;
	fc_sync_read_fn read = o->read ? o->read : read_counter;
	int other = s->me == FC_SYNC_A ? FC_SYNC_B : FC_SYNC_A;
	int e = pin(s->me == FC_SYNC_A ? o->cpu_a : o->cpu_b);
	if (e) {
		fail(sh, e);
		return NULL;
	}
	atomic_fetch_add(&sh->ready, 1);
	/* Start together, so that the first rounds are not one side waiting
	 * for the other to be created and pinned. */
	while (atomic_load(&sh->ready) < 2 && !atomic_load(&sh->stop)) {
		if (since(&sh->start) > o->max_seconds) {
			atomic_store(&sh->stop, 1);
			break;
		}
		sched_yield();
	}
	while (wait_turn(sh, s->me)) {
		uint64_t now = read(o->arg, s->me);
		fc_sync_acc_add(&sh->acc, s->me, now);
		if (s->me == FC_SYNC_B)
			maybe_stop(sh);
		atomic_store_explicit(&sh->turn, other, memory_order_release);
	}
	return NULL;
}

static bool cpu_ok(int cpu)
{
	return cpu >= -1 && cpu < CPU_SETSIZE;
}

int fc_sync_pair(const struct fc_sync_opts *opts, struct fc_sync_result *out)
{
	memset(out, 0, sizeof *out);
	fc_sync_acc_init(&out->acc);
	if (!cpu_ok(opts->cpu_a) || !cpu_ok(opts->cpu_b) || (opts->cpu_a >= 0 && opts->cpu_a == opts->cpu_b) ||
	    !(opts->seconds >= 0) || !(opts->max_seconds > 0))
		return -EINVAL;
	if (!opts->read && FC_COUNTER_KIND == FC_COUNTER_NONE)
		return -ENOTSUP;

	/* Big enough to want the heap?  No: a few hundred bytes. */
	struct shared sh;
	memset(&sh, 0, sizeof sh);
	atomic_init(&sh.turn, FC_SYNC_A);
	atomic_init(&sh.stop, 0);
	atomic_init(&sh.ready, 0);
	atomic_init(&sh.err, 0);
	fc_sync_acc_init(&sh.acc);
	sh.opts = opts;
	clock_gettime(CLOCK_MONOTONIC, &sh.start);

	struct side sides[2] = { { &sh, FC_SYNC_A }, { &sh, FC_SYNC_B } };
	pthread_t th[2];
	int made = 0;
	for (; made < 2; made++)
		if (pthread_create(&th[made], NULL, side_main, &sides[made]) != 0) {
			fail(&sh, -EAGAIN);
			break;
		}
	for (int i = 0; i < made; i++)
		pthread_join(th[i], NULL);

	out->elapsed_s = since(&sh.start);
	int err = atomic_load(&sh.err);
	if (err)
		return err;
	out->acc = sh.acc;
	out->rounds = sh.rounds;
	out->cut_short = sh.cut_short || sh.rounds < opts->min_rounds;
	return 0;
}
