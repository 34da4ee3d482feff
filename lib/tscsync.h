/* SPDX-License-Identifier: MIT */
/*
 * tscsync.h: are two CPUs' counters in step?  Measured, not assumed.
 *
 * The test is the kernel's boot-time warp test (check_tsc_warp() in
 * arch/x86/kernel/tsc_sync.c) made strict: two threads, pinned to the two
 * CPUs, take turns under one atomic.  Whoever holds the turn reads its
 * counter, compares it with the value the other side read just before, and
 * passes the turn.  Every read happens after the previous one in real time,
 * so a value below the previous one is time going backwards between the two
 * CPUs: a warp, whose size is the backward step.
 *
 * Taking turns also bounds the offset between the CPUs by the round trip.
 * With A's reads a0, a1, ... and B's b0, b1, ... in the order a0 b0 a1 b1 ...,
 * b_i was read at a moment A's counter stood between a_i and a_(i+1), so
 * B - A lies in [b_i - a_(i+1), b_i - a_i]; the tightest such bounds over the
 * whole test are kept.  When the tightest lower bound exceeds the tightest
 * upper bound, the offset moved during the test: the counters run at
 * different rates, or one of them jumped.
 *
 * The arithmetic (fc_sync_acc_*) is a pure function of the values read, so
 * tests feed it simulated counters with a known offset and a known backward
 * step, in any interleaving; fc_sync_pair() runs the same arithmetic across
 * two real CPUs.  Nothing here prints or exits: errors are -errno.
 */
#ifndef FC_TSCSYNC_H
#define FC_TSCSYNC_H

#include <stdbool.h>
#include <stdint.h>

#define FC_SYNC_A 0
#define FC_SYNC_B 1

/* What one pair's test has seen so far. */
struct fc_sync_acc {
	int last_side;           /* -1: nothing read yet */
	uint64_t last;           /* the value last read, by last_side */
	uint64_t reads[2];       /* reads by side A and side B */
	uint64_t back_steps;     /* reads below the read before them */
	/* Largest backward step seen by each side: the other side's value
	 * minus this side's next, when positive (cycles). */
	uint64_t max_back[2];
	/* Largest backward step between two consecutive reads of the same
	 * side (only in interleavings that are not strictly alternating). */
	uint64_t max_back_self;
	/* B's counter minus A's lies in [off_lo, off_hi] (cycles). */
	bool have_lo, have_hi;
	int64_t off_lo, off_hi;
};

void fc_sync_acc_init(struct fc_sync_acc *acc);

/* One read of value by side (FC_SYNC_A or FC_SYNC_B), in the real-time
 * order the reads happened. */
void fc_sync_acc_add(struct fc_sync_acc *acc, int side, uint64_t value);

/* The largest backward step seen by either side, in cycles (0: none). */
uint64_t fc_sync_max_back(const struct fc_sync_acc *acc);

/* Both bounds known and consistent: *mid is the offset B - A at the middle
 * of the interval, *half its half width plus one count (the uncertainty).  false when a
 * bound is missing or the bounds cross (see fc_sync_moved). */
bool fc_sync_offset(const struct fc_sync_acc *acc, int64_t *mid, uint64_t *half);

/* The bounds cross: the offset moved by at least *by cycles during the
 * test (counters at different rates, or a jump). */
bool fc_sync_moved(const struct fc_sync_acc *acc, uint64_t *by);

/* Reads side's counter; arg is the caller's. */
typedef uint64_t (*fc_sync_read_fn)(void *arg, int side);

/* rounds rounds of strict alternation, A then B, in the calling thread: for
 * simulations and tests (fc_sync_pair does the same across two CPUs). */
void fc_sync_alternate(struct fc_sync_acc *acc, fc_sync_read_fn read, void *arg, uint64_t rounds);

struct fc_sync_opts {
	int cpu_a, cpu_b;        /* CPUs for the two sides; -1: do not pin (tests) */
	double seconds;          /* run about this long, */
	uint64_t min_rounds;     /* and at least this many rounds, */
	double max_seconds;      /* but never longer than this (a busy machine) */
	fc_sync_read_fn read;    /* NULL: the counter of counter.h */
	void *arg;
};

struct fc_sync_result {
	struct fc_sync_acc acc;
	uint64_t rounds;         /* completed A-then-B rounds */
	double elapsed_s;
	bool cut_short;          /* max_seconds ran out before min_rounds */
};

/* Runs the test between opts->cpu_a and opts->cpu_b.  Returns 0, or
 * -EINVAL (a CPU out of range, the same CPU twice, or pinning refused: not
 * online, or outside this process's cpuset), -EPERM (pinning refused), -EIO
 * (pinned but not running there), -ENOTSUP (no counter on this architecture),
 * -EAGAIN (no thread could be made).  Keeps two CPUs busy for its duration. */
int fc_sync_pair(const struct fc_sync_opts *opts, struct fc_sync_result *out);

#endif
