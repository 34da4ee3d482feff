/* SPDX-License-Identifier: MIT */
/*
 * cpuinfo.c: parsing /proc/cpuinfo.
 *
 * Little in this file matters for timekeeping: how many processors there are,
 * who made them, and the TSC-related flags.  x86 kernels print a block per
 * processor with "vendor_id", "model name", "cpu MHz" and "flags"; a flag
 * missing on some processors but present on others (a hypervisor that hides
 * constant_tsc from some vCPUs) is itself evidence, so the AND over every
 * processor is kept beside processor 0's.  arm64 kernels print "Features" and
 * "CPU implementer" instead, often no model name, and old ones print those
 * only once, after all the "processor" lines.
 *
 * The text comes with its length and the length is authoritative: nothing at
 * or after text[len] is read, no NUL terminator is needed, and a NUL byte
 * inside the text is an ordinary byte that matches no keyword or flag.  Keys
 * are case-sensitive, as the kernel prints them: arm's "Processor" and the
 * Raspberry Pi's "Model" are other keys than "processor" and "model name".
 * Bytes that are not printable ASCII become '?' in the strings kept.
 */
#include "probe/probe.h"
#include "probe/span.h"
#include "util/printable.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

const struct cd_cpu_flag_name cd_cpu_flag_names[CD_CPU_N_FLAGS] = {
	{ "tsc", CD_CPU_TSC },
	{ "constant_tsc", CD_CPU_CONSTANT_TSC },
	{ "nonstop_tsc", CD_CPU_NONSTOP_TSC },
	{ "rdtscp", CD_CPU_RDTSCP },
	{ "tsc_known_freq", CD_CPU_TSC_KNOWN_FREQ },
	{ "tsc_reliable", CD_CPU_TSC_RELIABLE },
	{ "tsc_adjust", CD_CPU_TSC_ADJUST },
	{ "hypervisor", CD_CPU_HYPERVISOR },
};

enum arch_seen { ARCH_NONE, ARCH_X86, ARCH_ARM64, ARCH_ARM32 };

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static struct cd_span trim(struct cd_span s)
{
	while (s.n > 0 && is_blank(s.p[0])) {
		s.p++;
		s.n--;
	}
	while (s.n > 0 && is_blank(s.p[s.n - 1]))
		s.n--;
	return s;
}

/* Split "key<TAB>: value" at its first colon.  Lines without one are not
 * key-value lines ("power management:" has one and an empty value). */
static bool split_line(struct cd_span line, struct cd_span *key, struct cd_span *val)
{
	const char *colon = memchr(line.p, ':', line.n);
	if (!colon)
		return false;
	key->p = line.p;
	key->n = (size_t)(colon - line.p);
	val->p = colon + 1;
	val->n = line.n - key->n - 1;
	*key = trim(*key);
	*val = trim(*val);
	return true;
}

/* Whole words only: "nonconstant_tsc" is not "constant_tsc". */
static unsigned parse_flags(struct cd_span s)
{
	unsigned flags = 0;
	size_t i = 0;
	while (i < s.n) {
		while (i < s.n && is_blank(s.p[i]))
			i++;
		size_t start = i;
		while (i < s.n && !is_blank(s.p[i]))
			i++;
		struct cd_span word = { s.p + start, i - start };
		for (size_t k = 0; k < CD_CPU_N_FLAGS; k++)
			if (cd_span_is(word, cd_cpu_flag_names[k].name))
				flags |= cd_cpu_flag_names[k].bit;
	}
	return flags;
}

/* "2596.116": digits, an optional fraction, nothing else.  Written by hand
 * because strtod() needs a terminator and follows the locale's decimal
 * point.  Absurd lengths are refused rather than parsed into infinity. */
static bool parse_mhz(struct cd_span s, double *out)
{
	double v = 0, scale = 1;
	size_t i = 0, int_digits = 0, frac_digits = 0;
	for (; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++, int_digits++)
		v = v * 10 + (s.p[i] - '0');
	if (i < s.n && s.p[i] == '.')
		for (i++; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++, frac_digits++) {
			scale /= 10;
			v += (s.p[i] - '0') * scale;
		}
	if (i != s.n || int_digits == 0 || int_digits > 9 || frac_digits > 9)
		return false;
	*out = v;
	return true;
}

/* "CPU architecture: 7" is a 32-bit ARM kernel (a Raspberry Pi on Raspbian
 * prints 7 even on an ARMv8 core); 8 and the old "AArch64" are arm64. */
static bool arm_arch_is_32bit(struct cd_span s)
{
	unsigned v = 0;
	if (s.n == 0 || s.n > 3)
		return false;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s.p[i] - '0');
	}
	return v < 8;
}

/* Parser state beyond what goes into struct cd_cpu. */
struct cpuinfo_state {
	bool in_block;           /* a "processor" line has been seen */
	bool block_has_flags;
	unsigned block_flags;
	bool any_flags;          /* some processor has listed flags */
	bool have_vendor, have_model, have_mhz;
	enum arch_seen arch;
};

/* Fold the finished processor's flags in.  A block without a flags line (a
 * file cut short, or arm64) is no evidence, so it does not clear flags_all;
 * and cpu->flags comes from the first processor that lists flags, so that
 * flags_all is always a subset of flags. */
static void end_block(struct cpuinfo_state *st, struct cd_cpu *cpu)
{
	if (!st->in_block || !st->block_has_flags)
		return;
	if (!st->any_flags) {
		cpu->flags = st->block_flags;
		cpu->flags_all = st->block_flags;
		st->any_flags = true;
	} else {
		cpu->flags_all &= st->block_flags;
	}
}

static void note_arch(struct cpuinfo_state *st, enum arch_seen a)
{
	if (st->arch == ARCH_NONE)
		st->arch = a;
}

static void parse_field(struct cpuinfo_state *st, struct cd_cpu *cpu,
                        struct cd_span key, struct cd_span val)
{
	if (cd_span_is(key, "processor")) {
		end_block(st, cpu);
		st->in_block = true;
		st->block_has_flags = false;
		st->block_flags = 0;
		if (cpu->count < INT_MAX)
			cpu->count++;
	} else if (cd_span_is(key, "flags")) {
		note_arch(st, ARCH_X86);
		/* The first flags line of a block counts; a second is junk. */
		if (st->in_block && !st->block_has_flags) {
			st->block_flags = parse_flags(val);
			st->block_has_flags = true;
		}
	} else if (cd_span_is(key, "vendor_id") || cd_span_is(key, "CPU implementer")) {
		note_arch(st, cd_span_is(key, "vendor_id") ? ARCH_X86 : ARCH_ARM64);
		if (!st->have_vendor) {
			cd_printable_copy(cpu->vendor, sizeof(cpu->vendor), val.p, val.n);
			st->have_vendor = true;
		}
	} else if (cd_span_is(key, "model name")) {
		if (!st->have_model) {
			cd_printable_copy(cpu->model, sizeof(cpu->model), val.p, val.n);
			st->have_model = true;
		}
	} else if (cd_span_is(key, "cpu MHz")) {
		note_arch(st, ARCH_X86);
		if (!st->have_mhz && parse_mhz(val, &cpu->mhz))
			st->have_mhz = true;
	} else if (cd_span_is(key, "Features")) {
		note_arch(st, ARCH_ARM64);
	} else if (cd_span_is(key, "CPU architecture")) {
		note_arch(st, ARCH_ARM64);
		if (st->arch == ARCH_ARM64 && arm_arch_is_32bit(val))
			st->arch = ARCH_ARM32;
	}
}

int cd_parse_cpuinfo(const char *text, size_t len, struct cd_cpu *cpu)
{
	struct cpuinfo_state st = { 0 };
	size_t pos = 0;

	memset(cpu, 0, sizeof(*cpu));
	if (!text)
		return -EINVAL;

	for (struct cd_span line, key, val; cd_next_line(text, len, &pos, &line);)
		if (split_line(line, &key, &val))
			parse_field(&st, cpu, key, val);
	end_block(&st, cpu);

	if (cpu->count == 0) {
		memset(cpu, 0, sizeof(*cpu));
		return -EINVAL;
	}
	static const char *const arch_names[] = {
		[ARCH_NONE] = "", [ARCH_X86] = "x86_64",
		[ARCH_ARM64] = "aarch64", [ARCH_ARM32] = "arm",
	};
	strcpy(cpu->arch, arch_names[st.arch]);
	cpu->have_cpuinfo = true;
	return 0;
}
