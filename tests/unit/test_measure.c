/* SPDX-License-Identifier: MIT */
/* Unit tests of the measurement module on this machine.  Only what cannot
 * depend on the machine's speed is asserted: the coarse clocks are cheaper
 * than a forced system call of themselves, every figure is positive, and a bad
 * clock id reports its error instead of a cost. */
#include "measure/measure.h"
#include "unit.h"

#include <errno.h>
#include <time.h>

static void test_batch(void)
{
	const struct cd_clock_spec *mono = &cd_check_clocks[1];
	CHECK_STR(mono->name, "CLOCK_MONOTONIC");
	CHECK(cd_clock_batch(mono, false, 1000) > 0);
	CHECK(cd_clock_batch(mono, true, 100) > 0);
	struct cd_clock_spec bad = { "bogus", CD_CALL_CLOCK_GETTIME, 12345, true };
	CHECK_INT((long)cd_clock_batch(&bad, false, 10), -EINVAL);
	CHECK_INT((long)cd_clock_batch(&bad, true, 10), -EINVAL);
	struct cd_clock_cost c;
	cd_measure_clock(&bad, 0.01, &c);
	CHECK(!c.measured);
	CHECK_INT(c.err, -EINVAL);
}

static void test_check_set(void)
{
	struct cd_measurements m;
	cd_measure_check(&m, 0.3);
	CHECK(m.done);
	CHECK_INT(m.n, CD_N_CHECK_CLOCKS);
	CHECK(m.elapsed_s > 0);
	for (int i = 0; i < m.n; i++) {
		const struct cd_clock_cost *c = &m.c[i];
		CHECK(c->measured);
		CHECK(c->ns_per_call > 0 && c->syscall_ns > 0);
		CHECK(c->ns_min <= c->ns_per_call && c->ns_per_call <= c->ns_max);
		CHECK(c->ratio > 0);
		/* The coarse clocks and time() never read the clocksource. */
		if (!c->spec->high_res) {
			CHECK(!c->syscall);
			if (c->syscall)
				fprintf(stderr, "%s measured as a system call: %.1f ns vs %.1f ns\n", c->spec->name,
				        c->ns_per_call, c->syscall_ns);
		}
	}
}

static void test_batch_cost(void)
{
	/* Preempted for half the batch: CPU time is the cost. */
	CHECK(cd_batch_cost(2e6, 1e6) == 1e6);
	/* A CPU clock that read 0 (unstable sched_clock): the wall clock. */
	CHECK(cd_batch_cost(2e6, 0) == 2e6);
	CHECK(cd_batch_cost(2e6, -5) == 2e6);
	/* More CPU time than wall time is impossible: the wall clock. */
	CHECK(cd_batch_cost(2e6, 9e6) == 2e6);
	/* Small disagreements from reading two clocks are allowed. */
	CHECK(cd_batch_cost(1e6, 1.01e6) == 1.01e6);
}

/* The exact test: PROCESS_CPUTIME_ID is never served by the vDSO, so every
 * call reaches the kernel; the coarse clock never does. */
static void test_kernel_path(void)
{
	static const struct cd_clock_spec cputime = { "CLOCK_PROCESS_CPUTIME_ID", CD_CALL_CLOCK_GETTIME,
	                                              CLOCK_PROCESS_CPUTIME_ID, false };
	const struct cd_clock_spec *specs[] = { &cputime, &cd_check_clocks[6], &cd_check_clocks[8] };
	int reached[3];
	int rc = cd_kernel_path(specs, 3, reached);
	CHECK_INT(rc, 0);
	if (reached[0] == -ENOSYS || reached[0] == -EINVAL || reached[0] == -EACCES) {
		fprintf(stderr, "seccomp unavailable here (%d): exact test skipped\n", reached[0]);
		return;
	}
	CHECK_INT(reached[0], CD_KERNEL_PATH_CALLS);
	CHECK_STR(cd_check_clocks[6].name, "CLOCK_MONOTONIC_COARSE");
	CHECK_INT(reached[1], 0);
	CHECK_STR(cd_check_clocks[8].name, "time");
	CHECK_INT(reached[2], 0);
	CHECK_INT(cd_kernel_path(specs, 0, reached), -EINVAL);

	struct cd_clock_cost c;
	memset(&c, 0, sizeof c);
	c.measured = true;
	c.syscall = false;
	cd_apply_kernel_path(&c, CD_KERNEL_PATH_CALLS);
	CHECK(c.exact && c.syscall);
	cd_apply_kernel_path(&c, 0);
	CHECK(c.exact && !c.syscall);
	c.syscall = true;
	cd_apply_kernel_path(&c, -ENOSYS);
	CHECK(!c.exact && c.syscall); /* unknown: the timing verdict stands */
}

int main(void)
{
	test_kernel_path();
	test_batch_cost();
	test_batch();
	test_check_set();
	return unit_done("measure");
}
