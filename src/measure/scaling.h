/* SPDX-License-Identifier: MIT */
/*
 * scaling.h: the cost of a call when N threads make it at once.
 *
 * A call the vDSO serves reads shared memory and the CPU's counter: N threads
 * on N CPUs each pay what one thread pays.  A system call on a slow
 * clocksource reads a device, and device reads may serialise (one at a time
 * in the chipset, or in the hypervisor that emulates the device): each thread
 * then pays more as threads are added.  The figure is the per-call cost in
 * each thread's own CPU time, so that threads waiting for a CPU (more threads
 * than CPUs) do not count as slower calls.
 */
#ifndef CD_SCALING_H
#define CD_SCALING_H

#include "measure/measure.h"

#include <signal.h>

struct cd_scaling {
	bool measured;
	int threads;
	int cpus;               /* online CPUs: past that, threads take turns */
	double ns_per_call;     /* median over the threads of each one's median batch */
	double ns_min, ns_max;  /* the cheapest and dearest thread's median */
	double calls_per_s;     /* all threads together, by the wall clock */
	int err;                /* -errno when threads could not be started */
};

/* Run `threads` threads calling spec for about budget_s (or `calls` calls
 * each when calls > 0); per_call_ns, the one-thread cost, sizes the batches.
 * Once *stop is set (if stop is not NULL) each thread ends after its batch.
 * The threads block every signal, so that a signal's handler always runs in
 * the calling thread. */
void cd_scaling_measure(const struct cd_clock_spec *spec, int threads, double per_call_ns, double budget_s,
                        long calls, const volatile sig_atomic_t *stop, struct cd_scaling *out);

#endif
