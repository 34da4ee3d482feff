/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the TSC verdict (src/diagnose/tscjudge.c, tscsources.c) and
 * of the finding check --deep makes of it (tsc-unsound in rules_tsc.c):
 * facts and numbers built by hand, for machines this one is not: no TSC, not
 * x86, one CPU, a warp, no constant_tsc, an arm64 timer, a kernel that
 * measured a warp at boot.  The cross-CPU numbers come from lib/tscsync's accumulator
 * fed simulated counters, as the real test would fill it.
 */
#include "diagnose/diagnose.h"
#include "diagnose/tscjudge.h"
#include "measure/tsc.h"
#include "probe/probe.h"
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define HZ 2596130000.0
#define ALL_TSC (CD_CPU_TSC | CD_CPU_CONSTANT_TSC | CD_CPU_NONSTOP_TSC)

static struct cd_facts *facts(unsigned flags, const char *klog)
{
	struct cd_facts *f = calloc(1, sizeof *f);
	f->kernel.ver_major = f->kernel.ver_minor = f->kernel.ver_patch = -1;
	snprintf(f->cpu.arch, sizeof f->cpu.arch, "x86_64");
	snprintf(f->cpu.vendor, sizeof f->cpu.vendor, "GenuineIntel");
	f->cpu.have_cpuinfo = true;
	f->cpu.count = 2;
	f->cpu.flags = f->cpu.flags_all = flags;
	f->klog.readable = true;
	f->klog.reaches_boot = true;
	if (klog)
		cd_klog_parse(klog, strlen(klog), &f->klog);
	cd_parse_clocksource_current("tsc", &f->cs);
	cd_parse_clocksource_list("tsc hpet acpi_pm", &f->cs);
	return f;
}

/* Counters offset by off cycles, reads 100 cycles apart. */
struct sim {
	uint64_t t;
	int64_t off;
};

static uint64_t sim_read(void *arg, int side)
{
	struct sim *s = arg;
	s->t += 100;
	return side == FC_SYNC_A ? s->t : (uint64_t)((int64_t)s->t + s->off);
}

static void add_pair(struct cd_tsc_report *t, int a, int b, int64_t off)
{
	t->pairs = realloc(t->pairs, (size_t)(t->n_pairs + 1) * sizeof *t->pairs);
	struct cd_tsc_pair *p = &t->pairs[t->n_pairs++];
	memset(p, 0, sizeof *p);
	p->cpu_a = a;
	p->cpu_b = b;
	struct sim s = { 1000000, off };
	fc_sync_acc_init(&p->r.acc);
	fc_sync_alternate(&p->r.acc, sim_read, &s, 1000);
	p->r.rounds = 1000;
}

/* A healthy two-CPU x86 machine measured for 1 s. */
static struct cd_tsc_report *report(void)
{
	struct cd_tsc_report *t = calloc(1, sizeof *t);
	t->counter.kind = FC_COUNTER_X86_TSC;
	t->counter.name = "TSC";
	t->measured = true;
	t->cpus_online = t->cpus_allowed = 2;
	t->ref_cpu = 0;
	t->perf_err = -ENODATA;
	t->raw = (struct fc_freq_estimate){ HZ * (1 + 0.1e-6), 0.05, 1.0 };
	t->mono = (struct fc_freq_estimate){ HZ * (1 - 3e-6), 0.05, 1.0 };
	add_pair(t, 0, 1, 20);
	return t;
}

static const char *const DETECTED = "[    0.000063] tsc: Detected 2596.130 MHz processor\n";

static void done(struct cd_facts *f, struct cd_tsc_report *t)
{
	cd_tsc_report_free(t);
	free(t);
	free(f);
}

static bool reasons_have(const struct cd_tsc_report *t, const char *needle)
{
	return UNIT_ROWS_HAVE(t->reasons, t->n_reasons, needle);
}

/* The sync test untested, its detail saying why; so the verdict unknown. */
static void sync_untested(const struct cd_tsc_report *t, const char *why)
{
	CHECK_INT(t->test[CD_TSC_T_SYNC].status, CD_TSC_UNTESTED);
	CHECK(strstr(t->test[CD_TSC_T_SYNC].detail, why) != NULL);
	CHECK_INT(t->verdict, CD_TSC_UNKNOWN);
}

static void test_sound(void)
{
	struct cd_facts *f = facts(ALL_TSC, DETECTED);
	struct cd_tsc_report *t = report();
	cd_tsc_judge(f, t);
	CHECK_INT(t->verdict, CD_TSC_SOUND);
	for (int i = 0; i < CD_TSC_N_TESTS; i++)
		CHECK_INT(t->test[i].status, CD_TSC_PASS);
	CHECK(t->src[CD_SRC_MEASURED].have);
	CHECK(t->src[CD_SRC_KLOG_DETECTED].have);
	CHECK(fabs(t->src[CD_SRC_KLOG_DETECTED].diff_ppm + 0.1) < 0.01);
	CHECK_STR(t->ref_name, "kernel-detected");
	CHECK(fabs(t->drift_raw_ppm - 0.1) < 0.01);
	CHECK(fabs(t->drift_mono_ppm + 3) < 0.01);
	/* Offset 20 +- 100 (and one count): bound 20 + 101. */
	CHECK(t->have_bound);
	CHECK_INT(t->bound_cycles, 121);
	CHECK(strncmp(t->summary, "sound: ", 7) == 0);
	CHECK(!t->src[CD_SRC_PERF].have && strstr(t->src[CD_SRC_PERF].note, "cap_user_time"));
	done(f, t);
}

/* A facts-level "no TSC": the CPU lists no tsc flag. */
static void test_no_tsc(void)
{
	struct cd_facts *f = facts(0, NULL);
	struct cd_tsc_report *t = calloc(1, sizeof *t);
	t->counter.kind = FC_COUNTER_X86_TSC;
	t->counter.name = "TSC";
	t->counter.usable = -ENODEV;
	t->measured = true;
	t->freq_err = -ENODEV;
	t->cpus_online = t->cpus_allowed = 2;
	cd_tsc_judge(f, t);
	CHECK_INT(t->verdict, CD_TSC_UNKNOWN);
	CHECK(strstr(t->summary, "no TSC") != NULL);
	for (int i = 0; i < CD_TSC_N_TESTS; i++)
		CHECK_INT(t->test[i].status, CD_TSC_UNTESTED);
	done(f, t);
}

static void test_not_x86(void)
{
	struct cd_facts *f = facts(0, NULL);
	snprintf(f->cpu.arch, sizeof f->cpu.arch, "riscv64");
	struct cd_tsc_report *t = calloc(1, sizeof *t);
	t->counter.kind = FC_COUNTER_NONE;
	t->counter.usable = -ENOTSUP;
	cd_tsc_judge(f, t);
	CHECK_INT(t->verdict, CD_TSC_UNKNOWN);
	CHECK(strstr(t->summary, "not x86 or arm64 (riscv64)") != NULL);
	done(f, t);
}

static void test_one_cpu(void)
{
	struct cd_facts *f = facts(ALL_TSC, DETECTED);
	struct cd_tsc_report *t = report();
	cd_tsc_report_free(t);
	t->cpus_online = t->cpus_allowed = 1;
	cd_tsc_judge(f, t);
	sync_untested(t, "one CPU: no cross-CPU test");
	done(f, t);

	/* taskset -c 0 on two CPUs */
	f = facts(ALL_TSC, DETECTED);
	t = report();
	cd_tsc_report_free(t);
	t->cpus_allowed = 1;
	cd_tsc_judge(f, t);
	CHECK(strstr(t->test[CD_TSC_T_SYNC].detail, "one CPU allowed to this process (of 2 online)") != NULL);
	CHECK_INT(t->verdict, CD_TSC_UNKNOWN);
	CHECK(strstr(t->summary, "unknown: sync: one CPU allowed") != NULL);
	done(f, t);
}

static void test_warp(void)
{
	struct cd_facts *f = facts(ALL_TSC, DETECTED);
	struct cd_tsc_report *t = report();
	add_pair(t, 0, 2, 5000);   /* CPU 2 runs 5000 cycles ahead */
	t->cpus_online = t->cpus_allowed = 3;
	cd_tsc_judge(f, t);
	CHECK_INT(t->verdict, CD_TSC_UNSOUND);
	CHECK_INT(t->test[CD_TSC_T_SYNC].status, CD_TSC_FAIL);
	CHECK_INT(t->worst_back, 4900);
	CHECK_INT(t->worst_a, 0);
	CHECK_INT(t->worst_b, 2);
	CHECK_INT(t->pairs_failed, 1);
	CHECK(reasons_have(t, "backwards by 4900 cycles"));
	done(f, t);
}

static void test_pinning_refused(void)
{
	struct cd_facts *f = facts(ALL_TSC, DETECTED);
	struct cd_tsc_report *t = report();
	t->pairs[0].err = -EINVAL;
	cd_tsc_judge(f, t);
	sync_untested(t, "pinning");
	done(f, t);
}

/* The whole test's deadline passed before a pair ran: untested, said so. */
static void test_pairs_timed_out(void)
{
	struct cd_facts *f = facts(ALL_TSC, DETECTED);
	struct cd_tsc_report *t = report();
	t->pairs[0].err = -ETIMEDOUT;
	cd_tsc_judge(f, t);
	CHECK_INT(t->pairs_timed_out, 1);
	CHECK_INT(t->pairs_refused, 0);
	sync_untested(t, "time ran out");
	done(f, t);
}

/* Ctrl-C before a pair ran: untested, and said so (not pinning refused,
 * not the time running out). */
static void test_pairs_interrupted(void)
{
	struct cd_facts *f = facts(ALL_TSC, DETECTED);
	struct cd_tsc_report *t = report();
	t->pairs[0].err = -EINTR;
	t->interrupted = true;
	cd_tsc_judge(f, t);
	CHECK_INT(t->pairs_interrupted, 1);
	CHECK_INT(t->pairs_refused, 0);
	CHECK_INT(t->pairs_timed_out, 0);
	CHECK_INT(t->verdict, CD_TSC_UNKNOWN);
	sync_untested(t, "interrupted");
	done(f, t);
}

/* A busy machine: the pair ran too few rounds to conclude. */
static void test_cut_short(void)
{
	struct cd_facts *f = facts(ALL_TSC, DETECTED);
	struct cd_tsc_report *t = report();
	t->pairs[0].r.cut_short = true;
	t->pairs[0].r.rounds = 75;
	t->pairs[0].r.elapsed_s = 0.7;
	cd_tsc_judge(f, t);
	sync_untested(t, "cut short (CPU 0-1: 75 rounds");
	/* ...but a warp seen in those few rounds still fails. */
	add_pair(t, 0, 2, 3000);
	t->pairs[1].r.cut_short = true;
	t->cpus_online = t->cpus_allowed = 3;
	cd_tsc_judge(f, t);
	CHECK_INT(t->verdict, CD_TSC_UNSOUND);
	done(f, t);
}

/* QEMU's emulated CPU: no constant_tsc, so the flags test fails and names it. */
static void test_flags(void)
{
	struct cd_facts *f = facts(CD_CPU_TSC | CD_CPU_RDTSCP, DETECTED);
	struct cd_tsc_report *t = report();
	cd_tsc_judge(f, t);
	CHECK_INT(t->test[CD_TSC_T_FLAGS].status, CD_TSC_FAIL);
	CHECK(strstr(t->test[CD_TSC_T_FLAGS].detail, "no constant_tsc") != NULL);
	CHECK_INT(t->verdict, CD_TSC_UNSOUND);
	done(f, t);

	f = facts(CD_CPU_TSC | CD_CPU_CONSTANT_TSC, DETECTED);
	t = report();
	cd_tsc_judge(f, t);
	CHECK_INT(t->test[CD_TSC_T_FLAGS].status, CD_TSC_UNTESTED);
	CHECK_INT(t->verdict, CD_TSC_UNKNOWN);
	done(f, t);

	/* One CPU lacking constant_tsc is enough. */
	f = facts(ALL_TSC, DETECTED);
	f->cpu.flags_all &= ~(unsigned)CD_CPU_CONSTANT_TSC;
	t = report();
	cd_tsc_judge(f, t);
	CHECK_INT(t->test[CD_TSC_T_FLAGS].status, CD_TSC_FAIL);
	done(f, t);
}

static void test_rate_and_precision(void)
{
	struct cd_facts *f = facts(ALL_TSC, DETECTED);
	struct cd_tsc_report *t = report();
	t->raw.hz = HZ * (1 + 2000e-6);   /* 2000 ppm from the kernel's frequency */
	cd_tsc_judge(f, t);
	CHECK_INT(t->test[CD_TSC_T_DRIFT].status, CD_TSC_FAIL);
	CHECK_INT(t->verdict, CD_TSC_UNSOUND);
	done(f, t);

	f = facts(ALL_TSC, DETECTED);
	t = report();
	t->raw.err_ppm = 500;
	cd_tsc_judge(f, t);
	CHECK_INT(t->test[CD_TSC_T_FREQ].status, CD_TSC_UNTESTED);
	CHECK_INT(t->verdict, CD_TSC_UNKNOWN);
	done(f, t);

	/* No frequency declared anywhere: drift cannot be judged. */
	f = facts(ALL_TSC, NULL);
	t = report();
	cd_tsc_judge(f, t);
	CHECK_INT(t->test[CD_TSC_T_DRIFT].status, CD_TSC_UNTESTED);
	CHECK(strstr(t->test[CD_TSC_T_DRIFT].detail, "no frequency declared") != NULL);
	CHECK(t->ref_name == NULL);
	CHECK_INT(t->n_kernel_notes, 0);
	done(f, t);

	/* The log that declares it cannot be read (dmesg_restrict, not root):
	 * that is what is said, not "no frequency declared"; the rest is
	 * measured all the same. */
	f = facts(ALL_TSC, NULL);
	f->klog.readable = false;
	snprintf(f->klog.why_not, sizeof f->klog.why_not, "the kernel log is not readable without root "
	         "because kernel.dmesg_restrict is 1");
	t = report();
	cd_tsc_judge(f, t);
	CHECK_INT(t->test[CD_TSC_T_DRIFT].status, CD_TSC_UNTESTED);
	CHECK(strstr(t->test[CD_TSC_T_DRIFT].detail, "kernel log, which declares it, cannot be read") != NULL);
	CHECK(strstr(t->test[CD_TSC_T_DRIFT].detail, "no frequency declared") == NULL);
	CHECK_INT(t->test[CD_TSC_T_SYNC].status, CD_TSC_PASS);
	CHECK_INT(t->test[CD_TSC_T_FLAGS].status, CD_TSC_PASS);
	CHECK_INT(t->n_kernel_notes, 1);
	CHECK(strstr(t->kernel_notes[0], "dmesg_restrict is 1") != NULL);
	CHECK(strstr(t->src[CD_SRC_KLOG_DETECTED].note, "not readable") != NULL);
	done(f, t);
}

/* The kernel measured a warp at boot; this short test saw none: unknown. */
static void test_kernel_evidence(void)
{
	struct cd_facts *f = facts(ALL_TSC, "[    0.000063] tsc: Detected 2596.130 MHz processor\n"
	                                    "[    0.144008] TSC synchronization [CPU#0 -> CPU#1]:\n"
	                                    "[    0.144008] Measured 66930 cycles TSC warp between CPUs, "
	                                    "turning off TSC clock.\n");
	struct cd_tsc_report *t = report();
	cd_tsc_judge(f, t);
	CHECK_INT(t->verdict, CD_TSC_UNKNOWN);
	CHECK_INT(t->n_kernel_notes, 1);
	CHECK(strstr(t->kernel_notes[0], "66930-cycle warp between CPU 0 and CPU 1") != NULL);
	done(f, t);
}

static void test_cpuid_sources(void)
{
	struct cd_facts *f = facts(ALL_TSC, DETECTED);
	struct cd_cpuid *c = &f->cpuid;
	c->have = true;
	c->leaves[c->n++] = (struct cd_cpuid_leaf){ 1, 0, 0x506f0, 0, 0, 0 };       /* Denverton */
	c->leaves[c->n++] = (struct cd_cpuid_leaf){ 0x15, 0, 2, 188, 24000000, 0 };
	c->leaves[c->n++] = (struct cd_cpuid_leaf){ 0x16, 0, 2200, 0, 0, 0 };
	c->l15_denominator = 2;
	c->l15_numerator = 188;
	c->l15_crystal_hz = 24000000;
	c->l16_base_mhz = 2200;
	snprintf(c->hv_signature, sizeof c->hv_signature, "VMwareVMware");
	c->hv_tsc_khz = 2256000;
	struct cd_tsc_report *t = report();
	cd_tsc_judge(f, t);
	CHECK(t->src[CD_SRC_CPUID_15].have);
	CHECK(t->src[CD_SRC_CPUID_15].hz == 2256000000.0);
	CHECK(t->src[CD_SRC_CPUID_16].hz == 2200000000.0);
	CHECK(t->src[CD_SRC_CPUID_16].precision_ppm > 400);   /* whole MHz */
	CHECK(t->src[CD_SRC_HV_LEAF].hz == 2256000000.0);
	CHECK(t->src[CD_SRC_CPUID_15].have_diff);

	/* ECX 0 on the Denverton model: the cited 25 MHz crystal. */
	c->leaves[1].ecx = c->l15_crystal_hz = 0;
	cd_tsc_judge(f, t);
	CHECK(t->src[CD_SRC_CPUID_15].hz == 2350000000.0);
	CHECK(strstr(t->src[CD_SRC_CPUID_15].note, "Denverton") != NULL);
	/* ...and on any other model: "crystal unknown", no guess. */
	c->leaves[0].eax = 0x50654;   /* Skylake-X */
	cd_tsc_judge(f, t);
	CHECK(!t->src[CD_SRC_CPUID_15].have);
	CHECK(strstr(t->src[CD_SRC_CPUID_15].note, "crystal unknown") != NULL);
	done(f, t);
}

static void test_arm64(void)
{
	struct cd_facts *f = facts(0, NULL);
	snprintf(f->cpu.arch, sizeof f->cpu.arch, "aarch64");
	struct cd_tsc_report *t = report();
	t->counter.kind = FC_COUNTER_ARM64_CNTVCT;
	t->counter.name = "cntvct_el0";
	t->counter.freq_register_hz = 25000000;
	t->raw.hz = 25000000 * (1 + 0.2e-6);
	t->mono.hz = 25000000;
	cd_tsc_judge(f, t);
	CHECK_INT(t->verdict, CD_TSC_SOUND);
	CHECK_STR(t->ref_name, "cntfrq");
	CHECK(t->src[CD_SRC_CNTFRQ].hz == 25000000.0);
	CHECK(!t->src[CD_SRC_CPUID_15].have);
	done(f, t);

	f = facts(0, "[    0.000000] arch_timer: Enabling global workaround for Hisilicon erratum 161010101\n");
	t = report();
	t->counter.kind = FC_COUNTER_ARM64_CNTVCT;
	t->counter.freq_register_hz = 100000000;
	t->raw.hz = t->mono.hz = 100000000;
	cd_tsc_judge(f, t);
	CHECK_INT(t->test[CD_TSC_T_FLAGS].status, CD_TSC_FAIL);
	CHECK_INT(t->verdict, CD_TSC_UNSOUND);
	CHECK_LACKS(t->summary, "trap");
	done(f, t);

	/* Freescale's A-008585 as the kernel logs it, with the trap and the
	 * read's cost measured: the verdict's line says that reads trap */
	f = facts(0, "[    0.000000] arch_timer: Enabling global workaround for Freescale erratum a005858\n"
	             "[    0.000000] arch_timer: CPU0: Trapping CNTVCT access\n"
	             "[    0.083206] arch_timer: CPU1: Trapping CNTVCT access\n");
	t = report();
	t->counter.kind = FC_COUNTER_ARM64_CNTVCT;
	t->counter.freq_register_hz = 62500000;
	t->raw.hz = t->mono.hz = 62500000;
	t->read_cost = (struct fc_read_cost){ true, 2100, 1900, 1850 };
	cd_tsc_judge(f, t);
	CHECK_INT(t->verdict, CD_TSC_UNSOUND);
	CHECK_HAS(t->test[CD_TSC_T_FLAGS].detail, "user-space reads of cntvct_el0 trap into the kernel (\"arch_timer: "
	          "CPU0: Trapping CNTVCT access\"), which works around Freescale erratum a005858: direct reads can be "
	          "wrong; one read 2100 ns, the kernel's clock 1900 ns");
	CHECK_HAS(t->summary, "unsound: flags: user-space reads of cntvct_el0 trap into the kernel");
	CHECK(reasons_have(t, "; one read 2100 ns, the kernel's clock 1900 ns"));
	done(f, t);

	/* a counter that traps with no erratum in the log (a hypervisor's TSC
	 * exiting): sound, and its line says reads trap */
	f = facts(ALL_TSC, DETECTED);
	t = report();
	t->read_cost = (struct fc_read_cost){ true, 1500, 40, 300 };
	cd_tsc_judge(f, t);
	CHECK_INT(t->verdict, CD_TSC_SOUND);
	CHECK_HAS(t->summary, "; user-space reads of the counter trap: one costs 1500 ns, the kernel's clock 40 ns");
	done(f, t);
	f = facts(ALL_TSC, DETECTED);
	t = report();
	t->read_cost = (struct fc_read_cost){ true, 20, 25, 300 };
	cd_tsc_judge(f, t);
	CHECK_LACKS(t->summary, "trap");
	done(f, t);
}

/* check --deep: an unsound TSC is the finding tsc-unsound. */
static void test_rule(void)
{
	struct cd_report *r = calloc(1, sizeof *r);
	struct cd_facts *f = facts(ALL_TSC, DETECTED);
	struct cd_tsc_report *t = report();
	add_pair(t, 0, 2, -7000);
	t->cpus_online = t->cpus_allowed = 3;
	cd_tsc_judge(f, t);
	CHECK_INT(t->verdict, CD_TSC_UNSOUND);

	cd_diagnose_deep(f, NULL, t, r);
	const struct cd_finding *x = UNIT_FOUND(cd_report_find(r, "tsc-unsound"));
	CHECK_INT(x->severity, CD_SEV_CRITICAL);   /* the clocksource is tsc */
	CHECK(x->n_evidence >= 2);
	CHECK(strstr(x->evidence[0], "6900 cycles") != NULL);
	CHECK(strstr(x->fix_now, "hpet") != NULL);
	CHECK_INT(r->status, CD_STATUS_CRITICAL);

	cd_parse_clocksource_current("hpet", &f->cs);
	cd_diagnose_deep(f, NULL, t, r);
	x = cd_report_find(r, "tsc-unsound");
	CHECK(x != NULL && x->severity == CD_SEV_WARNING);

	cd_diagnose(f, NULL, r);
	CHECK(cd_report_find(r, "tsc-unsound") == NULL);
	done(f, t);

	f = facts(ALL_TSC, DETECTED);
	t = report();
	cd_tsc_judge(f, t);
	cd_diagnose_deep(f, NULL, t, r);
	CHECK(cd_report_find(r, "tsc-unsound") == NULL);   /* sound: no finding */
	done(f, t);
	free(r);
}

int main(void)
{
	test_sound();
	test_no_tsc();
	test_not_x86();
	test_one_cpu();
	test_warp();
	test_pinning_refused();
	test_pairs_timed_out();
	test_pairs_interrupted();
	test_cut_short();
	test_flags();
	test_rate_and_precision();
	test_kernel_evidence();
	test_cpuid_sources();
	test_arm64();
	test_rule();
	return unit_done("test_tsc_verdict");
}
