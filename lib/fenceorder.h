/* SPDX-License-Identifier: MIT */
/*
 * fenceorder.h: the library's fences, in a form ThreadSanitizer checks.
 *
 * The latch (fastclock_impl.h) orders relaxed accesses to its copies with
 * fences, as the kernel's seqcount_latch does with smp_wmb/smp_rmb.
 * ThreadSanitizer does not model atomic_thread_fence (gcc says so with
 * -Wtsan), so under it the fences become no-ops and the copies' accesses
 * carry the same ordering themselves (release stores, acquire loads),
 * which it does model: the TSan build then checks the latch's
 * happens-before, not a weaker version of it.  The plain build keeps the
 * cheaper form the fast path needs.
 */
#ifndef FC_FENCEORDER_H
#define FC_FENCEORDER_H

#include <stdatomic.h>

#if defined(__SANITIZE_THREAD__)
#define FC_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FC_UNDER_TSAN 1
#endif
#endif

/* What each becomes (GCC and Clang; the argument for the latch is at
 * latch_store in fastclock_impl.h):
 *
 *                         x86-64            arm64
 *   release store         mov               stlr
 *   acquire load          mov               ldar (ldapr with RCpc, v8.3)
 *   fc_fence_release()    (compiler only)   dmb ish
 *   fc_fence_acquire()    (compiler only)   dmb ishld
 *   relaxed load, store   mov               ldr, str
 *
 * x86's order (TSO) already keeps stores in order and loads in order, so
 * its fences cost nothing; arm64 reorders stores with stores and loads with
 * loads, and the dmb are what keep a reader from a mixed copy there. */
#ifdef FC_UNDER_TSAN
#define FC_COPY_LOAD memory_order_acquire
#define FC_COPY_STORE memory_order_release
#define fc_fence_acquire() atomic_signal_fence(memory_order_acquire)
#define fc_fence_release() atomic_signal_fence(memory_order_release)
#else
#define FC_COPY_LOAD memory_order_relaxed
#define FC_COPY_STORE memory_order_relaxed
#define fc_fence_acquire() atomic_thread_fence(memory_order_acquire)
#define fc_fence_release() atomic_thread_fence(memory_order_release)
#endif

/* Every store before it complete, visible to every CPU, before the counter
 * is read after it (the writer's look at the counter after publishing).
 * A seq_cst fence orders memory accesses only, and the counter read is
 * not one: on x86 mfence (then the counter's lfence; rdtsc, as Intel's SDM
 * says for RDTSC), on arm64 dsb ish (dmb would not wait for the stores
 * before isb; mrs cntvct_el0).  Inline assembly, which ThreadSanitizer
 * does not see, in its build too. */
#if defined(__x86_64__)
#define fc_fence_full() __asm__ __volatile__("mfence" ::: "memory")
#elif defined(__aarch64__)
#define fc_fence_full() __asm__ __volatile__("dsb ish" ::: "memory")
#else
#define fc_fence_full() atomic_thread_fence(memory_order_seq_cst)
#endif

#endif
