/* Unit tests of the names of the ways of reading the time: exact names,
 * loose spellings, aliases, groups, duplicates and the errors of `bench -c`. */
#include "measure/timer.h"
#include "measure/ways.h"
#include "unit.h"

#include <time.h>

static const char *one(const char *name)
{
	const struct cd_clock_spec *w = cd_way_find(name);
	return w ? w->name : "(none)";
}

static void test_find(void)
{
	CHECK_STR(one("CLOCK_MONOTONIC"), "CLOCK_MONOTONIC");
	CHECK_STR(one("monotonic"), "CLOCK_MONOTONIC");
	CHECK_STR(one("MONOTONIC"), "CLOCK_MONOTONIC");
	CHECK_STR(one("clock_monotonic"), "CLOCK_MONOTONIC");
	CHECK_STR(one("realtime_coarse"), "CLOCK_REALTIME_COARSE");
	CHECK_STR(one("realtime-coarse"), "CLOCK_REALTIME_COARSE");
	CHECK_STR(one("Monotonic_Raw"), "CLOCK_MONOTONIC_RAW");
	CHECK_STR(one("monotonic/syscall"), "CLOCK_MONOTONIC/syscall");
	CHECK_STR(one("CLOCK_MONOTONIC/SYSCALL"), "CLOCK_MONOTONIC/syscall");
	CHECK_STR(one("gettimeofday"), "gettimeofday");
	CHECK_STR(one("gtod"), "gettimeofday");
	CHECK_STR(one("gettimeofday/syscall"), "gettimeofday/syscall");
	CHECK_STR(one("time"), "time");
	CHECK_STR(one("time/syscall"), "time/syscall");
	CHECK_STR(one("process_cputime"), "CLOCK_PROCESS_CPUTIME_ID");
	CHECK_STR(one("thread_cputime_id"), "CLOCK_THREAD_CPUTIME_ID");
	CHECK_STR(one("tai"), "CLOCK_TAI");
	CHECK_STR(one("boottime"), "CLOCK_BOOTTIME");
	CHECK_STR(one("monotonic_fast"), "(none)");
	CHECK_STR(one(""), "(none)");
	CHECK_STR(one("clock_"), "(none)");
	CHECK_STR(one("monotonic/"), "(none)");
	if (CD_COUNTER_N == 3) {
		CHECK_STR(one("rdtsc"), "rdtsc");
		CHECK_STR(one("tsc"), "rdtsc");
		CHECK_STR(one("RDTSCP"), "rdtscp");
		CHECK_STR(one("lfence;rdtsc"), "lfence;rdtsc");
		CHECK_STR(one("lfence_rdtsc"), "lfence;rdtsc");
		CHECK_STR(one("lfence-rdtsc"), "lfence;rdtsc");
		CHECK_STR(one("cntvct_el0"), "(none)");
	}
}

static void test_table(void)
{
	int n;
	const struct cd_clock_spec *w = cd_ways(&n);
	CHECK_INT(n, 22 + CD_COUNTER_N);
	/* Every name finds itself, and only itself. */
	for (int i = 0; i < n; i++)
		CHECK(cd_way_find(w[i].name) == &w[i]);
	/* The libc ways come first, each followed later by its forced twin. */
	CHECK_STR(w[1].name, "CLOCK_MONOTONIC");
	CHECK_INT(w[1].clockid, CLOCK_MONOTONIC);
	CHECK(!cd_way_forced(&w[1]));
	const struct cd_clock_spec *f = cd_way_find("monotonic/syscall");
	CHECK(cd_way_forced(f));
	CHECK_INT(f->clockid, CLOCK_MONOTONIC);
	CHECK_STR(cd_way_call(f), "clock_gettime");
	CHECK_STR(cd_way_call(cd_way_find("time/syscall")), "time");
}

static int parse(const char *list, const struct cd_clock_spec **out, char *err)
{
	err[0] = '\0';
	return cd_ways_parse(list, out, 64, err, 256);
}

static void test_parse(void)
{
	const struct cd_clock_spec *out[64];
	char err[256];
	int n;
	CHECK_INT(parse("monotonic", out, err), 1);
	CHECK_STR(out[0]->name, "CLOCK_MONOTONIC");
	/* Table order, each once, whatever the order and repetitions asked. */
	n = parse("time, MONOTONIC ,monotonic,realtime", out, err);
	CHECK_INT(n, 3);
	CHECK_STR(out[0]->name, "CLOCK_REALTIME");
	CHECK_STR(out[1]->name, "CLOCK_MONOTONIC");
	CHECK_STR(out[2]->name, "time");
	int all = parse("all", out, err);
	CHECK_INT(all, 22 + CD_COUNTER_N);
	CHECK_INT(parse("libc", out, err), 11);
	CHECK_INT(parse("syscall", out, err), 11);
	CHECK(cd_way_forced(out[0]) && cd_way_forced(out[10]));
	CHECK_INT(parse("all,monotonic", out, err), all);
	if (CD_COUNTER_N > 0) {
		CHECK_INT(parse("counter", out, err), CD_COUNTER_N);
		CHECK_INT(parse("counter,monotonic", out, err), CD_COUNTER_N + 1);
	}
	/* Errors: unknown, empty items, nothing at all. */
	CHECK_INT(parse("monotonic,bogus", out, err), -1);
	CHECK(strstr(err, "unknown clock 'bogus'") != NULL);
	CHECK_INT(parse("", out, err), -1);
	CHECK(strstr(err, "empty") != NULL);
	CHECK_INT(parse("monotonic,,time", out, err), -1);
	CHECK(strstr(err, "empty") != NULL);
	CHECK_INT(parse("monotonic,", out, err), -1);
	CHECK_INT(parse("x123456789012345678901234567890123456789012345678901234567890123456789", out, err), -1);
	CHECK(strstr(err, "unknown clock") != NULL);
	/* max caps the count. */
	CHECK_INT(cd_ways_parse("all", out, 2, err, sizeof err), 2);
}

int main(void)
{
	test_find();
	test_table();
	test_parse();
	return unit_done("bench_ways");
}
