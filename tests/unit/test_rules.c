/* SPDX-License-Identifier: MIT */
/* Unit tests of the diagnosis: facts built by hand in, findings out. */
#include "diagnose/diagnose.h"
#include "diagnose/rules.h"
#include "diagnose/fixes.h"
#include "probe/probe.h"
#include "unit.h"

#include <stdlib.h>

static struct cd_facts *facts(const char *current, const char *available, const char *release)
{
	struct cd_facts *f = calloc(1, sizeof *f);
	f->kernel.ver_major = f->kernel.ver_minor = f->kernel.ver_patch = -1;
	if (current)
		cd_parse_clocksource_current(current, &f->cs);
	if (available)
		cd_parse_clocksource_list(available, &f->cs);
	if (release) {
		snprintf(f->kernel.release, sizeof f->kernel.release, "%s", release);
		f->kernel.have_release = true;
		cd_parse_kernel_release(release, &f->kernel);
	}
	return f;
}

static void cpu(struct cd_facts *f, const char *vendor, int count, unsigned flags)
{
	f->cpu.have_cpuinfo = true;
	snprintf(f->cpu.vendor, sizeof f->cpu.vendor, "%s", vendor);
	f->cpu.count = count;
	f->cpu.flags = f->cpu.flags_all = flags;
}

static void log_text(struct cd_facts *f, const char *text)
{
	f->klog.readable = true;
	f->klog.source = CD_KLOG_FILE;
	cd_klog_parse(text, strlen(text), &f->klog);
}

static const struct cd_finding *find(const struct cd_report *r, const char *code)
{
	return cd_report_find(r, code);
}

/* The finding that must be there: when it is not, one failed check and an
 * empty finding, so that the checks on it fail instead of crashing. */
static const struct cd_finding *found(const struct cd_report *r, const char *code)
{
	static const struct cd_finding none;
	const struct cd_finding *x = cd_report_find(r, code);
	if (!x)
		fprintf(stderr, "no finding %s\n", code);
	CHECK(x != NULL);
	return x ? x : &none;
}

static int sev(const struct cd_report *r, const char *code)
{
	const struct cd_finding *x = find(r, code);
	return x ? (int)x->severity : -1;
}

/* A measurement as if every high-resolution call cost ratio times a forced
 * system call. */
static void fake_measure(struct cd_measurements *m, double ratio)
{
	memset(m, 0, sizeof *m);
	m->done = true;
	m->n = CD_N_CHECK_CLOCKS;
	for (int i = 0; i < m->n; i++) {
		struct cd_clock_cost *c = &m->c[i];
		c->spec = &cd_check_clocks[i];
		c->measured = true;
		c->syscall_ns = 900;
		c->ratio = c->spec->high_res ? ratio : 0.03;
		c->ns_per_call = c->ratio * c->syscall_ns;
		c->sys_share = -1;
		c->syscall = cd_verdict_syscall(c->ratio, c->sys_share);
	}
}

static void test_acpi_pm_after_warp(void)
{
	struct cd_facts *f = facts("acpi_pm", "acpi_pm", "3.2.0-4-686-pae");
	cpu(f, "GenuineIntel", 8, CD_CPU_TSC | CD_CPU_CONSTANT_TSC | CD_CPU_RDTSCP);
	log_text(f, "[    0.144008] TSC synchronization [CPU#0 -> CPU#1]:\n"
	            "[    0.144008] Measured 66930 cycles TSC warp between CPUs, turning off TSC clock.\n"
	            "[    0.144008] Marking TSC unstable due to check_tsc_sync_source failed\n");
	struct cd_report r;
	cd_diagnose(f, NULL, &r);
	CHECK_INT(r.status, CD_STATUS_CRITICAL);
	CHECK_INT(sev(&r, "slow-clocksource"), CD_SEV_CRITICAL);
	CHECK_INT(sev(&r, "tsc-unstable-sync"), CD_SEV_WARNING);
	CHECK_INT(sev(&r, "fix-needs-newer-kernel"), CD_SEV_WARNING);
	CHECK(strstr(found(&r, "tsc-unstable-sync")->title, "66930") != NULL);
	CHECK(find(&r, "vdso-fallback") == NULL); /* nothing measured */
	CHECK(!r.measured);
	/* Most severe first. */
	CHECK_INT(r.f[0].severity, CD_SEV_CRITICAL);

	/* The same on 3.3: tsc=reliable is the fix, and no newer kernel is needed. */
	snprintf(f->kernel.release, sizeof f->kernel.release, "3.3.0-1-amd64");
	cd_parse_kernel_release(f->kernel.release, &f->kernel);
	cd_diagnose(f, NULL, &r);
	CHECK(find(&r, "fix-needs-newer-kernel") == NULL);
	CHECK(strstr(found(&r, "slow-clocksource")->fix_lasting, "tsc=reliable") != NULL);
	free(f);
}

/* Measured machines: every high-resolution call ratio times a forced
 * system call, and what the report says of it.  ANY: not checked; a
 * severity of -1: no such finding. */
#define ANY (-2)

static void test_measured(void)
{
	static const struct {
		const char *current, *available;
		double ratio;
		int status, slow, fallback;  /* the status, slow-clocksource's and vdso-fallback's severity */
		const char *fallback_fix;    /* in vdso-fallback's fix_now */
		int n;                       /* findings */
		const char *summary;         /* in the summary line */
	} cases[] = {
		/* On tsc the vDSO should serve; a measured fallback means
		 * something else is wrong (vdso=0, a sandbox). */
		{ "tsc", "tsc hpet", 1.0, CD_STATUS_CRITICAL, -1, ANY, "vdso=0", ANY, NULL },
		{ "tsc", "tsc hpet", 0.1, CD_STATUS_OK, ANY, ANY, NULL, 0, "cheap" },
		/* The measurement contradicts the rule: only a warning. */
		{ "hpet", "hpet acpi_pm", 0.1, ANY, CD_SEV_WARNING, ANY, NULL, ANY, NULL },
		{ "hpet", "hpet acpi_pm", 0.98, ANY, CD_SEV_CRITICAL, CD_SEV_CRITICAL, NULL, ANY, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_facts *f = facts(cases[i].current, cases[i].available, "6.1.0-1-amd64");
		struct cd_measurements m;
		fake_measure(&m, cases[i].ratio);
		struct cd_report r;
		cd_diagnose(f, &m, &r);
		if (cases[i].status != ANY)
			CHECK_INT(r.status, cases[i].status);
		if (cases[i].slow != ANY)
			CHECK_INT(sev(&r, "slow-clocksource"), cases[i].slow);
		if (cases[i].fallback != ANY)
			CHECK_INT(sev(&r, "vdso-fallback"), cases[i].fallback);
		if (cases[i].fallback_fix)
			CHECK(strstr(found(&r, "vdso-fallback")->fix_now, cases[i].fallback_fix) != NULL);
		if (cases[i].n != ANY)
			CHECK_INT(r.n, cases[i].n);
		if (cases[i].summary)
			CHECK(strstr(r.summary, cases[i].summary) != NULL);
		CHECK(r.measured);
		free(f);
	}
}

static void test_kvm_clock(void)
{
	struct cd_facts *f = facts("kvm-clock", "kvm-clock tsc acpi_pm", "6.1.0-1-amd64");
	cpu(f, "GenuineIntel", 4, CD_CPU_TSC | CD_CPU_CONSTANT_TSC | CD_CPU_NONSTOP_TSC | CD_CPU_HYPERVISOR);
	struct cd_report r;
	cd_diagnose(f, NULL, &r);
	CHECK_INT(r.status, CD_STATUS_OK);
	CHECK_INT(sev(&r, "clocksource-unverified"), CD_SEV_INFO);

	struct cd_measurements m;
	fake_measure(&m, 0.95);
	cd_diagnose(f, &m, &r);
	CHECK_INT(r.status, CD_STATUS_CRITICAL);
	const struct cd_finding *x = find(&r, "kvmclock-no-vdso");
	CHECK(x && strstr(x->fix_now, "echo tsc") != NULL);
	CHECK(find(&r, "clocksource-unverified") == NULL);

	fake_measure(&m, 0.12);
	cd_diagnose(f, &m, &r);
	CHECK_INT(r.status, CD_STATUS_OK);
	CHECK_INT(r.n, 0);

	f->kernel.cmd_no_kvmclock_vsyscall = true;
	cd_diagnose(f, NULL, &r);
	CHECK_INT(sev(&r, "slow-clocksource"), CD_SEV_CRITICAL);
	CHECK_INT(sev(&r, "clocksource-forced"), CD_SEV_WARNING);
	free(f);
}

static void test_ntp_severity(void)
{
	struct cd_facts *f = facts("tsc", "tsc hpet", "6.1.0-1-amd64");
	f->ntp.have = true;
	f->ntp.synchronized = false;
	f->ntp.state = 5;
	f->ntp.status = 0x40;
	struct cd_report r;
	cd_diagnose(f, NULL, &r);
	CHECK_INT(sev(&r, "ntp-unsynchronized"), CD_SEV_INFO);
	CHECK_INT(r.status, CD_STATUS_OK);

	/* With a TSC fix in force, the clock's discipline is the only check left. */
	f->kernel.cmd_tsc_reliable = true;
	cd_diagnose(f, NULL, &r);
	CHECK_INT(sev(&r, "ntp-unsynchronized"), CD_SEV_WARNING);
	CHECK_INT(sev(&r, "tsc-reliable-set"), CD_SEV_INFO);
	CHECK_INT(r.status, CD_STATUS_WARNING);

	/* With a TSC fix advised in the same report. */
	free(f);
	f = facts("hpet", "hpet acpi_pm", "6.1.0-1-amd64");
	f->ntp.have = true;
	log_text(f, "[0.27] tsc: Marking TSC unstable due to TSCs unsynchronized\n");
	cd_diagnose(f, NULL, &r);
	CHECK_INT(sev(&r, "ntp-unsynchronized"), CD_SEV_WARNING);

	f->ntp.synchronized = true;
	cd_diagnose(f, NULL, &r);
	CHECK(find(&r, "ntp-unsynchronized") == NULL);
	free(f);
}

static void test_not_invariant_severity(void)
{
	struct cd_facts *f = facts("tsc", "tsc hpet", "6.1.0-1-amd64");
	cpu(f, "AuthenticAMD", 1, CD_CPU_TSC);
	struct cd_report r;
	cd_diagnose(f, NULL, &r);
	CHECK_INT(sev(&r, "tsc-not-invariant"), CD_SEV_INFO);
	CHECK_INT(r.status, CD_STATUS_OK);
	cd_parse_clocksource_current("hpet", &f->cs);
	cd_diagnose(f, NULL, &r);
	CHECK_INT(sev(&r, "tsc-not-invariant"), CD_SEV_WARNING);
	f->cpu.flags = f->cpu.flags_all = CD_CPU_TSC | CD_CPU_CONSTANT_TSC | CD_CPU_NONSTOP_TSC;
	cd_diagnose(f, NULL, &r);
	CHECK(find(&r, "tsc-not-invariant") == NULL);
	/* No TSC at all (an arm64 box): nothing to say about invariance. */
	f->cpu.flags = f->cpu.flags_all = 0;
	cd_diagnose(f, NULL, &r);
	CHECK(find(&r, "tsc-not-invariant") == NULL);
	free(f);
}

static void test_watchdog(void)
{
	struct cd_facts *f = facts("hpet", "hpet acpi_pm", "6.1.0-1-amd64");
	cpu(f, "GenuineIntel", 4, CD_CPU_TSC | CD_CPU_CONSTANT_TSC | CD_CPU_NONSTOP_TSC);
	log_text(f,
	         "[    0.000000] tsc: Detected 2000.000 MHz processor\n"
	         "[ 3007.005852] clocksource: timekeeping watchdog on CPU0: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
	         "[ 3007.005853] clocksource:                       'hpet' wd_nsec: 500000000 wd_now: 1 wd_last: 0 mask: ffffffff\n"
	         "[ 3007.005854] clocksource:                       'tsc' cs_nsec: 600000000 cs_now: 2 cs_last: 1 mask: ffffffffffffffff\n"
	         "[ 3007.005854] tsc: Marking TSC unstable due to clocksource watchdog\n");
	struct cd_report r;
	cd_diagnose(f, NULL, &r);
	const struct cd_finding *x = find(&r, "tsc-unstable-watchdog");
	CHECK(x != NULL);
	if (x) {
		CHECK(strstr(x->title, "against hpet") != NULL);
		/* 5.2 and later: turn off only the watchdog, keep the boot-time test. */
		CHECK(strstr(x->fix_lasting, "tsc=nowatchdog") != NULL);
		bool skew = false;
		for (int i = 0; i < x->n_evidence; i++)
			skew |= strstr(x->evidence[i], "a skew of 100.0 ms") != NULL;
		CHECK(skew);
	}
	/* Before 5.2 there is no tsc=nowatchdog. */
	cd_parse_kernel_release("4.19.0", &f->kernel);
	cd_diagnose(f, NULL, &r);
	x = find(&r, "tsc-unstable-watchdog");
	CHECK(x && strstr(x->fix_lasting, "tsc=reliable") != NULL && !strstr(x->fix_lasting, "nowatchdog"));
	free(f);
}

static void test_unknown(void)
{
	struct cd_facts *f = facts(NULL, NULL, NULL);
	struct cd_report r;
	cd_diagnose(f, NULL, &r);
	CHECK_INT(r.status, CD_STATUS_UNKNOWN);
	CHECK_INT(r.n, 0);
	/* A container without /sys: the measurement alone still tells. */
	struct cd_measurements m;
	fake_measure(&m, 0.1);
	cd_diagnose(f, &m, &r);
	CHECK_INT(r.status, CD_STATUS_OK);
	fake_measure(&m, 1.0);
	cd_diagnose(f, &m, &r);
	CHECK_INT(r.status, CD_STATUS_CRITICAL);
	const struct cd_finding *x = find(&r, "vdso-fallback");
	CHECK(x && strstr(x->fix_now, "Read the host's") != NULL);
	/* When even the coarse clocks reach the kernel, the vDSO itself is missing. */
	for (int i = 0; i < m.n; i++)
		if (!m.c[i].spec->high_res)
			m.c[i].syscall = true;
	cd_diagnose(f, &m, &r);
	x = find(&r, "vdso-fallback");
	CHECK(x && strstr(x->fix_now, "no vDSO at all") != NULL);
	/* Clock ids an old kernel's vDSO never served are no fallback of the
	 * clocksource: only REALTIME, MONOTONIC and gettimeofday count. */
	fake_measure(&m, 0.1);
	for (int i = 0; i < m.n; i++)
		if (strcmp(m.c[i].spec->name, "CLOCK_TAI") == 0 || strcmp(m.c[i].spec->name, "CLOCK_BOOTTIME") == 0)
			m.c[i].syscall = true;
	cd_diagnose(f, &m, &r);
	CHECK(find(&r, "vdso-fallback") == NULL);
	CHECK_INT(r.status, CD_STATUS_OK);
	free(f);
}

static void cs_state(const char *name, const char *release, enum fc_vdso want)
{
	struct cd_facts *f = facts(NULL, NULL, release);
	struct cd_cs_state v;
	cd_clocksource_state(name, f, &v);
	if ((int)v.vdso != (int)want)
		fprintf(stderr, "clocksource %s on %s\n", name, release ? release : "(unknown)");
	CHECK_INT(v.vdso, want);
	CHECK(v.why[0] != '\0');
	free(f);
}

static void test_clocksource_states(void)
{
	static const struct { const char *name, *release; enum fc_vdso want; } cases[] = {
		{ "tsc", "6.1.0", CD_VDSO_YES }, { "tsc-early", NULL, CD_VDSO_YES },
		/* before 4.7 (4.4.190 in stable) the vDSO reads the device itself */
		{ "hpet", "6.1.0", CD_VDSO_NO }, { "hpet", "4.6.0", CD_VDSO_SLOW },
		{ "hpet", "4.4.189", CD_VDSO_SLOW }, { "hpet", "4.4.190", CD_VDSO_NO }, { "hpet", NULL, CD_VDSO_NO },
		{ "kvm-clock", "3.11-0.bpo.2-686-pae", CD_VDSO_NO },   /* 32-bit: never in the vDSO */
		{ "kvm-clock", "3.7.0", CD_VDSO_NO }, { "kvm-clock", "3.8.0", CD_VDSO_DEPENDS },
		{ "kvm-clock", NULL, CD_VDSO_DEPENDS },
		{ "xen", "4.14.0", CD_VDSO_NO }, { "xen", "5.10.0", CD_VDSO_DEPENDS },
		{ "hyperv_clocksource_tsc_page", "4.10.0", CD_VDSO_NO },
		{ "hyperv_clocksource_tsc_page", NULL, CD_VDSO_YES }, { "hyperv_clocksource_msr", NULL, CD_VDSO_NO },
		{ "acpi_pm", "2.6.32", CD_VDSO_NO }, { "jiffies", NULL, CD_VDSO_NO }, { "refined-jiffies", NULL, CD_VDSO_NO },
		{ "arch_sys_counter", "6.1.0", CD_VDSO_YES }, { "mystery-clock", NULL, CD_VDSO_UNKNOWN },
		/* A 32-bit x86 kernel before 3.15 has no vDSO time at all */
		{ "tsc", "3.11-0.bpo.2-686-pae", CD_VDSO_NO },
		{ "hpet", "2.6.32-5-686", CD_VDSO_NO },   /* not "the vDSO reads hpet itself" */
		{ "hpet", "2.6.32-5-amd64", CD_VDSO_SLOW },
		{ "tsc", "3.16.0-4-686-pae", CD_VDSO_YES }, { "tsc", "2.6.35.14-106.fc14.i686.PAE", CD_VDSO_NO },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cs_state(cases[i].name, cases[i].release, cases[i].want);

	/* Every clocksource of the table has its reason, on an old kernel, a
	 * new one and one of unknown version. */
	int n;
	const struct fc_cs_fact *table = fc_cs_table(&n);
	static const char *const releases[] = { "2.6.18", "4.4.0", "6.12.0", NULL };
	for (int i = 0; i < n; i++)
		for (size_t j = 0; j < sizeof releases / sizeof releases[0]; j++) {
			struct cd_facts *f = facts(NULL, NULL, releases[j]);
			struct cd_cs_state v;
			cd_clocksource_state(table[i].name, f, &v);
			if (!v.why[0])
				fprintf(stderr, "no reason for %s on %s\n", table[i].name, releases[j] ? releases[j] : "?");
			CHECK(v.why[0] != '\0');
			free(f);
		}
}

static bool has(const char *text, const char *needle)
{
	bool ok = strstr(text, needle) != NULL;
	if (!ok)
		fprintf(stderr, "  \"%s\" not in: %s\n", needle, text);
	return ok;
}

/* 32-bit from the log alone (Ubuntu's -generic was built for both). */
static void test_32bit_from_log(void)
{
	struct cd_facts *f = facts("hpet", "hpet acpi_pm", "2.6.24-19-generic");
	CHECK(!cd_kernel_32bit(f));
	log_text(f, "[    0.000000] 3200MB HIGHMEM available.\n");
	CHECK(cd_kernel_32bit(f) && cd_kernel_no_vdso_time(f));
	struct cd_report r;
	cd_diagnose(f, NULL, &r);
	const struct cd_finding *x = find(&r, "slow-clocksource");
	CHECK(x && x->severity == CD_SEV_CRITICAL && has(x->title, "32-bit kernel's vDSO has no clock_gettime"));
	free(f);
	/* uname's answer in a snapshot, over cpuinfo's guess */
	f = facts("tsc", NULL, "4.9.0-8-686-pae");
	snprintf(f->cpu.arch, sizeof f->cpu.arch, "i686");
	CHECK(cd_kernel_32bit(f) && !cd_kernel_no_vdso_time(f));
	free(f);
}

/* No sysfs, and the log and command line leave only the tick-based ones. */
static void test_tick_based_left(void)
{
	static const char *const log =
		"[    0.000000] Command line: ro acpi=off\n"
		"[    0.004000] tsc: Marking TSC unstable due to could not calculate TSC khz\n";
	struct cd_facts *f = facts(NULL, NULL, "5.10.0-20-amd64");
	cpu(f, "GenuineIntel", 2, CD_CPU_TSC | CD_CPU_CONSTANT_TSC);
	f->hv.kind = CD_HV_NONE;
	log_text(f, log);
	cd_parse_cmdline("ro acpi=off", &f->kernel);
	struct cd_report r;
	cd_diagnose(f, NULL, &r);
	CHECK_INT(r.status, CD_STATUS_CRITICAL);
	const struct cd_finding *x = find(&r, "slow-clocksource");
	CHECK(x && has(x->title, "tick-based") && has(x->fix_lasting, "Remove acpi=off"));
	CHECK(x && strcmp(x->act_remove, "acpi=off") == 0 && !x->act_add[0]);
	/* Without acpi=off (nor the kernel's "No reference" line), an HPET may
	 * be there: nothing is concluded. */
	free(f);
	f = facts(NULL, NULL, "5.10.0-20-amd64");
	cpu(f, "GenuineIntel", 2, CD_CPU_TSC | CD_CPU_CONSTANT_TSC);
	f->hv.kind = CD_HV_NONE;
	log_text(f, "[    0.004000] tsc: Marking TSC unstable due to could not calculate TSC khz\n");
	cd_diagnose(f, NULL, &r);
	CHECK(!find(&r, "slow-clocksource"));
	CHECK_INT(r.status, CD_STATUS_UNKNOWN);
	/* The kernel's own "No reference" line says the same as acpi=off. */
	log_text(f, "[    0.000000] tsc: No reference (HPET/PMTIMER) available\n");
	cd_diagnose(f, NULL, &r);
	CHECK(find(&r, "slow-clocksource") != NULL);
	/* A KVM guest also has kvm-clock. */
	f->hv.kind = CD_HV_KVM;
	cd_diagnose(f, NULL, &r);
	CHECK(!find(&r, "slow-clocksource"));
	free(f);
}

/* The evidence that the kernel was right to drop the TSC. */
static void test_unsafe_tsc(void)
{
	static const char *const warp =
		"[    0.000000] tsc: Detected 2194.000 MHz processor\n"
		"[    0.312003] TSC synchronization [CPU#0 -> CPU#1]:\n"
		"[    0.312003] Measured 3986188462 cycles TSC warp between CPUs, turning off TSC clock.\n"
		"[    0.312003] tsc: Marking TSC unstable due to check_tsc_sync_source failed\n";
	struct cd_report r;
	/* Bare metal, 1.82 s apart: no tsc=reliable, the firmware, the numbers. */
	struct cd_facts *f = facts("hpet", "hpet acpi_pm", "4.15.0-20-generic");
	cpu(f, "GenuineIntel", 2, CD_CPU_TSC | CD_CPU_CONSTANT_TSC);
	f->hv.kind = CD_HV_NONE;
	log_text(f, warp);
	cd_diagnose(f, NULL, &r);
	for (int i = 0; i < r.n; i++)
		CHECK(!strstr(r.f[i].act_add, "tsc"));
	const struct cd_finding *x = find(&r, "tsc-unstable-sync");
	CHECK(x && has(x->fix_lasting, "Do not add tsc=reliable") && has(x->fix_lasting, "firmware"));
	CHECK(x && has(x->risk, "up to 3986188462 cycles: 1.82 s at 2194.000 MHz"));
	free(f);

	/* The same warp in a VM without the frequency: at least 399 ms at 10 GHz. */
	f = facts("acpi_pm", "acpi_pm", "4.19.0-20-amd64");
	f->hv.kind = CD_HV_VIRTUALBOX;
	log_text(f, warp + strlen("[    0.000000] tsc: Detected 2194.000 MHz processor\n"));
	cd_diagnose(f, NULL, &r);
	x = find(&r, "slow-clocksource");
	CHECK(x && !x->act_add[0] && has(x->risk, "at least 398.6 ms"));
	CHECK(x && has(x->fix_lasting, "hypervisor"));
	free(f);

	/* A small warp in a VM (about 26 us): a measured warp all the same,
	 * whose cure is the hypervisor's (tscgate.c). */
	f = facts("acpi_pm", "acpi_pm", "4.19.0-20-amd64");
	f->hv.kind = CD_HV_VIRTUALBOX;
	log_text(f, "[    0.0] tsc: Detected 2593.992 MHz processor\n"
	            "[    0.1] Measured 66930 cycles TSC warp between CPUs, turning off TSC clock.\n");
	cd_diagnose(f, NULL, &r);
	x = find(&r, "slow-clocksource");
	CHECK(x && !x->act_add[0] && has(x->fix_lasting, "Do not add tsc=reliable"));
	CHECK(x && has(x->fix_lasting, "set apart by the hypervisor") && has(x->risk, "25.8 us"));
	/* ... but not on bare metal, where nothing preempts the kernel's test. */
	f->hv.kind = CD_HV_NONE;
	cd_diagnose(f, NULL, &r);
	x = find(&r, "slow-clocksource");
	CHECK(x && !x->act_add[0] && has(x->risk, "25.8 us"));
	free(f);

	/* A 2.6.24 kernel's cpuinfo has no "hypervisor" flag even in a VM: no
	 * bare-metal conclusion from it. */
	f = facts("acpi_pm", "acpi_pm", "2.6.24-19-generic");
	cpu(f, "GenuineIntel", 2, CD_CPU_TSC | CD_CPU_CONSTANT_TSC);
	f->hv.kind = CD_HV_NONE;
	snprintf(f->hv.from, sizeof f->hv.from, "cpuinfo flag");
	log_text(f, "[    0.0] tsc: Detected 2593.992 MHz processor\n"
	            "[    0.1] Measured 66930 cycles TSC warp between CPUs, turning off TSC clock.\n");
	cd_diagnose(f, NULL, &r);
	x = find(&r, "tsc-unstable-sync");
	CHECK(x && has(x->fix_lasting, "Do not add") && has(x->fix_lasting, "On bare metal") &&
	      has(x->fix_lasting, "In a VM"));
	free(f);

	/* A CPU without constant_tsc on bare metal, and a TSC that halts in idle. */
	f = facts("hpet", "hpet", "5.10.0-20-amd64");
	cpu(f, "AuthenticAMD", 2, CD_CPU_TSC);
	f->hv.kind = CD_HV_NONE;
	log_text(f, "[    0.3] tsc: Marking TSC unstable due to TSCs unsynchronized\n");
	cd_diagnose(f, NULL, &r);
	x = find(&r, "slow-clocksource");
	CHECK(x && !x->act_add[0] && has(x->fix_lasting, "no constant_tsc"));
	free(f);
}

/* A fix of the distribution in front of us, of its era. */
static void test_newer_kernel_advice(void)
{
	char buf[CD_FIX_MAX];
	struct cd_facts *f = facts("tsc", NULL, "3.2.0-4-amd64");
	cd_parse_os_release("ID=debian\nVERSION_ID=\"7\"\n", &f->os);
	buf[0] = 0;
	cd_fix_newer_kernel(buf, sizeof buf, f, 3, 3, 0, false);
	CHECK(has(buf, "apt-get -t wheezy-backports install linux-image-amd64"));
	CHECK(has(buf, "deb http://archive.debian.org/debian wheezy-backports main"));
	memset(&f->os, 0, sizeof f->os);
	cd_parse_os_release("ID=debian\nVERSION_ID=\"11\"\n", &f->os);
	buf[0] = 0;
	cd_fix_newer_kernel(buf, sizeof buf, f, 6, 0, 0, false);
	CHECK(has(buf, "deb http://deb.debian.org/debian bullseye-backports main"));
	/* Ubuntu 12.04: its enablement kernel */
	memset(&f->os, 0, sizeof f->os);
	cd_parse_os_release("ID=ubuntu\nVERSION_ID=\"12.04\"\n", &f->os);
	buf[0] = 0;
	cd_fix_newer_kernel(buf, sizeof buf, f, 3, 3, 0, false);
	CHECK(has(buf, "apt-get install linux-generic-lts-trusty") && !strstr(buf, "backports"));
	/* Ubuntu 8.04 (from lsb-release): no Debian, the Ubuntu release to go to */
	memset(&f->os, 0, sizeof f->os);
	cd_parse_os_legacy("/etc/lsb-release", "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=8.04\n", &f->os);
	buf[0] = 0;
	cd_fix_newer_kernel(buf, sizeof buf, f, 3, 3, 0, true);
	CHECK(has(buf, "Ubuntu 8.04 LTS has kernel 2.6.24") && has(buf, "Ubuntu 14.04 LTS is the first release"));
	CHECK(!strstr(buf, "Debian") && !strstr(buf, "linux-image"));
	/* RHEL 6, from the kernel's name */
	free(f);
	f = facts("tsc", NULL, "2.6.32-358.el6.x86_64");
	cd_os_guess_from_release(f->kernel.release, &f->os);
	buf[0] = 0;
	cd_fix_newer_kernel(buf, sizeof buf, f, 3, 3, 0, false);
	CHECK(has(buf, "Red Hat Enterprise Linux 6 has kernel 2.6.32") &&
	      has(buf, "Red Hat Enterprise Linux 7 is the first release"));
	/* A release the table does not hold is named, not called unknown */
	memset(&f->os, 0, sizeof f->os);
	cd_parse_os_release("ID=ubuntu\nVERSION_ID=\"23.10\"\n", &f->os);
	buf[0] = 0;
	cd_fix_newer_kernel(buf, sizeof buf, f, 3, 15, 0, false);
	CHECK(has(buf, "This is Ubuntu 23.10, a release whose kernel this tool does not know"));
	/* SLES 11: GRUB legacy, and SLES 12 for a newer kernel */
	free(f);
	f = facts("tsc", NULL, "3.0.101-63-default");
	cd_parse_os_legacy("/etc/SuSE-release", "SUSE Linux Enterprise Server 11 (x86_64)\nVERSION = 11\n", &f->os);
	buf[0] = 0;
	cd_fix_newer_kernel(buf, sizeof buf, f, 3, 3, 0, false);
	CHECK(has(buf, "SUSE Linux Enterprise Server 12 is the first release"));
	buf[0] = 0;
	cd_fix_add_kernel_params(buf, sizeof buf, f, "tsc=reliable");
	CHECK(has(buf, "/boot/grub/menu.lst") && !strstr(buf, "grub2-mkconfig"));
	memset(&f->os, 0, sizeof f->os);
	cd_parse_os_release("ID=\"sles\"\nVERSION_ID=\"15.5\"\n", &f->os);
	buf[0] = 0;
	cd_fix_add_kernel_params(buf, sizeof buf, f, "tsc=reliable");
	CHECK(has(buf, "grub2-mkconfig"));
	/* Unknown: what to look for */
	free(f);
	f = facts("tsc", NULL, "3.4.113-custom");
	buf[0] = 0;
	cd_fix_newer_kernel(buf, sizeof buf, f, 3, 15, 0, true);
	CHECK(has(buf, "Install a kernel of at least 3.15 (or a 64-bit kernel)"));
	CHECK(!strstr(buf, "apt-get") && !strstr(buf, "yum"));
	/* The release inferred from a Debian kernel, and from a backports one */
	free(f);
	f = facts("tsc", NULL, "3.11-0.bpo.2-686-pae");
	cd_os_guess_from_release(f->kernel.release, &f->os);
	bool inferred = false;
	const char *name = cd_os_release_name(f, &inferred);
	CHECK(name && strcmp(name, "Debian 7 (wheezy)") == 0 && inferred);
	free(f);
	f = facts("tsc", NULL, "4.19.0-20-amd64");
	cd_os_guess_from_release(f->kernel.release, &f->os);
	name = cd_os_release_name(f, &inferred);
	CHECK(name && strcmp(name, "Debian 10 (buster)") == 0);
	free(f);
}

static void test_verdict_rule(void)
{
	CHECK(!cd_verdict_syscall(0.1, -1));
	CHECK(!cd_verdict_syscall(0.1, 0.9));   /* cheap calls are never system calls */
	CHECK(!cd_verdict_syscall(0.5, 0.2));
	CHECK(cd_verdict_syscall(0.5, 0.8));
	CHECK(cd_verdict_syscall(0.6, -1));
	CHECK(cd_verdict_syscall(1.05, 0.0));
}

/* The title of tsc-unstable-sync for this log on this kernel ("" when
 * it does not fire), and the status in *status. */
static const char *sync_title(const char *release, const char *log, enum cd_status *status)
{
	static char title[sizeof ((struct cd_finding *)0)->title];
	struct cd_facts *f = facts(NULL, NULL, release);
	struct cd_report *r = calloc(1, sizeof *r);
	log_text(f, log);
	cd_diagnose(f, NULL, r);
	const struct cd_finding *x = find(r, "tsc-unstable-sync");
	snprintf(title, sizeof title, "%s", x ? x->title : "");
	*status = r->status;
	free(r);
	free(f);
	return title;
}

/* The boot-time sync test's evidence as the kernel printed it: its header
 * alone is the failure (printed only when a warp was measured); a warp
 * whose header was lost names no CPUs; a pass is nothing. */
static void test_sync_evidence(void)
{
	enum cd_status st;
	const char *t = sync_title("5.15.0-1-amd64", "[    0.182097] TSC synchronization [CPU#0 -> CPU#1]:\n", &st);
	CHECK(strstr(t, "between CPU#0 and CPU#1") && strstr(t, "not in this log"));
	CHECK_INT(st, CD_STATUS_WARNING);
	t = sync_title("5.15.0-1-amd64",
	               "[    0.923620] Measured 2 cycles TSC warp between CPUs, turning off TSC clock.\n"
	               "[    0.923620] tsc: Marking TSC unstable due to check_tsc_sync_source failed\n", &st);
	CHECK(strstr(t, "2 cycles between CPUs") && !strstr(t, "CPU#"));
	t = sync_title("5.15.0-1-amd64",
	               "[    0.182097] TSC synchronization [CPU#0 -> CPU#1]:\n"
	               "[    0.182097] Measured 140 cycles TSC warp between CPUs, turning off TSC clock.\n", &st);
	CHECK(strstr(t, "140 cycles between CPU#0 and CPU#1") != NULL);
	/* 2.6.x prints the pass on the header's own line; a later kernel only
	 * with pr_debug: neither is a rejection. */
	t = sync_title("2.6.32-5-amd64", "[    0.100000] checking TSC synchronization [CPU#0 -> CPU#1]: passed.\n", &st);
	CHECK_STR(t, "");
}

/* RHEL 6 without clocksource_failover only reports the watchdog's
 * disagreement and keeps its clocksource: no "the kernel removed it", and
 * the size quoted as printed, not as "seconds". */
static void test_rhel6_no_failover(void)
{
	const char *line = "Clocksource tsc unstable (delta = -102057770 ns).  Enable clocksource failover "
	                   "by adding clocksource_failover kernel parameter.\n";
	struct cd_facts *f = facts(NULL, NULL, "2.6.32-358.el6.x86_64");
	log_text(f, line);
	struct cd_report r;
	cd_diagnose(f, NULL, &r);
	const struct cd_finding *x = find(&r, "tsc-unstable-watchdog");
	CHECK(x && strstr(x->fix_now, "keeps the clocksource it had") && strstr(x->fix_now, "-102057770 ns (-0.10 s)"));
	CHECK(x && !strstr(x->fix_now, "without a reboot") && !strstr(x->fix_now, "by seconds"));
	CHECK(x && !x->act_add[0]);
	CHECK(x && strstr(x->title, "only reports it") && !strstr(x->title, "rejected"));
	CHECK(find(&r, "slow-clocksource") == NULL);
	/* With clocksource_failover the kernel does fail over: the usual advice. */
	cd_parse_cmdline("ro clocksource_failover=acpi_pm", &f->kernel);
	cd_diagnose(f, NULL, &r);
	x = find(&r, "tsc-unstable-watchdog");
	CHECK(x && !strstr(x->fix_now, "keeps the clocksource it had") && strstr(x->title, "rejected"));
	free(f);
}

/* No current_clocksource, only the list: when every listed clocksource is
 * a system call, whichever is current is one. */
static void test_only_slow_listed(void)
{
	static const struct { const char *available, *log; bool fires; } cases[] = {
		{ "hpet acpi_pm", NULL, true },
		{ "acpi_pm", NULL, true },
		{ "hpet acpi_pm", NULL, true },
		/* a TSC the kernel rejected cannot come back */
		{ "tsc hpet acpi_pm", "[    0.144008] Marking TSC unstable due to check_tsc_sync_source failed\n", true },
		{ "tsc hpet acpi_pm", NULL, false },
		{ "kvm-clock hpet acpi_pm", NULL, false },
		{ "hpet some_new_clock", NULL, false },
		{ "arch_sys_counter", NULL, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_facts *f = facts(NULL, cases[i].available, i == 2 ? NULL : "6.1.0-1-amd64");
		if (cases[i].log)
			log_text(f, cases[i].log);
		struct cd_report r;
		cd_diagnose(f, NULL, &r);
		const struct cd_finding *x = find(&r, "slow-clocksource");
		if (!x != !cases[i].fires)
			fprintf(stderr, "  available: %s\n", cases[i].available);
		CHECK_INT(x != NULL, cases[i].fires);
		if (cases[i].fires) {
			CHECK_INT(r.status, CD_STATUS_CRITICAL);
			CHECK(x && strstr(x->title, "every clocksource this kernel lists"));
			CHECK(strstr(r.summary, "a system call each") != NULL);
		} else {
			CHECK(strstr(r.summary, " or ") == NULL);
		}
		free(f);
	}
	/* A current clocksource known is the rule's own business. */
	struct cd_facts *f = facts("hpet", "hpet acpi_pm", "6.1.0-1-amd64");
	struct cd_report r;
	cd_diagnose(f, NULL, &r);
	const struct cd_finding *x = find(&r, "slow-clocksource");
	CHECK(x && !strstr(x->title, "every clocksource this kernel lists"));
	free(f);
}

/* The one gate for advice that trusts the TSC (tscgate.c): outright only on
 * a sound verdict or a platform's guarantee; the measurement first without
 * evidence; never on evidence that the TSC is bad. */
static const struct cd_finding *gated(struct cd_facts *f, struct cd_report *r)
{
	cd_diagnose(f, NULL, r);
	return found(r, "tsc-unstable-watchdog");
}

static void test_tsc_gate(void)
{
	static const char *const wd =
		"[ 3007.005852] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
		"[ 3007.005852] tsc: Marking TSC unstable due to clocksource watchdog\n";
	struct cd_report r;
	struct cd_facts *f = facts("hpet", "hpet acpi_pm", NULL);
	f->hv.kind = CD_HV_KVM;
	f->saved_verdict = CD_SAVED_NONE;
	log_text(f, wd);
	/* No evidence: the measurement first, then the conditional step; no
	 * action for fix, only the parameter it waits to write. */
	const struct cd_finding *x = gated(f, &r);
	CHECK(has(x->fix_lasting, "First measure it on the machine itself"));
	CHECK(has(x->fix_lasting, "$ clockdoctor tsc\n"));
	CHECK(strstr(x->fix_lasting, "$ clockdoctor tsc") < strstr(x->fix_lasting, "Add tsc=reliable"));
	CHECK(has(x->fix_lasting, "Only if it says sound"));
	CHECK(!x->act_add[0]);
	CHECK_STR(x->act_after_tsc, "tsc=reliable");
	/* Live, the same in the words of the machine in front of us. */
	f->live = true;
	x = gated(f, &r);
	CHECK(has(x->fix_lasting, "First measure whether the TSC can be trusted"));
	f->live = false;
	/* Measured sound on this boot: the parameter, its basis and its risk. */
	f->saved_verdict = CD_SAVED_SOUND;
	snprintf(f->saved_verdict_from, sizeof f->saved_verdict_from, "/run/clockdoctor/tsc-verdict says sound");
	x = gated(f, &r);
	CHECK_STR(x->act_add, "tsc=reliable");
	CHECK(has(x->fix_lasting, "`clockdoctor tsc` measured the TSC sound on this boot"));
	CHECK(!has(x->fix_lasting, "Only if it says sound") && x->risk[0]);
	/* Unknown: still the measurement first, saying what it said. */
	f->saved_verdict = CD_SAVED_UNKNOWN;
	x = gated(f, &r);
	CHECK(!x->act_add[0] && has(x->fix_lasting, "was unknown"));
	/* Unsound: never, with the measurement as the reason. */
	f->saved_verdict = CD_SAVED_UNSOUND;
	x = gated(f, &r);
	CHECK(!x->act_add[0] && !x->act_after_tsc[0]);
	CHECK(has(x->fix_lasting, "Do not add tsc=reliable") && has(x->fix_lasting, "measured the TSC unsound"));
	/* The platform's guarantee: VMware documents its TSC. */
	f->saved_verdict = CD_SAVED_NONE;
	f->hv.kind = CD_HV_VMWARE;
	x = gated(f, &r);
	CHECK_STR(x->act_add, "tsc=reliable");
	CHECK(has(x->fix_lasting, "Timekeeping in VMware Virtual Machines"));
	/* ... but not against a sound verdict's opposite in the log: a warp. */
	free(f);

	/* Bad evidence beats a sound verdict: a warp the kernel measured. */
	f = facts("hpet", "hpet", "6.1.0-20-amd64");
	f->hv.kind = CD_HV_KVM;
	f->saved_verdict = CD_SAVED_SOUND;
	log_text(f, "[    0.1] Measured 2597 cycles TSC warp between CPUs, turning off TSC clock.\n"
	            "[    0.1] tsc: Marking TSC unstable due to check_tsc_sync_source failed\n");
	cd_diagnose(f, NULL, &r);
	x = found(&r, "tsc-unstable-sync");
	CHECK(!x->act_add[0] && has(x->fix_lasting, "Do not add tsc=reliable") && has(x->risk, "2597 cycles"));
	free(f);

	/* The 6.x watchdog's skew, no read-back delay blamed: never. */
	f = facts("hpet", "hpet", "6.8.0-31-generic");
	f->hv.kind = CD_HV_NONE;
	log_text(f, "[ 9.1] clocksource: timekeeping watchdog on CPU6: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
	            "[ 9.1] clocksource:                       'hpet' wd_nsec: 503484590 wd_now: 26d0ef4a wd_last: 2662ef33 mask: ffffffff\n"
	            "[ 9.1] clocksource:                       'tsc' cs_nsec: 503993664 cs_now: 9b86fc99fb0 cs_last: 9b806d8306b mask: ffffffffffffffff\n"
	            "[ 9.1] tsc: Marking TSC unstable due to clocksource watchdog\n");
	x = gated(f, &r);
	CHECK(!x->act_add[0] && !x->act_after_tsc[0] && has(x->fix_lasting, "Do not add tsc=reliable"));
	CHECK(has(x->fix_lasting, "509.1 us ahead of hpet") && has(x->risk, "1011 ppm"));
	free(f);

	/* The parameters the gate owns, and the one path for them. */
	CHECK(cd_param_trusts_tsc("tsc=reliable") && cd_param_trusts_tsc("quiet nowatchdog"));
	CHECK(cd_param_trusts_tsc("clocksource=tsc") && cd_param_trusts_tsc("tsc=nowatchdog"));
	CHECK(!cd_param_trusts_tsc("clocksource=tsc-early") && !cd_param_trusts_tsc("clocksource=hpet"));
	CHECK(!cd_param_trusts_tsc("tsc=noirqtime") && !cd_param_trusts_tsc("nowatchdogs"));
	struct cd_finding y = { 0 };
	f = facts("hpet", "hpet", NULL);
	cd_act_add_params(&y, f, "tsc=reliable");
	cd_act_add_clocksource_param(&y, f, "tsc");
	CHECK(!y.act_add[0] && !y.fix_lasting[0]);
	cd_act_add_clocksource_param(&y, f, "hpet");
	CHECK_STR(y.act_add, "clocksource=hpet");
	free(f);
}

int main(void)
{
	test_tsc_gate();
	test_acpi_pm_after_warp();
	test_measured();
	test_kvm_clock();
	test_ntp_severity();
	test_not_invariant_severity();
	test_watchdog();
	test_unknown();
	test_clocksource_states();
	test_verdict_rule();
	test_32bit_from_log();
	test_tick_based_left();
	test_unsafe_tsc();
	test_newer_kernel_advice();
	test_sync_evidence();
	test_rhel6_no_failover();
	test_only_slow_listed();
	return unit_done("rules");
}
