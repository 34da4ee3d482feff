/* SPDX-License-Identifier: MIT */
/*
 * test_cpuid.c: cd_parse_cpuid_txt on every fixture's cpuid.txt, the derived
 * facts on synthetic tables for each hypervisor and for Intel's TSC leaves,
 * the round trip through cd_format_cpuid_txt, broken input, and the live
 * instruction on this machine.
 */
#include "probe/probe.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>

/* Through a heap copy of exactly len bytes: ASan sees any read past it. */
static int parse_exact(const char *text, size_t len, struct cd_cpuid *c)
{
	return cd_parse_cpuid_txt(unit_exact(text, len), len, c);
}

static int parse_str(const char *text, struct cd_cpuid *c)
{
	return parse_exact(text, strlen(text), c);
}

static void add(struct cd_cpuid *c, uint32_t leaf, uint32_t sub, uint32_t a, uint32_t b, uint32_t cx, uint32_t d)
{
	c->leaves[c->n++] = (struct cd_cpuid_leaf){ leaf, sub, a, b, cx, d };
	c->have = true;
}

/* A hypervisor base leaf: max leaf in EAX, the 12 signature bytes after. */
static void add_sig(struct cd_cpuid *c, uint32_t base, uint32_t max, const char sig[12])
{
	uint32_t r[3];
	memcpy(r, sig, 12);
	add(c, base, 0, max, r[0], r[1], r[2]);
}

/* Leaf 0, leaf 1 with the hypervisor bit, and the extended range. */
static void guest_table(struct cd_cpuid *c)
{
	memset(c, 0, sizeof(*c));
	add(c, 0, 0, 0xd, 0x756e6547, 0x6c65746e, 0x49656e69);
	add(c, 1, 0, 0x000306f2, 0, 0x80000000u | 0x1, 0x178bfbff);
	add(c, 0x80000000, 0, 0x80000008, 0, 0, 0);
	add(c, 0x80000007, 0, 0, 0, 0, 0x100);
}

/* Intel's TSC leaves: leaf 0 up to max, leaf 0x15 (2/numerator of the
 * crystal), and the extended range up to ext_max with an invariant TSC. */
static void intel_tsc(struct cd_cpuid *c, uint32_t max, uint32_t numerator, uint32_t crystal, uint32_t ext_max)
{
	memset(c, 0, sizeof(*c));
	add(c, 0, 0, max, 0x756e6547, 0x6c65746e, 0x49656e69);
	add(c, 0x15, 0, 2, numerator, crystal, 0);
	add(c, 0x80000000, 0, ext_max, 0, 0, 0);
	add(c, 0x80000007, 0, 0, 0, 0, 0x100);
}

static void test_fixture(const char *dir)
{
	size_t len;
	struct cd_cpuid c, again;
	char *text = unit_need_fixture(dir, "cpuid.txt", &len);
	if (!text)
		return;
	CHECK_INT(parse_exact(text, len, &c), 27);
	CHECK(c.have);
	const struct cd_cpuid_leaf *l0 = cd_cpuid_find(&c, 0, 0);
	CHECK(l0 && l0->eax == 0xd);
	if (l0) {
		char vendor[13];
		memcpy(vendor, &l0->ebx, 4);
		memcpy(vendor + 4, &l0->edx, 4);
		memcpy(vendor + 8, &l0->ecx, 4);
		vendor[12] = '\0';
		CHECK_STR(vendor, "AuthenticAMD");
	}
	CHECK(c.hypervisor_bit);
	CHECK_STR(c.hv_signature, "TCGTCGTCGTCG");
	CHECK_INT(c.hv_base, 0x40000000);
	CHECK_INT(c.hv_tsc_khz, 0);
	CHECK(c.has_invariant);
	CHECK(!c.invariant_tsc); /* TCG's TSC is neither constant nor nonstop */
	CHECK_INT(c.l15_denominator, 0); /* 0x15 is past the maximum 0xd */
	CHECK_INT(c.l16_base_mhz, 0);
	CHECK(cd_cpuid_find(&c, 0x8000000a, 0) != NULL);
	CHECK(cd_cpuid_find(&c, 0x8000000b, 0) == NULL);

	/* The format is Debian's, byte for byte. */
	char out[8192];
	int n = cd_format_cpuid_txt(&c, out, sizeof(out));
	CHECK_INT(n, len);
	CHECK(n == (int)len && memcmp(out, text, len) == 0);
	CHECK_INT(parse_exact(out, (size_t)n, &again), 27);
	CHECK(memcmp(again.leaves, c.leaves, sizeof(c.leaves)) == 0);
	free(text);
}

static void test_fixtures(void)
{
	test_fixture("qemu-tcg-smp2-hpet");
	test_fixture("qemu-tcg-smp2-acpi_pm-cmdline");
	test_fixture("qemu-tcg-smp1-tsc");
	test_fixture("qemu-tcg-smp2-tsc-reliable");
}

static void test_signatures(void)
{
	static const struct {
		const char raw[13], *want;
	} sigs[] = {
		{ "KVMKVMKVM\0\0\0", "KVMKVMKVM" },
		{ "VMwareVMware", "VMwareVMware" },
		{ "VBoxVBoxVBox", "VBoxVBoxVBox" },
		{ "Microsoft Hv", "Microsoft Hv" },
		{ "XenVMMXenVMM", "XenVMMXenVMM" },
		{ "TCGTCGTCGTCG", "TCGTCGTCGTCG" },
		{ "bhyve bhyve ", "bhyve bhyve " },
		{ "ACRNACRNACRN", "ACRNACRNACRN" },
	};
	struct cd_cpuid c;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		guest_table(&c);
		add_sig(&c, 0x40000000, 0x40000001, sigs[i].raw);
		cd_cpuid_derive(&c);
		CHECK_STR(c.hv_signature, sigs[i].want);
		CHECK_INT(c.hv_base, 0x40000000);
		CHECK(c.hypervisor_bit);
		CHECK(c.invariant_tsc);
	}

	/* Xen with viridian=1: Hyper-V at 0x40000000, Xen at 0x40000100. */
	guest_table(&c);
	add_sig(&c, 0x40000000, 0x40000005, "Microsoft Hv");
	add_sig(&c, 0x40000100, 0x40000105, "XenVMMXenVMM");
	cd_cpuid_derive(&c);
	CHECK_STR(c.hv_signature, "XenVMMXenVMM");
	CHECK_INT(c.hv_base, 0x40000100);

	/* Xen further up, nothing at 0x40000000. */
	guest_table(&c);
	add_sig(&c, 0x40000200, 0x40000205, "XenVMMXenVMM");
	cd_cpuid_derive(&c);
	CHECK_STR(c.hv_signature, "XenVMMXenVMM");
	CHECK_INT(c.hv_base, 0x40000200);

	/* KVM before 2.6.35 left the maximum at 0. */
	guest_table(&c);
	add_sig(&c, 0x40000000, 0, "KVMKVMKVM\0\0\0");
	cd_cpuid_derive(&c);
	CHECK_STR(c.hv_signature, "KVMKVMKVM");
	CHECK_INT(c.hv_tsc_khz, 0);

	/* Not a signature: bytes outside printable ASCII. */
	guest_table(&c);
	add(&c, 0x40000000, 0, 0x40000001, 0x01020304, 0xfffefdfc, 0x41414141);
	cd_cpuid_derive(&c);
	CHECK_STR(c.hv_signature, "");
	CHECK_INT(c.hv_base, 0);
}

static void test_tsc_leaves(void)
{
	struct cd_cpuid c;

	/* VMware's TSC leaf, offered when the maximum reaches it. */
	guest_table(&c);
	add_sig(&c, 0x40000000, 0x40000010, "VMwareVMware");
	add(&c, 0x40000010, 0, 2394000, 1000000, 0, 0);
	cd_cpuid_derive(&c);
	CHECK_STR(c.hv_signature, "VMwareVMware");
	CHECK_INT(c.hv_tsc_khz, 2394000);

	/* The same leaf beyond the announced maximum does not count. */
	guest_table(&c);
	add_sig(&c, 0x40000000, 0x4000000f, "VMwareVMware");
	add(&c, 0x40000010, 0, 2394000, 1000000, 0, 0);
	cd_cpuid_derive(&c);
	CHECK_INT(c.hv_tsc_khz, 0);

	/* Intel with leaf 0x15 and an unknown crystal (Skylake server). */
	memset(&c, 0, sizeof(c));
	add(&c, 0, 0, 0x16, 0x756e6547, 0x6c65746e, 0x49656e69);
	add(&c, 1, 0, 0x50654, 0, 0x7ffefbff, 0xbfebfbff);
	add(&c, 0x15, 0, 2, 176, 0, 0);
	add(&c, 0x16, 0, 0xffff0000u | 2100, 3700, 100, 0);
	cd_cpuid_derive(&c);
	CHECK_INT(c.l15_denominator, 2);
	CHECK_INT(c.l15_numerator, 176);
	CHECK_INT(c.l15_crystal_hz, 0);
	CHECK_INT(c.l16_base_mhz, 2100); /* reserved high bits dropped */
	CHECK(!c.hypervisor_bit);
	CHECK(!c.has_invariant); /* no extended range at all */

	/* And with the crystal given (client parts: 24 MHz). */
	intel_tsc(&c, 0x16, 250, 24000000, 0x80000008);
	cd_cpuid_derive(&c);
	CHECK_INT(c.l15_crystal_hz, 24000000);
	CHECK_INT(c.l15_numerator, 250);
	CHECK(c.has_invariant && c.invariant_tsc);

	/* Leaves past their range's maximum are Intel's echo of the last one. */
	intel_tsc(&c, 0x14, 176, 0, 0x80000006);
	add(&c, 0x16, 0, 2100, 0, 0, 0);
	cd_cpuid_derive(&c);
	CHECK_INT(c.l15_numerator, 0);
	CHECK_INT(c.l16_base_mhz, 0);
	CHECK(!c.has_invariant && !c.invariant_tsc);

	/* Without leaf 0 the basic range's maximum is unknown. */
	memset(&c, 0, sizeof(c));
	add(&c, 1, 0, 0, 0, 0x80000000u, 0);
	cd_cpuid_derive(&c);
	CHECK(!c.hypervisor_bit);
}

static void test_format(void)
{
	struct cd_cpuid c, again;
	char buf[8192], small[16];

	guest_table(&c);
	add_sig(&c, 0x40000000, 0x40000010, "VMwareVMware");
	add(&c, 0x40000010, 0, 2394000, 1000000, 0, 0);
	add(&c, 0xd, 0x1ff, 1, 2, 3, 4);    /* a subleaf wider than two digits */
	add(&c, 0xffffffff, 0xffffffff, 0xffffffff, 0, 0xdeadbeef, 0xffffffff);
	cd_cpuid_derive(&c);

	int n = cd_format_cpuid_txt(&c, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n == strlen(buf));
	CHECK_INT(parse_exact(buf, (size_t)n, &again), c.n);
	CHECK(memcmp(again.leaves, c.leaves, sizeof(c.leaves)) == 0);
	CHECK_STR(again.hv_signature, "VMwareVMware");
	CHECK_INT(again.hv_tsc_khz, 2394000);
	CHECK(again.invariant_tsc);

	/* snprintf semantics: the full length, the buffer cut and terminated. */
	CHECK_INT(cd_format_cpuid_txt(&c, NULL, 0), n);
	memset(small, 'x', sizeof(small));
	CHECK_INT(cd_format_cpuid_txt(&c, small, sizeof(small)), n);
	CHECK(memcmp(small, buf, sizeof(small) - 1) == 0 && small[sizeof(small) - 1] == '\0');
	CHECK_INT(cd_format_cpuid_txt(&c, small, 1), n);
	CHECK(small[0] == '\0');
	CHECK_INT(cd_format_cpuid_txt(&c, buf, (size_t)n), n);
	CHECK_INT(strlen(buf), n - 1);

	memset(&c, 0, sizeof(c));
	CHECK_INT(cd_format_cpuid_txt(&c, buf, sizeof(buf)), 5);
	CHECK_STR(buf, "CPU:\n");
}

static void test_text(void)
{
	struct cd_cpuid c;

	/* Every CPU (`cpuid -r`): the first one only. */
	CHECK_INT(parse_str("CPU 0:\n"
	                    "   0x00000000 0x00: eax=0x00000001 ebx=0x68747541 ecx=0x444d4163 edx=0x69746e65\n"
	                    "   0x00000001 0x00: eax=0x00000001 ebx=0x00000000 ecx=0x80000000 edx=0x00000000\n"
	                    "CPU 1:\n"
	                    "   0x00000000 0x00: eax=0x00000001 ebx=0x68747541 ecx=0x444d4163 edx=0x69746e65\n"
	                    "   0x00000002 0x00: eax=0x00000001 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n", &c), 2);
	CHECK(c.hypervisor_bit);
	CHECK(cd_cpuid_find(&c, 2, 0) == NULL);

	/* Leaves without a header, upper-case hex, CRLF; a duplicate keeps the first. */
	CHECK_INT(parse_str("0x00000000 0x00: eax=0x0000000D ebx=0x0 ecx=0x0 edx=0x0\r\n"
	                    "0x00000000 0x00: eax=0x00000002 ebx=0x0 ecx=0x0 edx=0x0\r\n", &c), 1);
	CHECK_INT(c.leaves[0].eax, 0xd);

	/* Lines that are not leaves are skipped; their neighbours are kept. */
	CHECK_INT(parse_str("CPU:\n"
	                    "   0x00000000 0x00: eax=0x0000000d ebx=0x1 ecx=0x2\n"                     /* cut */
	                    "   0x00000001 0x00: eax=0x123456789 ebx=0x1 ecx=0x2 edx=0x3\n"          /* 36 bits */
	                    "   0x00000002 0x00: eax=0x1 ebx=0x1 ecx=0x2 edx=0x3 trailing\n"
	                    "   0x00000003 0x00 eax=0x1 ebx=0x1 ecx=0x2 edx=0x3\n"                   /* no colon */
	                    "   0x00000004 0x00: eax=0x1ebx=0x1 ecx=0x2 edx=0x3\n"
	                    "   0x00000005 0x00: eax=0x1 ebx=0x1 ecx=0x2 edx=0x\n"
	                    "   0x00000006 0x00: eax=0x00000004 ebx=0x0 ecx=0x0 edx=0x0\n", &c), 1);
	CHECK(cd_cpuid_find(&c, 6, 0) != NULL);

	static const char nul[] = "   0x00000000 0x00: eax=0x0000000d ebx=0\0 ecx=0x0 edx=0x0\n"
	                          "   0x00000001 0x00: eax=0x1 ebx=0x0 ecx=0x0 edx=0x0\n";
	CHECK_INT(parse_exact(nul, sizeof(nul) - 1, &c), 1);
	CHECK(cd_cpuid_find(&c, 1, 0) != NULL);

	/* len is authoritative: the last line cut inside edx's value. */
	static const char cut[] = "   0x00000000 0x00: eax=0x0000000d ebx=0x0 ecx=0x0 edx=0x12345678\n";
	CHECK_INT(parse_exact(cut, sizeof(cut) - 1 - 5, &c), 1);
	CHECK_INT(c.leaves[0].edx, 0x1234);
	CHECK_INT(parse_exact(cut, sizeof(cut) - 1 - 9, &c), -EINVAL); /* "edx=0x" */

	CHECK_INT(parse_exact("", 0, &c), -EINVAL);
	CHECK(!c.have);
	CHECK_INT(cd_parse_cpuid_txt(NULL, 0, &c), -EINVAL);
	CHECK_INT(parse_str("\n", &c), -EINVAL);
	CHECK_INT(parse_str("CPU:\n", &c), -EINVAL);

	unsigned char junk[8192];
	unsigned x = 777;
	for (size_t i = 0; i < sizeof(junk); i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (unsigned char)(x >> 16);
	}
	CHECK_INT(parse_exact((const char *)junk, sizeof(junk), &c), -EINVAL);
}

static void test_overflow(void)
{
	struct cd_cpuid c;
	size_t cap = 400 * 80, len = 0;
	char *text = malloc(cap);

	/* 200 subleaves of leaf 4: the first 96 are kept. */
	len += (size_t)sprintf(text, "CPU:\n");
	for (unsigned i = 0; i < 200; i++)
		len += (size_t)sprintf(text + len, "   0x00000004 0x%02x: eax=0x%08x ebx=0x0 ecx=0x0 edx=0x0\n", i, i);
	CHECK_INT(parse_exact(text, len, &c), CD_MAX_CPUID_LEAVES);
	CHECK_INT(c.n, CD_MAX_CPUID_LEAVES);
	CHECK_INT(c.leaves[0].subleaf, 0);
	CHECK_INT(c.leaves[CD_MAX_CPUID_LEAVES - 1].subleaf, CD_MAX_CPUID_LEAVES - 1);

	/* A long basic range does not crowd out the leaves that matter. */
	len = (size_t)sprintf(text, "CPU:\n   0x00000000 0x00: eax=0x00000020 ebx=0x0 ecx=0x0 edx=0x0\n");
	for (unsigned i = 0; i < 200; i++)
		len += (size_t)sprintf(text + len, "   0x0000000d 0x%02x: eax=0x0 ebx=0x0 ecx=0x0 edx=0x0\n", i);
	len += (size_t)sprintf(text + len,
	                       "   0x40000000 0x00: eax=0x40000001 ebx=0x4b4d564b ecx=0x564b4d56 edx=0x0000004d\n"
	                       "   0x80000000 0x00: eax=0x80000008 ebx=0x0 ecx=0x0 edx=0x0\n"
	                       "   0x80000007 0x00: eax=0x0 ebx=0x0 ecx=0x0 edx=0x00000100\n");
	CHECK_INT(parse_exact(text, len, &c), CD_MAX_CPUID_LEAVES);
	CHECK_INT(c.leaves[0].leaf, 0);
	CHECK_STR(c.hv_signature, "KVMKVMKVM");
	CHECK(c.invariant_tsc);
	CHECK_INT(c.leaves[CD_MAX_CPUID_LEAVES - 1].leaf, 0x80000007);
	free(text);
}

static void test_live(void)
{
	struct cd_cpuid c;
	cd_cpuid_live(&c);
#if defined(__x86_64__) || defined(__i386__)
	const struct cd_cpuid_leaf *l0 = cd_cpuid_find(&c, 0, 0);
	CHECK(c.have);
	CHECK(c.n > 1 && c.n <= CD_MAX_CPUID_LEAVES);
	CHECK(l0 != NULL && l0->eax > 0);
	CHECK(cd_cpuid_find(&c, 1, 0) != NULL);
	if (c.hypervisor_bit)
		CHECK(cd_cpuid_find(&c, 0x40000000, 0) != NULL);
	else
		CHECK(cd_cpuid_find(&c, 0x40000000, 0) == NULL);
	/* Whatever was read writes back and reads again the same. */
	char buf[8192];
	struct cd_cpuid again;
	int n = cd_format_cpuid_txt(&c, buf, sizeof(buf));
	CHECK_INT(parse_exact(buf, (size_t)n, &again), c.n);
	CHECK(memcmp(again.leaves, c.leaves, sizeof(c.leaves)) == 0);
	CHECK_STR(again.hv_signature, c.hv_signature);
#else
	CHECK(!c.have);
	CHECK_INT(c.n, 0);
#endif
}

int main(void)
{
	test_fixtures();
	test_signatures();
	test_tsc_leaves();
	test_format();
	test_text();
	test_overflow();
	test_live();
	return unit_done("cpuid");
}
