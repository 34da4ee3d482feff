/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cpuinfo.c: libFuzzer target for cd_parse_cpuinfo and
 * cd_parse_cpuid_txt.
 *
 * Both parsers take text and len and must not read past len, so each is fed
 * a heap copy of exactly len bytes (AddressSanitizer flags any read beyond),
 * then a NUL-terminated copy, and must give the same answer both times.  The
 * CPUID table must also survive cd_format_cpuid_txt and come back unchanged.
 */
#include "fuzz.h"
#include "probe/probe.h"

#include <stdio.h>

static void check_cpu(const struct cd_cpu *a, const struct cd_cpu *b, int ra, int rb)
{
	if (ra != rb || a->have_cpuinfo != b->have_cpuinfo || a->count != b->count ||
	    a->flags != b->flags || a->flags_all != b->flags_all || a->mhz != b->mhz ||
	    strcmp(a->arch, b->arch) || strcmp(a->vendor, b->vendor) || strcmp(a->model, b->model))
		abort();
	fuzz_check_str(a->arch, sizeof(a->arch));
	fuzz_check_str(a->vendor, sizeof(a->vendor));
	fuzz_check_str(a->model, sizeof(a->model));
	if ((a->flags_all & ~a->flags) || a->count < 0 || (ra == 0) != (a->count > 0) ||
	    !(a->mhz >= 0 && a->mhz < 1e9))
		abort();
}

static void check_cpuid(const struct cd_cpuid *a, const struct cd_cpuid *b, int ra, int rb)
{
	if (ra != rb || a->n != b->n || memcmp(a->leaves, b->leaves, sizeof(a->leaves)) ||
	    strcmp(a->hv_signature, b->hv_signature) || a->invariant_tsc != b->invariant_tsc)
		abort();
	if (a->n < 0 || a->n > CD_MAX_CPUID_LEAVES || a->have != (a->n > 0))
		abort();
	fuzz_check_str(a->hv_signature, sizeof(a->hv_signature));

	/* Round trip through the text form. */
	static char buf[CD_MAX_CPUID_LEAVES * 128];
	static struct cd_cpuid again;
	int n = cd_format_cpuid_txt(a, buf, sizeof(buf));
	if (n < 0 || (size_t)n >= sizeof(buf) || cd_format_cpuid_txt(a, NULL, 0) != n)
		abort();
	int r = cd_parse_cpuid_txt(buf, (size_t)n, &again);
	if ((a->n ? r != a->n : r >= 0) || again.n != a->n ||
	    memcmp(again.leaves, a->leaves, sizeof(a->leaves)) ||
	    strcmp(again.hv_signature, a->hv_signature) || again.hv_tsc_khz != a->hv_tsc_khz ||
	    again.l15_numerator != a->l15_numerator || again.has_invariant != a->has_invariant)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Large structs: static, not on the fuzzer's stack. */
	static struct cd_cpu cpu_a, cpu_b;
	static struct cd_cpuid id_a, id_b;
	char *exact = fuzz_exact(data, size);
	char *termed = fuzz_text(data, size);

	int ra = cd_parse_cpuinfo(exact, size, &cpu_a);
	int rb = cd_parse_cpuinfo(termed, size, &cpu_b);
	check_cpu(&cpu_a, &cpu_b, ra, rb);

	ra = cd_parse_cpuid_txt(exact, size, &id_a);
	rb = cd_parse_cpuid_txt(termed, size, &id_b);
	check_cpuid(&id_a, &id_b, ra, rb);

	free(exact);
	free(termed);
	return 0;
}
