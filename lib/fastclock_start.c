/* SPDX-License-Identifier: MIT */
/*
 * fastclock_start.c: libfastclock's start-up (the trust judgement, the
 * first frequency, the first line, the address space's page) and a forked
 * child's first read (the latch repaired, another time namespace noticed).
 * Called with the writer's lock held.
 */
#include "fastclock_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The latch as a forked child finds it: only the thread that forked
 * exists, and a writer in another thread may have been stopped half-way.
 * The copy readers use is complete (the latch's point); it is copied over
 * the other, which may be half-written, before this child writes. */
static void repair_latch(void)
{
	struct line l;
	unsigned s = atomic_load_explicit(&fc_int_latch.seq, memory_order_relaxed);
	load_copy(&fc_int_latch, s, &l);
	store_copy(&fc_int_latch, s + 1, &l);
	if (s & 1)
		atomic_store_explicit(&fc_int_latch.seq, s + 1, memory_order_relaxed);
}

/* Where the page could not be marked MADV_WIPEONFORK (before Linux 4.14),
 * fork() at least runs this; _Fork and clone do not (docs/fastclock.3). */
static void child_after_fork(void)
{
	struct fc_mm *m = mm_now();
	atomic_store_explicit(&m->lock, 0, memory_order_relaxed);
	atomic_store_explicit(&m->rt_lock, 0, memory_order_relaxed);
	atomic_store_explicit(&m->hw, 0, memory_order_relaxed);
	atomic_store_explicit(&m->ok, false, memory_order_release);
}

/* The first slow-path read of a forked child (its fc_mm found zeroed),
 * with the lock held: the latch repaired, and the clock checked.  A child
 * forked after unshare(CLONE_NEWTIME) runs in another time namespace,
 * whose MONOTONIC and BOOTTIME have other offsets: the parent's line, its
 * floors and BOOTTIME's and REALTIME's offsets belong to another clock,
 * and the child starts afresh from the kernel.  Returns true when it did. */
bool fc_int_new_mm(void)
{
	repair_latch();
	fc_int_writer.reset_base = true;
	struct fc_mm *m = mm_now();
	struct line L;
	unsigned s = current_line(&L);
	bool other_clock = false;
	uint64_t t = counter_now();
	int64_t k = fc_kclock_ns(CLOCK_MONOTONIC);
	uint64_t d = t - L.tsc0;
	if (L.flags & L_COUNTER) {
		int64_t off = seg_at(L.mono.ns0, L.mono.frac0, L.mono.mult, d) - k;
		other_clock = k != INT64_MIN && ((int64_t)d < 0 || off > pause_limit_ns(&L) || off < -pause_limit_ns(&L));
	} else {
		/* kernel mode: the floors, if far ahead of this MONOTONIC, are
		 * another clock's (behind it, they do no harm) */
		int64_t f = atomic_load_explicit(&fc_int_latch.floor_mono, memory_order_relaxed);
		int64_t lf = kernel_floor(&L, &L.mono, t);
		if (lf > f)
			f = lf;
		other_clock = k != INT64_MIN && f != INT64_MIN && f - k > pause_limit_ns(&L);
	}
	/* a namespace may differ in BOOTTIME's offset alone, and in kernel
	 * mode from start-up nothing above looked at MONOTONIC's */
	bool other_boot = other_clock || fc_int_offsets_moved();
	atomic_store_explicit(&m->ok, true, memory_order_release);
	if (other_boot) {
		/* the offsets afresh, and when kernel mode last looked at them
		 * is another clock's time too */
		atomic_store_explicit(&fc_int_offsets.boot_followed, INT64_MIN / 2, memory_order_relaxed);
		atomic_store_explicit(&fc_int_offsets.rt_checked_ns, INT64_MIN / 2, memory_order_relaxed);
		fc_int_boot_start();
		fc_int_rt_refresh();
	}
	if (!other_clock)
		return false;
	atomic_store_explicit(&fc_int_latch.floor_mono, INT64_MIN, memory_order_relaxed);
	atomic_store_explicit(&fc_int_latch.floor_raw, INT64_MIN, memory_order_relaxed);
	struct line fresh;
	memset(&fresh, 0, sizeof fresh);
	fresh.mono.ns0 = fresh.raw.ns0 = INT64_MIN;
	latch_write(&fresh);
	fc_int_resync(s + 2, true);
	return true;
}

/* This address space's page (struct fc_mm), zeroed in forked children. */
static struct fc_mm *map_mm(void)
{
	int saved = errno;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		errno = saved;
		return NULL;
	}
	(void)madvise(p, 4096, MADV_WIPEONFORK);
	errno = saved;
	return p;
}

static void init_writer(void);

/* Start-up, with boot_mm's lock held.  The page is published last, ready
 * (ok, unlocked): until then every read is the slow path's. */
void fc_int_init_locked(void)
{
	int saved = errno;  /* the files and system calls start-up tries leave errno as it was */
	atomic_store_explicit(&fc_int_latch.floor_mono, INT64_MIN, memory_order_relaxed);
	atomic_store_explicit(&fc_int_latch.floor_raw, INT64_MIN, memory_order_relaxed);
	init_writer();
	struct fc_mm *page = map_mm();
	if (page) {
		atomic_store_explicit(&page->ok, true, memory_order_relaxed);
		atomic_store_explicit(&fc_int_latch.mm, page, memory_order_release);
	} else {
		atomic_store_explicit(&mm_now()->ok, true, memory_order_release);
	}
	errno = saved;
}

static void init_writer(void)
{
	fc_int_writer.inited = true;
	fc_kclock_init();
	fc_trust_gather(&fc_int_writer.facts);
	fc_trust_judge(&fc_int_writer.facts, &fc_int_writer.trust);
	/* a counter that cannot be read, or whose reads trap (each costing
	 * about a system call): kernel mode never reads it, not even for
	 * its floors */
	if (fc_int_writer.facts.counter_usable != 0 || fc_int_writer.trust.reason == FC_REASON_COUNTER_SLOW)
		atomic_store_explicit(&fc_int_latch.no_counter, true, memory_order_relaxed);
	fc_int_writer.trusted = fc_int_writer.trust.use_counter;
	if (fc_int_writer.trusted)
		fc_trust_declared(&fc_int_writer.facts);
	snprintf(fc_int_writer.freq_from, sizeof fc_int_writer.freq_from, "%s", fc_int_writer.facts.freq_from);
	pthread_atfork(NULL, NULL, child_after_fork);
	fc_int_boot_start();
	fc_int_rt_refresh();

	struct line zero;
	memset(&zero, 0, sizeof zero);
	if (!fc_int_writer.trusted) {
		fc_int_go_kernel(&zero, fc_int_writer.trust.reason, fc_int_writer.trust.text);
		return;
	}
	/* A rough rate for scheduling, and the base of the measured one. */
	if (fc_int_writer.facts.declared_hz > 0) {
		fc_int_writer.r_raw = 1e9 / fc_int_writer.facts.declared_hz;
		fc_int_writer.r_err_ppm = fc_int_writer.facts.declared_err_ppm;
		fc_int_writer.declared = true;
	} else {
		struct sample a = { 0, 0, 0 }, b = { 0, 0, 0 };
		if (fc_int_sample_clock(CLOCK_MONOTONIC_RAW, 3, &a) != 0) {
			fc_int_writer.trusted = false;
			fc_int_go_kernel(&zero, FC_REASON_KERNEL_CLOCK_FAILED, "the kernel's CLOCK_MONOTONIC_RAW could not be read");
			return;
		}
		do {  /* 50 us: a rate good to about 0.1 %, enough to schedule by */
			if (fc_int_sample_clock(CLOCK_MONOTONIC_RAW, 1, &b) != 0)
				break;
		} while (b.k - a.k < 50000);
		if (b.k - a.k < 50000 || mid(&b) <= mid(&a)) {
			fc_int_writer.trusted = false;
			fc_int_go_kernel(&zero, FC_REASON_NO_FREQUENCY, "the counter's rate could not be measured");
			return;
		}
		fc_int_writer.r_raw = (double)(b.k - a.k) / (double)(mid(&b) - mid(&a));
		fc_int_writer.r_err_ppm = 1e9;  /* not good enough to start on: calibrate */
	}
	fc_int_writer.counts_per_ns = 1.0 / fc_int_writer.r_raw;
	fc_int_offsets.rt_every = ns_to_counts(FC_STEP_CHECK_NS);
	const char *delay = secure_getenv("FASTCLOCK_TEST_WRITER_DELAY_US");
	if (delay && *delay) {
		long us = strtol(delay, NULL, 10);
		if (us > 0 && us <= 1000000)
			fc_int_writer.test_writer_delay = ns_to_counts(1000.0 * (double)us);
		fc_int_writer.test_writer_pid = getpid();
	}
	fc_int_writer.last_check_t = fc_counter_read();
	latch_write(&zero);
	fc_int_resync(0, true);
}
