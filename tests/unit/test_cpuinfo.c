/* SPDX-License-Identifier: MIT */
/*
 * test_cpuinfo.c: cd_parse_cpuinfo on every fixture, on arm64 and 32-bit ARM
 * layouts written from real machines, and on broken input.  Every parse goes
 * through a heap copy of exactly len bytes, so that AddressSanitizer catches
 * a read past len.
 */
#include "probe/probe.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>

static int parse_exact(const char *text, size_t len, struct cd_cpu *cpu)
{
	return cd_parse_cpuinfo(unit_exact(text, len), len, cpu);
}

static int parse_str(const char *text, struct cd_cpu *cpu)
{
	return parse_exact(text, strlen(text), cpu);
}

static void test_fixture(const char *dir, int count, const char *vendor, const char *model,
                         double mhz, unsigned flags)
{
	size_t len;
	struct cd_cpu cpu;
	char *text = unit_need_fixture(dir, "proc/cpuinfo", &len);
	if (!text)
		return;
	CHECK_INT(parse_exact(text, len, &cpu), 0);
	CHECK(cpu.have_cpuinfo);
	CHECK_STR(cpu.arch, "x86_64");
	CHECK_INT(cpu.count, count);
	CHECK_STR(cpu.vendor, vendor);
	CHECK_STR(cpu.model, model);
	CHECK(cpu.mhz > mhz - 0.0005 && cpu.mhz < mhz + 0.0005);
	CHECK_INT(cpu.flags, flags);
	CHECK_INT(cpu.flags_all, flags);
	free(text);
}

static void test_fixtures(void)
{
	const unsigned tcg = CD_CPU_TSC | CD_CPU_RDTSCP | CD_CPU_HYPERVISOR;
	const unsigned vbox = CD_CPU_TSC | CD_CPU_RDTSCP | CD_CPU_CONSTANT_TSC;
	const char *qemu = "QEMU TCG CPU version 2.5+";

	/* No constant_tsc, no nonstop_tsc: why the kernel drops the TSC there. */
	test_fixture("qemu-tcg-smp2-hpet", 2, "AuthenticAMD", qemu, 2596.116, tcg);
	test_fixture("qemu-tcg-smp2-acpi_pm-cmdline", 2, "AuthenticAMD", qemu, 2596.120, tcg);
	test_fixture("qemu-tcg-smp1-tsc", 1, "AuthenticAMD", qemu, 2596.121, tcg);
	test_fixture("qemu-tcg-smp2-tsc-reliable", 2, "AuthenticAMD", qemu, 2596.142, tcg);
	/* The Debian 7 VirtualBox guest: constant_tsc without nonstop_tsc, and a
	 * kernel too old to print the hypervisor flag; no model, no MHz. */
	test_fixture("virtualbox-debian7-smp8-acpi_pm-3.2", 8, "GenuineIntel", "", 0, vbox);
	test_fixture("virtualbox-debian7-smp8-tsc-reliable-3.11", 8, "GenuineIntel", "", 0, vbox);
}

/* AWS Graviton2 (Neoverse N1), as its kernel prints it: two CPUs alike. */
#define GRAVITON2_CPU(n) \
	"processor\t: " #n "\n" \
	"BogoMIPS\t: 243.75\n" \
	"Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\n" \
	"CPU implementer\t: 0x41\n" \
	"CPU architecture: 8\n" \
	"CPU variant\t: 0x3\n" \
	"CPU part\t: 0xd0c\n" \
	"CPU revision\t: 1\n" \
	"\n"
static const char graviton2[] = GRAVITON2_CPU(0) GRAVITON2_CPU(1);

/* Raspberry Pi 4 on a 64-bit kernel: "Model" is not "model name". */
static const char rpi4_64[] =
	"processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\n"
	"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n"
	"processor\t: 1\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\n"
	"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n"
	"Hardware\t: BCM2835\nRevision\t: c03111\nSerial\t\t: 100000001234abcd\n"
	"Model\t\t: Raspberry Pi 4 Model B Rev 1.1\n";

/* The same board on 32-bit Raspberry Pi OS. */
static const char rpi4_32[] =
	"processor\t: 0\nmodel name\t: ARMv7 Processor rev 3 (v7l)\nBogoMIPS\t: 108.00\n"
	"Features\t: half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt vfpd32 lpae evtstrm crc32 \n"
	"CPU implementer\t: 0x41\nCPU architecture: 7\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n"
	"Hardware\t: BCM2711\nRevision\t: c03111\nModel\t\t: Raspberry Pi 4 Model B Rev 1.1\n";

/* Early arm64 kernels (3.x, X-Gene): one header, the fields once at the end. */
static const char arm64_old[] =
	"Processor\t: AArch64 Processor rev 0 (aarch64)\n"
	"processor\t: 0\nprocessor\t: 1\nprocessor\t: 2\nprocessor\t: 3\n"
	"Features\t: fp asimd evtstrm\nCPU implementer\t: 0x50\nCPU architecture: AArch64\n"
	"CPU variant\t: 0x0\nCPU part\t: 0x000\nCPU revision\t: 1\n\nHardware\t: APM X-Gene Mustang board\n";

static void test_arm(void)
{
	struct cd_cpu cpu;

	CHECK_INT(parse_str(graviton2, &cpu), 0);
	CHECK_STR(cpu.arch, "aarch64");
	CHECK_INT(cpu.count, 2);
	CHECK_STR(cpu.vendor, "0x41");
	CHECK_STR(cpu.model, "");
	CHECK_INT(cpu.flags, 0);
	CHECK_INT(cpu.flags_all, 0);
	CHECK(cpu.mhz == 0);

	CHECK_INT(parse_str(rpi4_64, &cpu), 0);
	CHECK_STR(cpu.arch, "aarch64");
	CHECK_INT(cpu.count, 2);
	CHECK_STR(cpu.model, "");

	CHECK_INT(parse_str(rpi4_32, &cpu), 0);
	CHECK_STR(cpu.arch, "arm");
	CHECK_INT(cpu.count, 1);
	CHECK_STR(cpu.model, "ARMv7 Processor rev 3 (v7l)");

	CHECK_INT(parse_str(arm64_old, &cpu), 0);
	CHECK_STR(cpu.arch, "aarch64");
	CHECK_INT(cpu.count, 4); /* "Processor" is not "processor" */
	CHECK_STR(cpu.vendor, "0x50");
}

static void test_flags(void)
{
	struct cd_cpu cpu;

	/* Whole words only. */
	CHECK_INT(parse_str("processor : 0\nflags : nonconstant_tsc xtsc tsc_reliablex rdtscp_ "
	                    "hypervisor2 tsc_adjust\ttsc_known_freq\n", &cpu), 0);
	CHECK_INT(cpu.flags, CD_CPU_TSC_ADJUST | CD_CPU_TSC_KNOWN_FREQ);

	CHECK_INT(parse_str("processor : 0\nflags : tsc constant_tsc nonstop_tsc rdtscp tsc_known_freq "
	                    "tsc_reliable tsc_adjust hypervisor\n", &cpu), 0);
	CHECK_INT(cpu.flags, 0xff);

	/* Intel's "vmx flags" line (5.9+) is another key. */
	CHECK_INT(parse_str("processor : 0\nflags : tsc\nvmx flags : constant_tsc tsc_adjust\n", &cpu), 0);
	CHECK_INT(cpu.flags, CD_CPU_TSC);

	/* A flag some CPUs lack: flags is processor 0's, flags_all the AND. */
	CHECK_INT(parse_str("processor : 0\nflags : tsc constant_tsc nonstop_tsc\n\n"
	                    "processor : 1\nflags : tsc nonstop_tsc\n\n"
	                    "processor : 2\nflags : tsc constant_tsc nonstop_tsc\n", &cpu), 0);
	CHECK_INT(cpu.count, 3);
	CHECK_INT(cpu.flags, CD_CPU_TSC | CD_CPU_CONSTANT_TSC | CD_CPU_NONSTOP_TSC);
	CHECK_INT(cpu.flags_all, CD_CPU_TSC | CD_CPU_NONSTOP_TSC);

	/* A processor without a flags line (a file cut short) proves nothing. */
	CHECK_INT(parse_str("processor : 0\nflags : tsc constant_tsc\n\nprocessor : 1\n", &cpu), 0);
	CHECK_INT(cpu.count, 2);
	CHECK_INT(cpu.flags_all, CD_CPU_TSC | CD_CPU_CONSTANT_TSC);

	/* CRLF, as a file copied through Windows comes back. */
	CHECK_INT(parse_str("processor\t: 0\r\nvendor_id\t: GenuineIntel\r\ncpu MHz\t\t: 2400.000\r\n"
	                    "flags\t\t: tsc constant_tsc\r\n", &cpu), 0);
	CHECK_STR(cpu.vendor, "GenuineIntel");
	CHECK(cpu.mhz == 2400.0);
	CHECK_INT(cpu.flags, CD_CPU_TSC | CD_CPU_CONSTANT_TSC);
}

static void test_bad(void)
{
	struct cd_cpu cpu;
	char *big;

	CHECK_INT(parse_exact("", 0, &cpu), -EINVAL);
	CHECK(!cpu.have_cpuinfo);
	CHECK_INT(cd_parse_cpuinfo(NULL, 0, &cpu), -EINVAL);
	CHECK_INT(parse_str("\n", &cpu), -EINVAL);
	CHECK_INT(parse_str("vendor_id : GenuineIntel\nflags : tsc\n", &cpu), -EINVAL);
	CHECK_STR(cpu.vendor, ""); /* nothing kept when no processor is listed */
	CHECK_INT(parse_str("processor", &cpu), -EINVAL);

	/* NULs: a key with a NUL is another key; a flag with one is no flag. */
	CHECK_INT(parse_exact("processor\0: 0\n", 14, &cpu), -EINVAL);
	static const char nul[] = "processor : 0\nvendor_id : Genu\0ine\nflags : tsc\0constant_tsc rdtscp\n";
	CHECK_INT(parse_exact(nul, sizeof(nul) - 1, &cpu), 0);
	CHECK_STR(cpu.vendor, "Genu?ine");
	CHECK_INT(cpu.flags, CD_CPU_RDTSCP);

	/* len is authoritative: "constant_tsc" cut to "constant_t" is no flag. */
	static const char cut[] = "processor : 0\nflags : tsc constant_tsc\n";
	CHECK_INT(parse_exact(cut, strlen(cut) - 3, &cpu), 0);
	CHECK_INT(cpu.flags, CD_CPU_TSC);
	CHECK_INT(parse_exact(cut, 9, &cpu), -EINVAL); /* "processo" */

	/* Binary bytes: no crash, no promise. */
	unsigned char junk[4096];
	unsigned x = 12345;
	for (size_t i = 0; i < sizeof(junk); i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (unsigned char)(x >> 16);
	}
	parse_exact((const char *)junk, sizeof(junk), &cpu);
	memcpy(junk, "processor:0\nvendor_id:", 22);
	CHECK_INT(parse_exact((const char *)junk, sizeof(junk), &cpu), 0);
	for (size_t i = 0; cpu.vendor[i]; i++)
		CHECK(cpu.vendor[i] >= 0x20 && cpu.vendor[i] < 0x7f);

	/* Huge numbers: MHz refused, not infinity; the count is not parsed. */
	CHECK_INT(parse_str("processor : 99999999999999999999999\ncpu MHz : 99999999999999999999999.5\n", &cpu), 0);
	CHECK(cpu.mhz == 0);
	CHECK_INT(parse_str("processor : 0\ncpu MHz : -5\n", &cpu), 0);
	CHECK(cpu.mhz == 0);
	CHECK_INT(parse_str("processor : 0\ncpu MHz : 1e9\n", &cpu), 0);
	CHECK(cpu.mhz == 0);

	/* A 1 MB flags line, the flag at its end. */
	size_t n = 1 << 20;
	big = malloc(n + 64);
	size_t len = (size_t)sprintf(big, "processor : 0\nflags :");
	while (len < n)
		len += (size_t)sprintf(big + len, " sse");
	len += (size_t)sprintf(big + len, " constant_tsc\n");
	CHECK_INT(parse_exact(big, len, &cpu), 0);
	CHECK_INT(cpu.flags, CD_CPU_CONSTANT_TSC);

	/* A 1 MB model name is cut to fit. */
	len = (size_t)sprintf(big, "processor : 0\nmodel name : ");
	memset(big + len, 'M', n - len);
	CHECK_INT(parse_exact(big, n, &cpu), 0);
	CHECK_INT(strlen(cpu.model), sizeof(cpu.model) - 1);
	free(big);

	/* Many processors. */
	big = malloc(10000 * 32);
	len = 0;
	for (int i = 0; i < 10000; i++)
		len += (size_t)sprintf(big + len, "processor : %d\nflags : tsc\n\n", i);
	CHECK_INT(parse_exact(big, len, &cpu), 0);
	CHECK_INT(cpu.count, 10000);
	CHECK_INT(cpu.flags_all, CD_CPU_TSC);
	free(big);
}

int main(void)
{
	test_fixtures();
	test_arm();
	test_flags();
	test_bad();
	return unit_done("cpuinfo");
}
