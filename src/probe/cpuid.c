/* SPDX-License-Identifier: MIT */
/*
 * cpuid.c: CPUID leaves, read live or from a saved `cpuid -r -1`, and what
 * follows from them for timekeeping.
 *
 * The raw table is the fact; the derived fields (invariant TSC, hypervisor
 * bit and signature, TSC frequency leaves) are computed from it by one
 * function, so a snapshot and the live machine are judged alike.  A leaf is
 * used only when it lies within its range's maximum (leaf 0, 0x80000000, or
 * the hypervisor's base leaf): Intel CPUs answer an out-of-range leaf with
 * the data of the highest basic leaf, which would read as nonsense.
 *
 * The text parser takes text and len, and len is authoritative: it never
 * reads text[len] and needs no NUL terminator; a NUL byte inside the text
 * spoils only the line it is on.
 */
#include "probe/probe.h"
#include "probe/span.h"

#include "util/fsread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HV_FIRST 0x40000000u
#define HV_LAST 0x40010000u     /* bases run 0x40000000..0x40010000, step 0x100 */
#define HV_STEP 0x100u
#define HV_TSC_LEAF 0x10u       /* base + 0x10: TSC kHz (VMware's interface) */
#define EXT_FIRST 0x80000000u

static const char xen_signature[] = "XenVMMXenVMM";

/* ---- the instruction: the only place that knows about the architecture ---- */

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* 0 when this CPU has no cpuid instruction (an i386 or i486). */
static uint32_t cpuid_max_basic(void)
{
	return __get_cpuid_max(0, NULL);
}

static void cpuid_insn(uint32_t leaf, uint32_t subleaf, struct cd_cpuid_leaf *l)
{
	unsigned a, b, c, d;
	__cpuid_count(leaf, subleaf, a, b, c, d);
	*l = (struct cd_cpuid_leaf){ leaf, subleaf, a, b, c, d };
}
#else
static uint32_t cpuid_max_basic(void)
{
	return 0;
}

static void cpuid_insn(uint32_t leaf, uint32_t subleaf, struct cd_cpuid_leaf *l)
{
	*l = (struct cd_cpuid_leaf){ leaf, subleaf, 0, 0, 0, 0 };
}
#endif

/* ---- the table ---- */

const struct cd_cpuid_leaf *cd_cpuid_find(const struct cd_cpuid *c, uint32_t leaf, uint32_t subleaf)
{
	int n = c->n < 0 ? 0 : c->n > CD_MAX_CPUID_LEAVES ? CD_MAX_CPUID_LEAVES : c->n;
	for (int i = 0; i < n; i++)
		if (c->leaves[i].leaf == leaf && c->leaves[i].subleaf == subleaf)
			return &c->leaves[i];
	return NULL;
}

/* The leaves cd_cpuid_derive() reads. */
static bool leaf_matters(uint32_t leaf, uint32_t subleaf)
{
	if (subleaf != 0)
		return false;
	if (leaf <= 1 || leaf == 6 || leaf == 7 || leaf == 0x15 || leaf == 0x16)
		return true;
	if (leaf >= HV_FIRST && leaf <= HV_LAST + HV_TSC_LEAF)
		return (leaf & 0xff) == 0 || (leaf & 0xff) == HV_TSC_LEAF;
	return leaf == EXT_FIRST || leaf == 0x80000001 || leaf == 0x80000007 || leaf == 0x80000008;
}

/* Append a leaf, keeping the first copy of a duplicate.  A full table keeps
 * its first leaves, except that a leaf derive() needs pushes out the last one
 * it does not need: a recent Intel CPU lists a hundred basic subleaves (0x4,
 * 0xd, 0x12, 0x18, ...) before the hypervisor and extended leaves that say
 * whether its TSC is invariant.  The table stays in input order. */
static bool add_leaf(struct cd_cpuid *c, const struct cd_cpuid_leaf *l)
{
	if (cd_cpuid_find(c, l->leaf, l->subleaf))
		return false;
	if (c->n >= CD_MAX_CPUID_LEAVES) {
		int victim = -1;
		if (!leaf_matters(l->leaf, l->subleaf))
			return false;
		for (int i = CD_MAX_CPUID_LEAVES - 1; i >= 0 && victim < 0; i--)
			if (!leaf_matters(c->leaves[i].leaf, c->leaves[i].subleaf))
				victim = i;
		if (victim < 0)
			return false;
		memmove(&c->leaves[victim], &c->leaves[victim + 1],
		        (size_t)(CD_MAX_CPUID_LEAVES - 1 - victim) * sizeof(c->leaves[0]));
		c->n = CD_MAX_CPUID_LEAVES - 1;
	}
	c->leaves[c->n++] = *l;
	c->have = true;
	return true;
}

/* ---- live ---- */

static void read_leaf(struct cd_cpuid *c, uint32_t leaf, uint32_t subleaf, struct cd_cpuid_leaf *out)
{
	cpuid_insn(leaf, subleaf, out);
	add_leaf(c, out);
}

static bool sig_is(const struct cd_cpuid_leaf *l, const char *sig12)
{
	char s[12];
	memcpy(s, &l->ebx, 4);
	memcpy(s + 4, &l->ecx, 4);
	memcpy(s + 8, &l->edx, 4);
	return memcmp(s, sig12, 12) == 0;
}

/* A hypervisor range: its base leaf, then every leaf up to the maximum it
 * announces, but not past base + 0x10. */
static void read_hv_range(struct cd_cpuid *c, const struct cd_cpuid_leaf *base)
{
	struct cd_cpuid_leaf l;
	uint32_t last = base->eax;
	if (last > base->leaf + HV_TSC_LEAF)
		last = base->leaf + HV_TSC_LEAF;
	for (uint32_t leaf = base->leaf + 1; leaf <= last && leaf > base->leaf; leaf++)
		read_leaf(c, leaf, 0, &l);
}

void cd_cpuid_live(struct cd_cpuid *c)
{
	struct cd_cpuid_leaf l;
	const struct cd_cpuid_leaf *l1;
	uint32_t max_basic = cpuid_max_basic();
	static const uint32_t basic[] = { 1, 6, 7, 0x15, 0x16 };
	static const uint32_t ext[] = { 0x80000001, 0x80000007, 0x80000008 };

	memset(c, 0, sizeof(*c));
	if (max_basic == 0)
		return;
	read_leaf(c, 0, 0, &l);
	for (size_t i = 0; i < sizeof(basic) / sizeof(basic[0]); i++)
		if (basic[i] <= max_basic)
			read_leaf(c, basic[i], 0, &l);

	/* Without the hypervisor bit, 0x40000000 is an out-of-range basic leaf
	 * on Intel and its "signature" is noise; Linux does not look either. */
	if ((l1 = cd_cpuid_find(c, 1, 0)) && (l1->ecx >> 31) & 1) {
		struct cd_cpuid_leaf base;
		read_leaf(c, HV_FIRST, 0, &base);
		read_hv_range(c, &base);
		/* Xen moves itself to 0x40000100 and up when it offers the
		 * Hyper-V interface at 0x40000000 (viridian=1). */
		for (uint32_t b = HV_FIRST + HV_STEP; !sig_is(&base, xen_signature) && b <= HV_LAST; b += HV_STEP) {
			cpuid_insn(b, 0, &l);
			if (sig_is(&l, xen_signature)) {
				add_leaf(c, &l);
				read_hv_range(c, &l);
				break;
			}
		}
	}

	read_leaf(c, EXT_FIRST, 0, &l);
	uint32_t max_ext = l.eax;
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (max_ext >= EXT_FIRST && ext[i] <= max_ext)
			read_leaf(c, ext[i], 0, &l);
	cd_cpuid_derive(c);
}

/* ---- derived facts ---- */

/* Basic and extended leaves count only within their range's maximum, and
 * only when that maximum is known. */
static const struct cd_cpuid_leaf *find_in_range(const struct cd_cpuid *c, uint32_t leaf)
{
	const struct cd_cpuid_leaf *max = cd_cpuid_find(c, leaf & EXT_FIRST, 0);
	if (!max || leaf > max->eax)
		return NULL;
	return cd_cpuid_find(c, leaf, 0);
}

/* EBX, ECX, EDX as a string, trailing NULs dropped ("KVMKVMKVM\0\0\0").
 * Any other byte outside printable ASCII means this is not a signature. */
static bool read_signature(const struct cd_cpuid_leaf *l, char out[13])
{
	size_t n = 12;
	memcpy(out, &l->ebx, 4);
	memcpy(out + 4, &l->ecx, 4);
	memcpy(out + 8, &l->edx, 4);
	out[12] = '\0';
	while (n > 0 && out[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] >= 0x7f)
			n = 0;
	out[n] = '\0';
	return n > 0;
}

/* The first base with a signature, unless Xen sits at some base: then Xen,
 * as Linux decides too (Xen's Hyper-V emulation holds 0x40000000). */
static void derive_hypervisor(struct cd_cpuid *c)
{
	char sig[13];
	for (uint32_t b = HV_FIRST; b <= HV_LAST; b += HV_STEP) {
		const struct cd_cpuid_leaf *l = cd_cpuid_find(c, b, 0);
		if (!l || !read_signature(l, sig))
			continue;
		bool xen = strcmp(sig, xen_signature) == 0;
		if (c->hv_base == 0 || xen) {
			memcpy(c->hv_signature, sig, sizeof(sig));
			c->hv_base = b;
			/* The announced maximum must reach the TSC leaf; KVM's
			 * old 0 means "0x40000001" and does not. */
			const struct cd_cpuid_leaf *t = cd_cpuid_find(c, b + HV_TSC_LEAF, 0);
			c->hv_tsc_khz = (t && l->eax >= b + HV_TSC_LEAF) ? t->eax : 0;
		}
		if (xen)
			break;
	}
}

void cd_cpuid_derive(struct cd_cpuid *c)
{
	const struct cd_cpuid_leaf *l;

	c->has_invariant = false;
	c->invariant_tsc = false;
	c->hypervisor_bit = false;
	memset(c->hv_signature, 0, sizeof(c->hv_signature));
	c->hv_base = 0;
	c->hv_tsc_khz = 0;
	c->l15_denominator = c->l15_numerator = c->l15_crystal_hz = 0;
	c->l16_base_mhz = 0;

	if ((l = find_in_range(c, 0x80000007))) {
		c->has_invariant = true;
		c->invariant_tsc = (l->edx >> 8) & 1;
	}
	if ((l = find_in_range(c, 1)))
		c->hypervisor_bit = (l->ecx >> 31) & 1;
	derive_hypervisor(c);
	if ((l = find_in_range(c, 0x15))) {
		c->l15_denominator = l->eax;
		c->l15_numerator = l->ebx;
		c->l15_crystal_hz = l->ecx;
	}
	if ((l = find_in_range(c, 0x16)))
		c->l16_base_mhz = l->eax & 0xffff; /* bits 31:16 are reserved */
}

/* ---- the CPU's signature ---- */

int cd_cpuid_signature(const struct cd_cpuid *c, char *buf, size_t cap)
{
	const struct cd_cpuid_leaf *l0 = cd_cpuid_find(c, 0, 0), *l1 = cd_cpuid_find(c, 1, 0);
	if (cap > 0)
		buf[0] = '\0';
	if (!l0 || !l1 || l0->eax < 1)
		return 0;
	char vendor[13];
	memcpy(vendor, &l0->ebx, 4);
	memcpy(vendor + 4, &l0->edx, 4);
	memcpy(vendor + 8, &l0->ecx, 4);
	vendor[12] = '\0';
	for (int i = 0; i < 12; i++)
		if (vendor[i] < 0x20 || vendor[i] > 0x7e)
			vendor[i] = '?';  /* a snapshot's leaf: printed to a terminal */
	uint32_t family = (l1->eax >> 8) & 0xf, model = (l1->eax >> 4) & 0xf, stepping = l1->eax & 0xf;
	if (family == 0xf)
		family += (l1->eax >> 20) & 0xff;
	if (family == 0x6 || family >= 0xf)
		model += ((l1->eax >> 16) & 0xf) << 4;
	return snprintf(buf, cap, "%s family %u model %u stepping %u", vendor, family, model, stepping);
}

void cd_cpu_describe_live(char *buf, size_t cap)
{
	struct cd_cpuid c;
	struct cd_cpu cpu;
	size_t len = 0;
	int err, trunc;
	cd_cpuid_live(&c);
	int n = cd_cpuid_signature(&c, buf, cap);
	memset(&cpu, 0, sizeof cpu);
	char *text = cd_read_file("/", "/proc/cpuinfo", 4u << 20, &len, &err, &trunc);
	if (text) {
		(void)cd_parse_cpuinfo(text, len, &cpu);
		free(text);
	}
	size_t used = n < 0 ? 0 : (size_t)n >= cap ? cap : (size_t)n;
	if (cpu.model[0] && used < cap)
		snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", cpu.model);
	else if (!used && cpu.vendor[0])
		snprintf(buf, cap, "%s", cpu.vendor);
	if (cap > 0 && !buf[0])
		snprintf(buf, cap, "unknown CPU");
}

/* ---- the `cpuid -r -1` text ---- */

struct cursor {
	const char *p, *end;
};

static void skip_blanks(struct cursor *k)
{
	while (k->p < k->end && (*k->p == ' ' || *k->p == '\t' || *k->p == '\r'))
		k->p++;
}

static bool eat(struct cursor *k, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(k->end - k->p) < n || memcmp(k->p, word, n) != 0)
		return false;
	k->p += n;
	return true;
}

/* "0x" and 1 to 8 hex digits: a longer number is not a register. */
static bool eat_hex32(struct cursor *k, uint32_t *out)
{
	uint32_t v = 0;
	int digits = 0;
	if (!eat(k, "0x"))
		return false;
	for (; k->p < k->end; k->p++, digits++) {
		char ch = *k->p;
		int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
		        : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
		if (d < 0)
			break;
		if (digits == 8)
			return false;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return digits > 0;
}

/* "   0x00000000 0x00: eax=0x0000000d ebx=0x68747541 ecx=0x444d4163 edx=0x69746e65" */
static bool parse_leaf_line(struct cursor k, struct cd_cpuid_leaf *l)
{
	static const char *const regs[] = { "eax=", "ebx=", "ecx=", "edx=" };
	uint32_t *dst[] = { &l->eax, &l->ebx, &l->ecx, &l->edx };

	skip_blanks(&k);
	if (!eat_hex32(&k, &l->leaf))
		return false;
	skip_blanks(&k);
	if (!eat_hex32(&k, &l->subleaf) || !eat(&k, ":"))
		return false;
	for (int i = 0; i < 4; i++) {
		const char *before = k.p;
		skip_blanks(&k);
		if ((i > 0 && k.p == before) || !eat(&k, regs[i]) || !eat_hex32(&k, dst[i]))
			return false;
	}
	skip_blanks(&k);
	return k.p == k.end;
}

/* "CPU:" (one CPU, -1) or "CPU 3:" (every CPU). */
static bool is_cpu_header(struct cursor k)
{
	skip_blanks(&k);
	if (!eat(&k, "CPU"))
		return false;
	if (k.p < k.end && *k.p == ' ') {
		k.p++;
		if (k.p >= k.end || *k.p < '0' || *k.p > '9')
			return false;
		while (k.p < k.end && *k.p >= '0' && *k.p <= '9')
			k.p++;
	}
	if (!eat(&k, ":"))
		return false;
	skip_blanks(&k);
	return k.p == k.end;
}

int cd_parse_cpuid_txt(const char *text, size_t len, struct cd_cpuid *c)
{
	bool seen_header = false;
	size_t pos = 0;

	memset(c, 0, sizeof(*c));
	if (!text)
		return -EINVAL;
	for (struct cd_span line; cd_next_line(text, len, &pos, &line);) {
		struct cursor k = { line.p, line.p + line.n };
		struct cd_cpuid_leaf l;

		if (is_cpu_header(k)) {
			if (seen_header)
				break; /* the second CPU: the first is enough */
			seen_header = true;
		} else if (parse_leaf_line(k, &l)) {
			add_leaf(c, &l);
		}
	}
	cd_cpuid_derive(c); /* a parsed table is complete, as a live one is */
	return c->n > 0 ? c->n : -EINVAL;
}

int cd_format_cpuid_txt(const struct cd_cpuid *c, char *buf, size_t cap)
{
	int n = c->n < 0 ? 0 : c->n > CD_MAX_CPUID_LEAVES ? CD_MAX_CPUID_LEAVES : c->n;
	size_t total;
	int w;

	if (cap == 0)
		buf = NULL;
	w = snprintf(buf, cap, "CPU:\n");
	if (w < 0)
		return -EINVAL;
	total = (size_t)w;
	for (int i = 0; i < n; i++) {
		const struct cd_cpuid_leaf *l = &c->leaves[i];
		size_t room = total < cap ? cap - total : 0;
		/* Once full, snprintf only counts: the earlier call that ran out
		 * of room has already put the terminator at buf[cap - 1]. */
		w = snprintf(room ? buf + total : NULL, room,
		             "   0x%08x 0x%02x: eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x\n",
		             (unsigned)l->leaf, (unsigned)l->subleaf, (unsigned)l->eax,
		             (unsigned)l->ebx, (unsigned)l->ecx, (unsigned)l->edx);
		if (w < 0)
			return -EINVAL;
		total += (size_t)w;
	}
	return (int)total; /* at most 96 lines of 80 bytes */
}
