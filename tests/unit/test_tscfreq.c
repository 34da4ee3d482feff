/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of lib/tscfreq and lib/counter: the frequency arithmetic with
 * numbers whose answer is known (CPUID 0x15 without truncation or 32-bit
 * overflow, the cited crystal table, perf's mult/shift, the error bar of two
 * samples), then the live calls, asserting only what holds on any machine.
 * Needs nothing but lib/: tests/arm64/run builds it for aarch64 too.
 */
#include "counter.h"
#include "tscfreq.h"
#include "unit.h"

#include <errno.h>
#include <math.h>

#define NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

static void test_cpuid15(void)
{
	double hz;
	CHECK_INT(fc_freq_cpuid15(2, 188, 24000000, &hz), 0);
	NEAR(hz, 2256000000.0, 0);
	/* A ratio that is not whole: 253/2.  ecx * (ebx / eax) would give 126. */
	CHECK_INT(fc_freq_cpuid15(2, 253, 24000000, &hz), 0);
	NEAR(hz, 3036000000.0, 0);
	/* 38.4 MHz x 216 overflows 32 bits (8.3e9): must not wrap. */
	CHECK_INT(fc_freq_cpuid15(2, 216, 38400000, &hz), 0);
	NEAR(hz, 4147200000.0, 0);
	/* Not a whole number of Hz: the fraction is kept. */
	CHECK_INT(fc_freq_cpuid15(7, 300, 25000000, &hz), 0);
	NEAR(hz, 7500000000.0 / 7, 1e-3);
	CHECK_INT(fc_freq_cpuid15(0, 188, 24000000, &hz), -ENODATA);
	CHECK_INT(fc_freq_cpuid15(2, 0, 24000000, &hz), -ENODATA);
	CHECK_INT(fc_freq_cpuid15(2, 188, 0, &hz), -ENOENT);
	CHECK(hz == 0);
}

static uint32_t leaf1(uint32_t family, uint32_t model)
{
	return (family << 8) | ((model & 0xf) << 4) | ((model >> 4) << 16);
}

static void test_known_crystal(void)
{
	const char *cite = NULL;
	CHECK_INT(fc_freq_known_crystal("GenuineIntel", leaf1(6, 0x5f), &cite), 25000000);
	CHECK(cite && strstr(cite, "Denverton"));
	CHECK_INT(fc_freq_known_crystal("GenuineIntel", leaf1(6, 0x8e), &cite), 24000000);
	CHECK_INT(fc_freq_known_crystal("GenuineIntel", leaf1(6, 0x5c), &cite), 19200000);
	/* Skylake-X has a 25 MHz crystal: guessing 24 made clocks drift, so
	 * it is not in the table. */
	CHECK_INT(fc_freq_known_crystal("GenuineIntel", leaf1(6, 0x55), &cite), 0);
	CHECK(cite == NULL);
	CHECK_INT(fc_freq_known_crystal("AuthenticAMD", leaf1(6, 0x5f), &cite), 0);
	CHECK_INT(fc_freq_known_crystal(NULL, leaf1(6, 0x5f), &cite), 0);
	CHECK_INT(fc_freq_known_crystal("GenuineIntel", leaf1(15, 0x5f), &cite), 0);
}

static void test_mult_shift(void)
{
	/* The kernel's cyc2ns for 2.5 GHz: mult = 2^31 / 2.5, truncated. */
	uint32_t mult = (uint32_t)((1ull << 31) * 2 / 5);
	double hz = fc_freq_from_mult_shift(mult, 31);
	NEAR(fc_freq_ppm(hz, 2.5e9), 0, 0.01);
	CHECK(fc_freq_from_mult_shift(0, 31) == 0);
	CHECK(fc_freq_from_mult_shift(mult, 64) == 0);
	NEAR(fc_freq_ppm(1000100, 1000000), 100, 1e-9);
	CHECK(fc_freq_ppm(1, 0) == 0);
}

static void test_between(void)
{
	struct fc_freq_sample a = { .ref_ns = 1000, .width_ns = 100, .count = 5000 };
	struct fc_freq_sample b = { .ref_ns = 1000 + 1000000000, .width_ns = 300, .count = 5000 + 2500000000u };
	struct fc_freq_estimate e;
	CHECK_INT(fc_freq_between(&a, &b, &e), 0);
	NEAR(e.hz, 2.5e9, 1e-3);
	NEAR(e.interval_s, 1.0, 1e-12);
	/* (100 + 300) / 2 + 1 ns over 1 s, and one count in 2.5e9. */
	NEAR(e.err_ppm, 0.201 + 0.0004, 1e-9);
	CHECK_INT(fc_freq_between(&b, &a, &e), -EINVAL);
	struct fc_freq_sample c = b;
	c.count = a.count;
	CHECK_INT(fc_freq_between(&a, &c, &e), -EINVAL);
}

static void test_live(void)
{
	struct fc_counter_info ci;
	fc_counter_probe(&ci);
	CHECK_INT(ci.kind, FC_COUNTER_KIND);
	CHECK(ci.name != NULL);
	CHECK_STR(fc_counter_kind_name(FC_COUNTER_X86_TSC), "x86-tsc");
	CHECK_STR(fc_counter_kind_name(FC_COUNTER_ARM64_CNTVCT), "arm64-cntvct");
	CHECK_STR(fc_counter_kind_name(99), "none");
	if (FC_COUNTER_KIND == FC_COUNTER_ARM64_CNTVCT)
		CHECK(ci.usable == 0 && ci.freq_register_hz > 0);
	struct fc_freq_sample s;
	CHECK_INT(fc_freq_sample(CLOCK_MONOTONIC_RAW, 0, &s), -EINVAL);
	if (ci.usable == 0) {
		CHECK_INT(fc_freq_sample(CLOCK_MONOTONIC_RAW, 20, &s), 0);
		CHECK(s.width_ns >= 0);
		uint64_t c1 = fc_counter_read(), c2 = fc_counter_read();
		CHECK(c2 >= c1);
	}
	/* perf: a frequency, or one of the documented refusals. */
	struct fc_perf_time p;
	int e = fc_freq_perf(&p);
	CHECK(e == 0 || e == -EACCES || e == -EPERM || e == -ENOSYS || e == -ENOENT || e == -ENODATA ||
	      e == -EINVAL || e == -EOPNOTSUPP);
	if (e == 0)
		CHECK(p.hz > 1e6);
	else
		printf("test_tscfreq: perf mmap page: error %d (%s)\n", e, strerror(-e));
}

int main(void)
{
	test_cpuid15();
	test_known_crystal();
	test_mult_shift();
	test_between();
	test_live();
	return unit_done("test_tscfreq");
}
