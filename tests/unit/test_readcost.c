/* SPDX-License-Identifier: MIT */
/*
 * test_readcost.c: the start-time measurement of a counter read against
 * the kernel's clock (lib/readcost.h), driven by a clock of the test's
 * own: each read advances it by a set cost, so the measurement's
 * arithmetic and its minimum over tries are checked exactly, on any
 * architecture, without timing anything.
 */
#include "fastclock_impl.h"
#include "readcost.h"
#include "unit.h"

#include <errno.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fake {
	int64_t now;
	int64_t counter, kernel, sys;  /* what each read costs */
	int64_t delay;                 /* added once, to the next read of `delay_on` */
	int delay_on;                  /* 0 counter, 1 kernel, 2 syscall */
	int delay_skip;                /* reads of that kind before the delayed one */
	int64_t step;                  /* the kernel's clock moves in steps of this (0: 1 ns) */
	long counters, kernels, syscalls;
};

static void pay(struct fake *f, int which, int64_t cost)
{
	f->now += cost;
	if (f->delay && f->delay_on == which && f->delay_skip-- <= 0) {
		f->now += f->delay;  /* preempted inside this read */
		f->delay = 0;
	}
}

static void fake_counter(void *ctx)
{
	struct fake *f = ctx;
	f->counters++;
	pay(f, 0, f->counter);
}

/* The kernel's clock is sampled in the middle of its read. */
static int64_t fake_kclock(void *ctx)
{
	struct fake *f = ctx;
	f->kernels++;
	f->now += f->kernel / 2;
	int64_t v = f->step ? f->now - f->now % f->step : f->now;
	pay(f, 1, f->kernel - f->kernel / 2);
	return v;
}

static int64_t broken_kclock(void *ctx)
{
	(void)ctx;
	return INT64_MIN;
}

static void fake_syscall(void *ctx)
{
	struct fake *f = ctx;
	f->syscalls++;
	pay(f, 2, f->sys);
}

static struct fc_read_cost measure(struct fake *f)
{
	struct fc_read_cost_ops ops = { fake_counter, fake_kclock, fake_syscall, f };
	struct fc_read_cost c;
	CHECK(fc_read_cost_measure(&ops, &c));
	return c;
}

static void test_exact(void)
{
	/* healthy x86: lfence; rdtsc 20 ns, the vDSO 25, the system call 300 */
	struct fake f = { .counter = 20, .kernel = 25, .sys = 300 };
	struct fc_read_cost c = measure(&f);
	CHECK_INT(c.counter_ns, 20);
	CHECK_INT(c.kernel_ns, 25);
	CHECK_INT(c.syscall_ns, 300);
	CHECK(fc_read_cost_counter_cheaper(&c));
	CHECK(!fc_read_cost_kernel_is_syscall(&c));
	/* bounded: a trapped read may cost milliseconds under QEMU's TCG */
	CHECK_INT(f.counters, FC_READ_COST_TRIES * FC_READ_COST_BATCH);
	CHECK(f.counters <= 12);
	CHECK_INT(f.kernels, FC_READ_COST_TRIES * (FC_READ_COST_BATCH + 3));
	CHECK_INT(f.syscalls, FC_READ_COST_TRIES * FC_READ_COST_BATCH);

	/* arm64 with an erratum's workaround: the counter traps, the vDSO
	 * falls back to the system call */
	struct fake t = { .counter = 2100, .kernel = 1900, .sys = 1850 };
	c = measure(&t);
	CHECK_INT(c.counter_ns, 2100);
	CHECK_INT(c.kernel_ns, 1900);
	CHECK(!fc_read_cost_counter_cheaper(&c));
	CHECK(fc_read_cost_kernel_is_syscall(&c));

	/* the same, a trapped read a little cheaper than the system call (as
	 * QEMU measured: 72 us, 88 us): still a trap, refused */
	struct fake q = { .counter = 1500, .kernel = 1900, .sys = 1850 };
	c = measure(&q);
	CHECK(fc_read_cost_kernel_is_syscall(&c));
	CHECK(!fc_read_cost_counter_cheaper(&c));
	/* a counter read far below the system call the vDSO falls back to (x86
	 * on hpet: rdtsc against a 2 us system call) is served */
	struct fake h = { .counter = 20, .kernel = 2000, .sys = 1900 };
	c = measure(&h);
	CHECK(fc_read_cost_counter_cheaper(&c));
}

/* A preemption in any batch makes that batch dear, never cheap: the
 * minimum over the tries is the cost still. */
static void test_preempted(void)
{
	for (int which = 0; which < 3; which++) {
		unit_case("preempted in read kind %d", which);
		struct fake f = { .counter = 20, .kernel = 25, .sys = 300, .delay = 4000000, .delay_on = which };
		struct fc_read_cost c = measure(&f);
		CHECK_INT(c.counter_ns, 20);
		CHECK_INT(c.kernel_ns, 25);
		CHECK_INT(c.syscall_ns, 300);
		CHECK(fc_read_cost_counter_cheaper(&c));
	}
	unit_case(NULL);

	/* a trapped counter, the first try's kernel batch held up (the second
	 * kernel read of the try, after its sample): that try's counter comes
	 * out below 0 once the dear kernel read is taken from it; the least
	 * spans still give each cost, and the counter is refused */
	struct fake t = { .counter = 2100, .kernel = 1900, .sys = 1850, .delay = 400000, .delay_on = 1,
	                  .delay_skip = 1 };
	struct fc_read_cost c = measure(&t);
	CHECK_INT(c.counter_ns, 2100);
	CHECK_INT(c.kernel_ns, 1900);
	CHECK(!fc_read_cost_counter_cheaper(&c));
}

/* A coarse kernel clock (a 25 MHz generic timer's 40 ns steps, Hyper-V's
 * 100 ns) and cheap reads: each span of four is 0, 1 or 2 steps, the
 * kernel's clock may measure below the counter; never refused, whatever
 * the phase of the steps. */
static void test_coarse_clock(void)
{
	static const int64_t steps[] = { 40, 42, 100 };
	for (size_t i = 0; i < UNIT_COUNT(steps); i++)
		for (int64_t phase = 0; phase < steps[i]; phase++) {
			unit_case("a %lld ns step, phase %lld", (long long)steps[i], (long long)phase);
			struct fake f = { .now = phase, .counter = 12, .kernel = 18, .sys = 300, .step = steps[i] };
			struct fc_read_cost c = measure(&f);
			CHECK(fc_read_cost_counter_cheaper(&c));
			struct fake t = { .now = phase, .counter = 2100, .kernel = 1900, .sys = 1850, .step = steps[i] };
			c = measure(&t);
			CHECK(!fc_read_cost_counter_cheaper(&c));  /* a trap still seen */
		}
	unit_case(NULL);
}

static void test_unmeasured(void)
{
	struct fake f = { .counter = 20, .kernel = 25, .sys = 300 };
	struct fc_read_cost_ops ops = { fake_counter, broken_kclock, fake_syscall, &f };
	struct fc_read_cost c;
	CHECK(!fc_read_cost_measure(&ops, &c));
	CHECK(!c.measured);
	CHECK(fc_read_cost_counter_cheaper(&c));     /* nothing measured decides nothing */
	CHECK(!fc_read_cost_kernel_is_syscall(&c));
	/* below the clock's resolution: both 0, the counter is cheap */
	struct fake z = { .counter = 0, .kernel = 0, .sys = 0 };
	c = measure(&z);
	CHECK(fc_read_cost_counter_cheaper(&c));
}

/* The live measurement on this machine: it completes and gives costs
 * (no figure is asserted: the machine may be busy). */
static void test_live(void)
{
	struct fc_read_cost c;
	if (!fc_read_cost_measure_live(&c)) {
		printf("  the kernel's clock cannot be read here: not measured\n");
		return;
	}
	CHECK(c.counter_ns >= 0 && c.kernel_ns >= 0 && c.syscall_ns >= 0);
	printf("  here: a counter read %.1f ns, the kernel's clock %.1f ns, a system call %.1f ns: %s\n",
	       c.counter_ns, c.kernel_ns, c.syscall_ns,
	       fc_read_cost_counter_cheaper(&c) ? "the counter is cheaper" : "the counter is no cheaper (trapped)");
}

static void test_parse(void)
{
	struct fc_read_cost c = { false, 0, 0, 0 };
	CHECK(fc_read_cost_parse("2100,1900,1850", &c));
	CHECK(c.measured && c.counter_ns == 2100 && c.kernel_ns == 1900 && c.syscall_ns == 1850);
	static const char *const bad[] = { "", "1,2", "1,2,3,4", "a,2,3", "-1,2,3", "1,,3", "1,2,3x", "1e99,2,3" };
	for (size_t i = 0; i < UNIT_COUNT(bad); i++) {
		struct fc_read_cost u = { false, 0, 0, 0 };
		errno = 0;
		CHECK(!fc_read_cost_parse(bad[i], &u));
		CHECK(!u.measured);
		CHECK_INT(errno, 0);
	}
}

/* The library in a process whose counter reads "trap" (the costs given
 * as an arm64 erratum guest measures them): it reads the kernel's clock,
 * with the counter read switched off (the latch's no_counter, which every
 * read looks at before it would read the counter: a counter read cannot
 * be forbidden here alone, since the vDSO reads the same counter), and
 * its reads never go backwards; each clock is the kernel's, read once
 * (between two reads of it; no offset followed or refreshed).  fc_info()
 * comes back on stdout, and the exit status says whether the counter was
 * switched off. */
static int trapped_child(void)
{
	struct fc_info in;
	if (fc_info(&in) != 0)
		return 2;
	/* nothing followed or refreshed: the kernel's clocks need neither */
	int64_t followed = atomic_load(&fc_int_offsets.boot_followed);
	int64_t refreshed = atomic_load(&fc_int_offsets.rt_checked_ns);
	int64_t last = INT64_MIN;
	for (int i = 0; i < 20000; i++) {
		if (i == 10000)  /* past FC_STEP_CHECK_NS, when kernel mode would refresh them */
			nanosleep(&(struct timespec){ 0, 3000000 }, NULL);
		struct timespec ts;
		int64_t v = fc_now_ns();
		if (v < last || fc_gettime(CLOCK_REALTIME, &ts) != 0 || fc_realtime_ns() <= 0)
			return 4;
		last = v;
	}
	/* each clock the kernel's own, read once: between two reads of it
	 * (made from MONOTONIC and offsets bracketed to a few microseconds,
	 * REALTIME, BOOTTIME and TAI could fall outside) */
	static const clockid_t ids[] = { CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI, CLOCK_MONOTONIC_RAW,
	                                 CLOCK_MONOTONIC };
	for (int i = 0; i < 1000 && atomic_load(&fc_int_latch.no_counter); i++)
		for (size_t j = 0; j < sizeof ids / sizeof ids[0]; j++) {
			struct timespec a, b, ts;
			clock_gettime(ids[j], &a);
			int rc = fc_gettime(ids[j], &ts);
			int64_t rt = ids[j] == CLOCK_REALTIME ? fc_realtime_ns() : INT64_MIN;
			clock_gettime(ids[j], &b);
			int64_t lo = a.tv_sec * 1000000000LL + a.tv_nsec, hi = b.tv_sec * 1000000000LL + b.tv_nsec;
			int64_t v = ts.tv_sec * 1000000000LL + ts.tv_nsec;
			if (rc != 0 || v < lo || v > hi || (rt != INT64_MIN && (rt < v || rt > hi)))
				return 7;
		}
	if (atomic_load(&fc_int_latch.no_counter) && (atomic_load(&fc_int_offsets.boot_followed) != followed ||
	                                              atomic_load(&fc_int_offsets.rt_checked_ns) != refreshed))
		return 8;
	if (write(1, &in, sizeof in) != (ssize_t)sizeof in)
		return 5;
	return atomic_load(&fc_int_latch.no_counter) ? 0 : 6;
}

static int child(const char *cost, struct fc_info *out, int *status)
{
	char env[100];
	snprintf(env, sizeof env, "FASTCLOCK_TEST_READ_COST=%s", cost);
	char *envp[] = { env, NULL };
	return unit_self_output("--trapped", envp, out, sizeof *out, status);
}

static void test_library_trapped(void)
{
	struct fc_info in;
	int st = 0;
	memset(&in, 0, sizeof in);
	int rc = child("2100,1900,1850", &in, &st);
	if (rc != 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		/* qemu-user without binfmt_misc cannot exec a foreign binary */
		printf("  this program cannot exec itself here: the library's trapped case not tried\n");
		return;
	}
	CHECK_INT(rc, 0);
	if (in.reason == FC_REASON_NOT_INVARIANT || in.reason == FC_REASON_NO_COUNTER ||
	    in.reason == FC_REASON_UNSUPPORTED) {
		printf("  the library refuses this counter before its cost (%s): the trapped case not tried\n",
		       fc_reason_name(in.reason));
		return;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);  /* the counter read switched off, reads in order */
	CHECK_INT(in.reason, FC_REASON_COUNTER_SLOW);
	CHECK_INT(in.source, FC_SOURCE_KERNEL);
	CHECK_HAS(in.reason_text, "a counter read costs 2100 ns, no less than the kernel's clock (1900 ns, a system call)");
	CHECK_INT(in.kernel_vdso_fast, 0);
	CHECK(in.counter_hz == 0);
	printf("  trapped: %s (%s)\n", fc_reason_name(in.reason), in.reason_text);

	/* the same machine with a cheap counter: not refused for its cost */
	memset(&in, 0, sizeof in);
	CHECK_INT(child("20,25,300", &in, &st), 0);
	CHECK(in.reason != FC_REASON_COUNTER_SLOW);
	CHECK_LACKS(in.reason_text, "no less than");
	printf("  cheap: %s (%s)\n", fc_reason_name(in.reason), in.reason_text);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--trapped"))
		return trapped_child();
	test_parse();
	test_library_trapped();
	test_exact();
	test_preempted();
	test_unmeasured();
	test_coarse_clock();
	test_live();
	return unit_done("test_readcost");
}
