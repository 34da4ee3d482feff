/* SPDX-License-Identifier: MIT */
/* Unit tests of the names of the ways of reading the time: exact names,
 * loose spellings, aliases, groups, duplicates and the errors of `bench -c`. */
#include "measure/timer.h"
#include "measure/fcratio.h"
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
	CHECK_INT(n, 28 + CD_COUNTER_N);
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
	CHECK_INT(all, 28 + CD_COUNTER_N);
	CHECK_INT(parse("libc", out, err), 11);
	CHECK_INT(parse("syscall", out, err), 11);
	CHECK(cd_way_forced(out[0]) && cd_way_forced(out[10]));
	CHECK_INT(parse("all,monotonic", out, err), all);
	if (CD_COUNTER_N > 0) {
		CHECK_INT(parse("counter", out, err), CD_COUNTER_N);
		CHECK_INT(parse("counter,monotonic", out, err), CD_COUNTER_N + 1);
	}
	/* libfastclock's calls: a group of six, last in the table, with the
	 * kind and variant each call needs. */
	CHECK_INT(parse("library", out, err), 6);
	CHECK_STR(out[0]->name, "fc_now_ns");
	CHECK_STR(out[5]->name, "fc_coarse_ns");
	for (int i = 0; i < 6; i++) {
		CHECK_INT(out[i]->kind, CD_CALL_FASTCLOCK);
		CHECK_INT(out[i]->clockid, i);
		CHECK(!cd_way_forced(out[i]));
		CHECK_STR(cd_way_call(out[i]), "libfastclock");
	}
	CHECK_INT(parse("fastclock,monotonic", out, err), 7);
	CHECK_INT(parse("fc_gettime", out, err), 1);
	CHECK_STR(out[0]->name, "fc_gettime(MONOTONIC)");
	CHECK_INT(out[0]->clockid, CD_FC_GETTIME_MONO);
	CHECK_INT(parse("FC_NOW_NS_UNORDERED,fc_gettime(clock_monotonic)", out, err), 2);
	CHECK_INT(out[0]->clockid, CD_FC_NOW_UNORDERED);
	CHECK_STR(out[1]->name, "fc_gettime(MONOTONIC)");
	/* The libc group leaves them out. */
	n = parse("libc", out, err);
	for (int i = 0; i < n; i++)
		CHECK(out[i]->kind != CD_CALL_FASTCLOCK);
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

/* The library's calls and what each is compared with side by side: the
 * issue's two promises carry their targets. */
static void test_fc_pairs(void)
{
	const struct cd_clock_spec *out[64];
	struct cd_fc_ratio r[CD_FC_RATIO_MAX];
	char err[256];
	int n = parse("library", out, err);
	int k = cd_fc_ratio_pairs(out, n, r, CD_FC_RATIO_MAX);
	if (CD_COUNTER_N > 0) {
		CHECK_INT(k, 7);
		CHECK_STR(r[0].way->name, "fc_now_ns");
		CHECK_STR(r[0].ref->name, "CLOCK_MONOTONIC");
		CHECK(r[0].target == 0.8);
		CHECK_STR(r[1].ref->name, CD_COUNTER_ORDERED_NAME);
		CHECK(r[1].target == 0);
		CHECK_STR(r[2].way->name, "fc_now_ns_unordered");
		CHECK(r[2].ref->kind == CD_CALL_COUNTER && r[2].ref->clockid == 0);
		CHECK(r[2].target == 1.1);
		CHECK_STR(r[6].ref->name, "CLOCK_MONOTONIC_COARSE");
	} else {
		CHECK_INT(k, 4);
	}
	/* Unmeasured pairs with a target have not met it; without, always. */
	CHECK(!cd_fc_ratio_met(&r[0]));
	r[0].measured = true;
	r[0].ratio = 0.8;
	CHECK(cd_fc_ratio_met(&r[0]));
	r[0].ratio = 0.81;
	CHECK(!cd_fc_ratio_met(&r[0]));
	CHECK(cd_fc_ratio_met(&r[1]));
	/* No library call, no pair; the cap holds. */
	n = parse("monotonic,all", out, err);
	CHECK_INT(cd_fc_ratio_pairs(out, 22, r, CD_FC_RATIO_MAX), 0);
	CHECK_INT(cd_fc_ratio_pairs(out, n, r, 2), 2);
}

int main(void)
{
	test_fc_pairs();
	test_find();
	test_table();
	test_parse();
	return unit_done("bench_ways");
}
