/* SPDX-License-Identifier: MIT */
/*
 * test_clockfacts.c: the one table of timekeeping facts (lib/clockfacts),
 * and the agreement between its two readers: libfastclock
 * (fc_trust_vdso_fast, fc_trust_judge) and the command
 * (cd_clocksource_state) must give the same answer for every clocksource
 * on every kernel version, each parsing the release its own way.
 */
#include "clockfacts.h"
#include "counter.h"
#include "diagnose/diagnose.h"
#include "fastclock_trust.h"
#include "probe/probe.h"
#include "unit.h"

/* Names the table knows, and some it does not. */
static const char *const unknown_names[] = { "corefreq", "my_clock", "tsc ", "TSC", "" };

/* The command's facts for a plain x86-64 kernel of this release: no log,
 * no command line, as a snapshot with only the release would give. */
static void command_facts(struct cd_facts *f, const char *release)
{
	memset(f, 0, sizeof *f);
	f->kernel.ver_major = f->kernel.ver_minor = f->kernel.ver_patch = -1;
	snprintf(f->cpu.arch, sizeof f->cpu.arch, "x86_64");
	snprintf(f->kernel.release, sizeof f->kernel.release, "%s", release);
	f->kernel.have_release = true;
	cd_parse_kernel_release(release, &f->kernel);
}

/* The library's reading of the same release (fc_trust_gather's sscanf). */
static void library_version(const char *release, int v[3])
{
	v[0] = v[1] = v[2] = 0;
	sscanf(release, "%d.%d.%d", &v[0], &v[1], &v[2]);
}

static int disagreements;

static void agree(const char *name, const char *release)
{
	struct cd_facts *f = malloc(sizeof *f);
	command_facts(f, release);
	struct cd_cs_state cmd;
	cd_clocksource_state(name, f, &cmd);
	int v[3];
	library_version(release, v);
	int lib = fc_trust_vdso_fast(name, v[0], v[1], v[2]);

	/* The library's judgement, as a program linked against it makes it. */
	struct fc_trust_facts tf;
	memset(&tf, 0, sizeof tf);
	tf.mode = FC_MODE_AUTO;
	tf.counter_kind = FC_COUNTER_X86_TSC;
	tf.invariant = true;
	tf.have_sysfs = true;
	snprintf(tf.clocksource, sizeof tf.clocksource, "%s", name);
	tf.verdict = -1;
	tf.kernel_major = v[0];
	tf.kernel_minor = v[1];
	tf.kernel_patch = v[2];
	struct fc_trust t;
	fc_trust_judge(&tf, &t);

	const struct fc_cs_fact *fact = fc_cs_fact(name);
	bool ok = lib == fc_vdso_usually_fast(cmd.vdso) && t.vdso_fast == lib;
	if (fact) {
		const struct fc_cs_state *st = fc_cs_state(fact, v[0], v[1], v[2]);
		ok = ok && cmd.vdso == st->vdso && cmd.rank == st->rank && strcmp(cmd.typical, st->typical) == 0;
	} else {
		ok = ok && cmd.vdso == FC_VDSO_UNKNOWN && lib == -1;
	}
	if (!ok) {
		disagreements++;
		fprintf(stderr, "disagree: '%s' on %s: command vdso %d rank %d \"%s\", library %d (judge %d)\n", name,
		        release, (int)cmd.vdso, cmd.rank, cmd.typical ? cmd.typical : "", lib, t.vdso_fast);
	}
	free(f);
}

static void test_agreement(void)
{
	int n;
	const struct fc_cs_fact *table = fc_cs_table(&n);
	CHECK(n >= 12);
	static const int patches[] = { 0, 1, 189, 190, 191, 300 };
	static const char *const suffixes[] = { "", "-amd64", "-0.bpo.2-amd64", ".el7.x86_64" };
	int checked = 0;
	for (int i = 0; i < n + (int)(sizeof unknown_names / sizeof unknown_names[0]); i++) {
		const char *name = i < n ? table[i].name : unknown_names[i - n];
		for (int maj = 2; maj <= 7; maj++)
			for (int min = 0; min <= 40; min++)
				for (size_t p = 0; p < sizeof patches / sizeof patches[0]; p++) {
					char rel[64];
					snprintf(rel, sizeof rel, "%d.%d.%d%s", maj, min, patches[p],
					         suffixes[(maj + min + p) % 4]);
					agree(name, rel);
					checked++;
				}
	}
	CHECK(checked > 20000);
	CHECK_INT(disagreements, 0);
}

/* Each change takes effect at its version and not one release before, in
 * both readers; the stable backport from its own patch level. */
static void test_boundaries(void)
{
	int n;
	const struct fc_cs_fact *table = fc_cs_table(&n);
	int changes = 0;
	for (int i = 0; i < n; i++) {
		const struct fc_cs_fact *cs = &table[i];
		if (!cs->change[0])
			continue;
		changes++;
		const int *c = cs->change;
		bool at = fc_cs_vdso_reads(cs, c[0], c[1], c[2]);
		bool before = fc_cs_vdso_reads(cs, c[0], c[1] - 1, 999);
		CHECK(at != before);
		CHECK(at == !cs->removed);
		/* an unknown kernel is a current one */
		CHECK(fc_cs_vdso_reads(cs, -1, -1, -1) == at);
		if (cs->change_stable[0]) {
			const int *s = cs->change_stable;
			CHECK(fc_cs_vdso_reads(cs, s[0], s[1], s[2]) == at);
			CHECK(fc_cs_vdso_reads(cs, s[0], s[1], s[2] - 1) == before);
		}
	}
	/* kvm-clock, xen, the Hyper-V page, hpet, riscv, MIPS and GIC, sparc's two */
	CHECK_INT(changes, 9);
}

/* The facts as the kernel's history has them (the sources are in
 * clockfacts.h): checked against numbers typed here, once, so that a slip
 * in the table shows. */
static void test_known_facts(void)
{
	const struct fc_cs_fact *hpet = fc_cs_fact("hpet");
	CHECK(hpet && hpet->removed);
	CHECK(fc_cs_vdso_reads(hpet, 4, 6, 7));
	CHECK(!fc_cs_vdso_reads(hpet, 4, 7, 0));
	CHECK(fc_cs_vdso_reads(hpet, 4, 4, 189));
	CHECK(!fc_cs_vdso_reads(hpet, 4, 4, 190));
	CHECK(fc_cs_vdso_reads(hpet, 4, 5, 0));  /* the backport went to 4.4.y only */
	CHECK_INT(fc_cs_state(hpet, 4, 6, 0)->vdso, FC_VDSO_SLOW);
	CHECK(!fc_cs_vdso_reads(fc_cs_fact("kvm-clock"), 3, 7, 10));
	CHECK(fc_cs_vdso_reads(fc_cs_fact("kvm-clock"), 3, 8, 0));
	CHECK(!fc_cs_vdso_reads(fc_cs_fact("xen"), 4, 14, 300));
	CHECK(fc_cs_vdso_reads(fc_cs_fact("xen"), 4, 15, 0));
	CHECK(!fc_cs_vdso_reads(fc_cs_fact("hyperv_clocksource_tsc_page"), 4, 10, 0));
	CHECK(fc_cs_vdso_reads(fc_cs_fact("hyperv_clocksource_tsc_page"), 4, 11, 0));
	CHECK(!fc_cs_vdso_reads(fc_cs_fact("acpi_pm"), 6, 1, 0));
	CHECK(!fc_cs_vdso_reads(fc_cs_fact("hyperv_clocksource_msr"), 6, 1, 0));
	CHECK(fc_cs_vdso_reads(fc_cs_fact("tsc"), 2, 6, 32));
	CHECK(fc_cs_vdso_reads(fc_cs_fact("arch_sys_counter"), 6, 1, 0));
	CHECK(fc_cs_fact(NULL) == NULL);

	CHECK_STR(FC_KV_STR(FC_KV_HPET_VDSO_REMOVED), "4.7");
	CHECK_STR(FC_KV_STR3(FC_KV_HPET_VDSO_REMOVED_STABLE), "4.4.190");
	CHECK_STR(FC_KV_STR(FC_KV_KVMCLOCK_VDSO), "3.8");
	CHECK_STR(FC_KV_STR(FC_KV_XEN_VDSO), "4.15");
	CHECK_STR(FC_KV_STR(FC_KV_HYPERV_TSC_PAGE_VDSO), "4.11");
	CHECK_STR(FC_KV_STR(FC_KV_X86_32_VDSO_GETTIME), "3.15");
	CHECK_STR(FC_KV_STR(FC_KV_TSC_RELIABLE_SKIPS_SYNC), "3.3");
	CHECK_STR(FC_KV_STR(FC_KV_TSC_NOWATCHDOG), "5.2");
	CHECK_STR(FC_KV_STR(FC_KV_TSC_EARLY), "4.18");
	CHECK_STR(FC_KV_STR(FC_KV_TSC_EARLY_HONOURS_PARAMS), "5.4");
	CHECK_STR(FC_KV_STR(FC_KV_TSC_WATCHDOG_SELF_OFF), "5.16");

	CHECK_INT(fc_kver_compare(5, 2, 0, FC_KV_TSC_NOWATCHDOG), FC_KVER_SAME_OR_NEWER);
	CHECK_INT(fc_kver_compare(5, 1, 21, FC_KV_TSC_NOWATCHDOG), FC_KVER_OLDER);
	CHECK_INT(fc_kver_compare(-1, -1, -1, FC_KV_TSC_NOWATCHDOG), FC_KVER_UNKNOWN);
	CHECK_INT(fc_kver_compare(10, 0, 0, FC_KV_TSC_WATCHDOG_SELF_OFF), FC_KVER_SAME_OR_NEWER);

	/* the command's comparison reads the same constants the same way */
	struct cd_kernel k;
	memset(&k, 0, sizeof k);
	cd_parse_kernel_release("5.15.0-91-generic", &k);
	CHECK_INT(cd_kernel_compare(&k, FC_KV_TSC_WATCHDOG_SELF_OFF), fc_kver_compare(5, 15, 0, FC_KV_TSC_WATCHDOG_SELF_OFF));
	CHECK_INT(cd_kernel_compare(&k, FC_KV_TSC_NOWATCHDOG), FC_KVER_SAME_OR_NEWER);

	/* which clocksources are the CPU's own counter scaled, and which a
	 * hypervisor's clock */
	static const struct { const char *name; bool cpu_counter, paravirt; } kinds[] = {
		{ "tsc", true, false }, { "tsc-early", true, false }, { "kvm-clock", true, true },
		{ "xen", true, true }, { "hyperv_clocksource_tsc_page", true, true },
		{ "hyperv_clocksource_msr", true, true }, { "arch_sys_counter", true, false },
		{ "hpet", false, false }, { "acpi_pm", false, false }, { "jiffies", false, false },
		{ "mystery", false, false },
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		CHECK_INT(fc_cs_is_cpu_counter(kinds[i].name), kinds[i].cpu_counter);
		CHECK_INT(fc_cs_is_paravirt(kinds[i].name), kinds[i].paravirt);
	}
	CHECK(!fc_cs_is_paravirt(NULL) && !fc_cs_is_cpu_counter(NULL));

	/* the two readings of a state */
	CHECK_INT(fc_vdso_usually_fast(FC_VDSO_DEPENDS), 1);
	CHECK_INT(fc_vdso_surely_fast(FC_VDSO_DEPENDS), -1);
	CHECK_INT(fc_vdso_surely_fast(FC_VDSO_SLOW), 0);
	CHECK_INT(fc_vdso_usually_fast(FC_VDSO_UNKNOWN), -1);
}

/* Every clocksource Linux has registered is in the table, by name or by
 * the SoC timer rule, each with the vDSO's answer; a name Linux never
 * registered is unknown, never harmless. */
static void test_every_clocksource(void)
{
	static const struct { const char *name; enum fc_vdso now; int rank; } known[] = {
		/* x86 */
		{ "tsc", FC_VDSO_YES, 1 }, { "tsc-early", FC_VDSO_YES, 1 }, { "hpet", FC_VDSO_NO, 2 },
		{ "acpi_pm", FC_VDSO_NO, 3 }, { "pit", FC_VDSO_NO, 4 }, { "jiffies", FC_VDSO_NO, 4 },
		{ "refined-jiffies", FC_VDSO_NO, 4 }, { "kvm-clock", FC_VDSO_DEPENDS, 1 },
		{ "xen", FC_VDSO_DEPENDS, 2 }, { "hyperv_clocksource_tsc_page", FC_VDSO_YES, 1 },
		{ "hyperv_clocksource_msr", FC_VDSO_NO, 3 }, { "hyperv_clocksource", FC_VDSO_NO, 3 },
		{ "lguest", FC_VDSO_NO, 2 }, { "vmi-timer", FC_VDSO_NO, 2 }, { "sgi_rtc", FC_VDSO_NO, 2 },
		{ "uv_rtc", FC_VDSO_NO, 2 }, { "cyclone", FC_VDSO_NO, 2 }, { "scx200_hrt", FC_VDSO_NO, 3 },
		{ "mfgpt", FC_VDSO_NO, 3 }, { "numachip2", FC_VDSO_NO, 2 },
		/* arm and arm64, and SoC timers by the rule */
		{ "arch_sys_counter", FC_VDSO_YES, 1 }, { "arch_mem_counter", FC_VDSO_NO, 2 },
		{ "timer", FC_VDSO_NO, 2 }, { "mct-frc", FC_VDSO_NO, 2 }, { "mxc_timer1", FC_VDSO_NO, 2 },
		{ "hstimer", FC_VDSO_NO, 2 }, { "dw-apb-timer1", FC_VDSO_NO, 2 }, { "32k_counter", FC_VDSO_NO, 2 },
		{ "rk_timer", FC_VDSO_NO, 2 }, { "arm_global_timer", FC_VDSO_NO, 2 }, { "sun4i_timer0", FC_VDSO_NO, 2 },
		{ "goldfish_timer", FC_VDSO_NO, 2 },
		/* the other architectures */
		{ "riscv_clocksource", FC_VDSO_YES, 1 }, { "timebase", FC_VDSO_YES, 1 }, { "tod", FC_VDSO_YES, 1 },
		{ "MIPS", FC_VDSO_YES, 1 }, { "GIC", FC_VDSO_YES, 2 }, { "stick", FC_VDSO_YES, 1 },
		{ "tick", FC_VDSO_YES, 1 }, { "hbtick", FC_VDSO_NO, 2 }, { "Constant", FC_VDSO_YES, 1 },
		{ "rpcc", FC_VDSO_NO, 2 }, { "nios2-clksrc", FC_VDSO_NO, 2 }, { "xilinx_clocksource", FC_VDSO_NO, 2 },
	};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		const struct fc_cs_fact *cs = fc_cs_fact(known[i].name);
		CHECK(cs != NULL);
		if (!cs) {
			fprintf(stderr, "not in the table: %s\n", known[i].name);
			continue;
		}
		const struct fc_cs_state *st = fc_cs_state(cs, -1, -1, -1);
		CHECK_INT(st->vdso, known[i].now);
		CHECK_INT(st->rank, known[i].rank);
		/* the command says why, whatever the entry */
		struct cd_facts *f = malloc(sizeof *f);
		command_facts(f, "6.1.0");
		struct cd_cs_state v;
		cd_clocksource_state(known[i].name, f, &v);
		CHECK(v.why[0] != '\0');
		CHECK_INT(v.vdso, known[i].now);
		free(f);
	}
	/* the gains, each at its kernel */
	CHECK(!fc_cs_vdso_reads(fc_cs_fact("MIPS"), 4, 3, 99) && fc_cs_vdso_reads(fc_cs_fact("MIPS"), 4, 4, 0));
	CHECK(!fc_cs_vdso_reads(fc_cs_fact("stick"), 4, 12, 9) && fc_cs_vdso_reads(fc_cs_fact("stick"), 4, 13, 0));
	CHECK(!fc_cs_vdso_reads(fc_cs_fact("riscv_clocksource"), 5, 7, 9));
	CHECK(fc_cs_vdso_reads(fc_cs_fact("riscv_clocksource"), 5, 8, 0));
	CHECK_STR(FC_KV_STR(FC_KV_MIPS_VDSO), "4.4");
	CHECK_STR(FC_KV_STR(FC_KV_SPARC_VDSO), "4.13");
	CHECK_STR(FC_KV_STR(FC_KV_RISCV_VDSO), "5.8");
	/* the architectures' own counters are never the SoC rule's */
	CHECK(fc_cs_is_cpu_counter("arch_sys_counter") && !fc_cs_is_cpu_counter("timer"));
	/* a module's clocksource, or a name nobody registered: unknown */
	static const char *const never[] = { "corefreq", "my_clock", "TSC", "tsc ", "", "kvmclock", "acpi-pm" };
	for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
		CHECK(fc_cs_fact(never[i]) == NULL);
	struct cd_facts *f = malloc(sizeof *f);
	command_facts(f, "6.1.0");
	struct cd_cs_state v;
	cd_clocksource_state("corefreq", f, &v);
	CHECK_INT(v.vdso, FC_VDSO_UNKNOWN);
	CHECK(strstr(v.why, "does not know") != NULL);
	free(f);
}

/* Every entry is complete: a counter, a state with a cost, a rank. */
static void test_table_complete(void)
{
	int n;
	const struct fc_cs_fact *table = fc_cs_table(&n);
	for (int i = 0; i < n; i++) {
		const struct fc_cs_fact *cs = &table[i];
		CHECK(cs->name && cs->name[0]);
		CHECK(cs->counter && cs->counter[0]);
		CHECK(cs->read.vdso != FC_VDSO_UNKNOWN || cs->unread.vdso != FC_VDSO_UNKNOWN);
		if (cs->read.vdso != FC_VDSO_UNKNOWN)
			CHECK(cs->read.typical && cs->read.rank > 0);
		if (cs->unread.vdso != FC_VDSO_UNKNOWN)
			CHECK(cs->unread.typical && cs->unread.rank > 0 && cs->unread.vdso == FC_VDSO_NO);
		if (cs->change[0])
			CHECK(cs->read.vdso != FC_VDSO_UNKNOWN && cs->unread.vdso != FC_VDSO_UNKNOWN);
		for (int j = 0; j < i; j++)
			CHECK(strcmp(table[j].name, cs->name) != 0);
	}
}

int main(void)
{
	test_agreement();
	test_boundaries();
	test_known_facts();
	test_table_complete();
	test_every_clocksource();
	return unit_done("clockfacts");
}
