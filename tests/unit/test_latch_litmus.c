/* SPDX-License-Identifier: MIT */
/*
 * test_latch_litmus.c: libfastclock's latch (latch_store and latch_load,
 * lib/fastclock_impl.h) under a writer that never stops and readers that
 * never wait, litmus-style: every word of each line the writer publishes
 * is a different function of one number n, which grows by one a write, so
 * a reader can tell a line read whole from one mixed from two writes (a
 * torn copy), and a line older than one it read before.
 *
 * On x86 (TSO) the hardware keeps stores in order and loads in order: the
 * test checks the compiler's output and the logic.  Its point is arm64,
 * which reorders both: built for aarch64 by tests/arm64/run, where it runs
 * under qemu-user, which executes the guest's accesses in the host's
 * order and so cannot show a missing barrier; on a real arm64 machine run
 * build/arm64/test_latch_litmus (LATCH_WRITES raises the count).  A reader
 * with no latch check beside them (plain copies of one buffer the writer
 * rewrites) counts the mixed copies it sees, to show the test can see one
 * where the order lets it: printed, never asserted (it depends on timing).
 *
 * Fails on: a torn copy or a backward step through the latch.
 */
#include "fastclock_impl.h"
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define READERS 3

static struct fc_latch_state latch;
static struct fc_latch_state unlatched;  /* its copy 0 rewritten in place: what the latch prevents */
static atomic_bool done;

/* The line for n: each word its own function of n, within what a copy
 * keeps (soft and frac0 below 2^32: store_copy) for n below 2^28. */
static void line_of(uint64_t n, struct line *l)
{
	l->tsc0 = n;
	l->soft = n * 2 + 1;
	l->hard = ~n;
	l->tail = n ^ 0x5555555555555555u;
	l->flags = (uint32_t)(n * 7);
	l->err = (int64_t)(n * 3);
	l->mono.ns0 = (int64_t)n + 11;
	l->mono.frac0 = n * 13;
	l->mono.mult = n + 17;
	l->raw.ns0 = -(int64_t)n;
	l->raw.frac0 = n << 1;
	l->raw.mult = n * 19;
}

static bool whole(const struct line *l)
{
	struct line w;
	line_of(l->tsc0, &w);
	return l->soft == w.soft && l->hard == w.hard && l->tail == w.tail && l->flags == w.flags &&
	       l->err == w.err && l->mono.ns0 == w.mono.ns0 && l->mono.frac0 == w.mono.frac0 &&
	       l->mono.mult == w.mono.mult && l->raw.ns0 == w.raw.ns0 && l->raw.frac0 == w.raw.frac0 &&
	       l->raw.mult == w.raw.mult;
}

struct reader {
	pthread_t th;
	uint64_t reads, torn, backwards, seen_new;
	uint64_t unlatched_reads, unlatched_mixed;
};

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	uint64_t last = 0;
	while (!atomic_load_explicit(&done, memory_order_acquire)) {
		struct line l;
		latch_load(&latch, &l, NULL);
		r->reads++;
		if (!whole(&l))
			r->torn++;
		if (l.tsc0 < last)
			r->backwards++;
		else if (l.tsc0 > last)
			r->seen_new++;
		last = l.tsc0;
		/* no latch: one copy, read while it is rewritten */
		struct line u;
		load_copy(&unlatched, 0, &u);
		r->unlatched_reads++;
		if (!whole(&u))
			r->unlatched_mixed++;
	}
	return NULL;
}

int main(void)
{
	long writes = 2000000;
	const char *e = getenv("LATCH_WRITES");
	if (e && atol(e) > 0)
		writes = atol(e);
	struct line l;
	memset(&l, 0, sizeof l);
	line_of(0, &l);
	latch_store(&latch, &l);
	store_copy(&unlatched, 0, &l);

	struct reader r[READERS];
	memset(r, 0, sizeof r);
	for (int i = 0; i < READERS; i++)
		if (pthread_create(&r[i].th, NULL, read_loop, &r[i]) != 0) {
			CHECK(!"pthread_create");
			return unit_done("test_latch_litmus");
		}
	for (long n = 1; n <= writes; n++) {
		memset(&l, 0, sizeof l);
		line_of((uint64_t)n, &l);
		latch_store(&latch, &l);
		store_copy(&unlatched, 0, &l);
	}
	atomic_store_explicit(&done, true, memory_order_release);
	uint64_t reads = 0, torn = 0, back = 0, fresh = 0, ureads = 0, mixed = 0;
	for (int i = 0; i < READERS; i++) {
		pthread_join(r[i].th, NULL);
		reads += r[i].reads;
		torn += r[i].torn;
		back += r[i].backwards;
		fresh += r[i].seen_new;
		ureads += r[i].unlatched_reads;
		mixed += r[i].unlatched_mixed;
	}
	/* the last line is whole after the writer stopped */
	struct line last;
	latch_load(&latch, &last, NULL);
	CHECK(whole(&last));
	CHECK_INT(last.tsc0, writes);
	CHECK_INT(torn, 0);
	CHECK_INT(back, 0);
#if defined(__aarch64__)
	const char *arch = "aarch64 (under qemu-user, the host's order: it cannot show a missing barrier; "
	                   "on arm64 hardware, the CPU's)";
#elif defined(__x86_64__)
	const char *arch = "x86-64 (TSO: stores and loads stay in order; the compiler's output checked)";
#else
	const char *arch = "this CPU";
#endif
	printf("  latch: %ld writes, %d readers, %llu reads (%llu saw a newer line): %llu torn, %llu backwards, on %s\n",
	       writes, READERS, (unsigned long long)reads, (unsigned long long)fresh, (unsigned long long)torn,
	       (unsigned long long)back, arch);
	printf("  without the latch: %llu of %llu reads of a copy rewritten in place were mixed from two lines "
	       "(not asserted)\n", (unsigned long long)mixed, (unsigned long long)ureads);
	return unit_done("test_latch_litmus");
}
