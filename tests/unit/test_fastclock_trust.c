/* SPDX-License-Identifier: MIT */
/*
 * test_fastclock_trust.c: libfastclock's pure parts: the trust rules, the
 * verdict file's parser, clocksource lists, and the vDSO symbol lookup.
 */
#include "counter.h"
#include "fastclock.h"
#include "fastclock_trust.h"
#include "kclock.h"
#include "unit.h"

#include <errno.h>
#include <sys/auxv.h>

static void base_facts(struct fc_trust_facts *f, const char *cs, const char *avail)
{
	memset(f, 0, sizeof *f);
	f->mode = FC_MODE_AUTO;
	f->counter_kind = FC_COUNTER_X86_TSC;
	f->counter_usable = 0;
	f->invariant = true;
	f->have_sysfs = cs != NULL;
	snprintf(f->clocksource, sizeof f->clocksource, "%s", cs ? cs : "");
	snprintf(f->available, sizeof f->available, "%s", avail ? avail : "");
	f->verdict = -1;
	snprintf(f->verdict_why, sizeof f->verdict_why, "no verdict file");
	f->kernel_major = 6;
	f->kernel_minor = 1;
}

/* f judged: whether the counter is used and why, checked as at the caller's
 * line; the judgement, for more checks. */
#define JUDGED(f, use, reason) judged((f), (use), (reason), __LINE__)
static const struct fc_trust *judged(const struct fc_trust_facts *f, bool use, enum fc_reason reason, int line)
{
	static struct fc_trust t;
	fc_trust_judge(f, &t);
	unit_check_int(t.use_counter, use, "t.use_counter", use ? "true" : "false", __FILE__, line);
	unit_check_int(t.reason, reason, "t.reason", fc_reason_name(reason), __FILE__, line);
	return &t;
}

static void test_judge(void)
{
	struct fc_trust_facts f;
	const struct fc_trust *t;

	base_facts(&f, "tsc", "tsc hpet acpi_pm");
	t = JUDGED(&f, true, FC_REASON_KERNEL_USES_COUNTER);
	CHECK(t->watch_current);
	CHECK_INT(t->vdso_fast, 1);

	/* the kernel dropped the TSC for hpet; no verdict: refuse */
	base_facts(&f, "hpet", "hpet acpi_pm");
	t = JUDGED(&f, false, FC_REASON_UNVERIFIED);
	CHECK(strstr(t->text, "hpet") != NULL);
	CHECK(strstr(t->text, "no verdict file") != NULL);
	CHECK_INT(t->vdso_fast, 0);

	f.verdict = 0;
	t = JUDGED(&f, true, FC_REASON_VERIFIED);
	CHECK(!t->watch_current);
	CHECK(!t->watch_available);  /* tsc not listed: nothing to watch */

	f.verdict = 2;
	JUDGED(&f, false, FC_REASON_VERDICT_UNSOUND);

	f.mode = FC_MODE_FORCE;
	JUDGED(&f, true, FC_REASON_FORCED);

	/* forced, but the TSC's rate follows power states: still refused */
	f.invariant = false;
	JUDGED(&f, false, FC_REASON_NOT_INVARIANT);

	base_facts(&f, "tsc", "tsc hpet");
	f.mode = FC_MODE_OFF;
	JUDGED(&f, false, FC_REASON_OFF);

	base_facts(&f, "tsc", "tsc hpet");
	f.counter_usable = -EPERM;
	t = JUDGED(&f, false, FC_REASON_NO_COUNTER);
	CHECK(strstr(t->text, "PR_SET_TSC") != NULL);

	/* a container without /sys */
	base_facts(&f, NULL, NULL);
	t = JUDGED(&f, false, FC_REASON_NO_SYSFS);
	CHECK_INT(t->vdso_fast, -1);
	f.verdict = 0;
	JUDGED(&f, true, FC_REASON_VERIFIED);

	/* the kernel on kvm-clock with the TSC still listed: verified TSC,
	 * and the library leaves if the kernel withdraws it */
	base_facts(&f, "kvm-clock", "kvm-clock tsc hpet acpi_pm");
	f.verdict = 0;
	struct fc_trust kv;
	fc_trust_judge(&f, &kv);
	CHECK(kv.use_counter);
	CHECK(kv.watch_available);
	CHECK_INT(kv.vdso_fast, 1);

	/* arm64 */
	base_facts(&f, "arch_sys_counter", "arch_sys_counter");
	f.counter_kind = FC_COUNTER_ARM64_CNTVCT;
	JUDGED(&f, true, FC_REASON_KERNEL_USES_COUNTER);

	base_facts(&f, "tsc", "tsc");
	f.counter_kind = FC_COUNTER_NONE;
	JUDGED(&f, false, FC_REASON_UNSUPPORTED);
}

/* A measured read of the counter against the kernel's clock: a counter
 * whose reads trap (an arm64 erratum's workaround: each read an exception
 * the kernel emulates, and the vDSO's clock a system call) is refused
 * whatever the clocksource; a healthy one is taken, and says what it
 * gains; FASTCLOCK=force still reads it. */
static void set_cost(struct fc_trust_facts *f, double counter, double kernel, double sys)
{
	f->cost.measured = true;
	f->cost.counter_ns = counter;
	f->cost.kernel_ns = kernel;
	f->cost.syscall_ns = sys;
}

static void test_judge_cost(void)
{
	struct fc_trust_facts f;
	const struct fc_trust *t;

	/* arm64, A-008585 or 161010101: the kernel still on arch_sys_counter */
	base_facts(&f, "arch_sys_counter", "arch_sys_counter");
	f.counter_kind = FC_COUNTER_ARM64_CNTVCT;
	set_cost(&f, 2100, 1900, 1850);
	t = JUDGED(&f, false, FC_REASON_COUNTER_SLOW);
	CHECK_HAS(t->text, "a counter read costs 2100 ns, no less than the kernel's clock (1900 ns, a system call)");
	CHECK_HAS(t->text, "user-space reads of the counter trap");
	CHECK_INT(t->vdso_fast, 0);  /* measured: the table says fast */

	/* as dear as the kernel's clock, to the ns: still not cheaper */
	set_cost(&f, 1900, 1900, 1850);
	JUDGED(&f, false, FC_REASON_COUNTER_SLOW);

	/* trapped, but cheaper than the system call the vDSO falls back to:
	 * served, and the text says what a read gains */
	set_cost(&f, 900, 1900, 1850);
	t = JUDGED(&f, true, FC_REASON_KERNEL_USES_COUNTER);
	CHECK_HAS(t->text, "a counter read costs 900 ns, the kernel's clock 1900 ns (a system call)");
	CHECK_INT(t->vdso_fast, 0);

	/* healthy: the vDSO reads the same counter, plus its own work */
	set_cost(&f, 19.6, 24.6, 307);
	t = JUDGED(&f, true, FC_REASON_KERNEL_USES_COUNTER);
	CHECK_HAS(t->text, "a counter read costs 20 ns, the kernel's clock 25 ns");
	CHECK_LACKS(t->text, "system call");
	CHECK_INT(t->vdso_fast, 1);

	/* below the kernel's clock's resolution: cheap */
	set_cost(&f, 0, 0, 0);
	JUDGED(&f, true, FC_REASON_KERNEL_USES_COUNTER);

	/* not measured (the kernel's clock unreadable): decides nothing */
	base_facts(&f, "arch_sys_counter", "arch_sys_counter");
	f.counter_kind = FC_COUNTER_ARM64_CNTVCT;
	t = JUDGED(&f, true, FC_REASON_KERNEL_USES_COUNTER);
	CHECK_LACKS(t->text, "costs");

	/* x86 under a hypervisor that traps rdtsc, a sound verdict: refused */
	base_facts(&f, "kvm-clock", "kvm-clock tsc");
	f.verdict = 0;
	set_cost(&f, 1500, 40, 300);
	t = JUDGED(&f, false, FC_REASON_COUNTER_SLOW);
	CHECK_HAS(t->text, "(40 ns)");
	CHECK_INT(t->vdso_fast, 1);
	f.mode = FC_MODE_FORCE;  /* the operator's word: the verdict's reason */
	JUDGED(&f, true, FC_REASON_VERIFIED);
	f.verdict = -1;
	JUDGED(&f, true, FC_REASON_FORCED);
	f.mode = FC_MODE_OFF;
	JUDGED(&f, false, FC_REASON_OFF);
}

static void test_lists(void)
{
	CHECK(fc_trust_listed("tsc hpet acpi_pm", "tsc"));
	CHECK(fc_trust_listed("tsc hpet acpi_pm", "acpi_pm"));
	CHECK(fc_trust_listed("hpet tsc", "tsc"));
	CHECK(!fc_trust_listed("tsc-early hpet", "tsc"));
	CHECK(!fc_trust_listed("hpet xtsc", "tsc"));
	CHECK(!fc_trust_listed("", "tsc"));
	CHECK(!fc_trust_listed("tsc", ""));
	CHECK_INT(fc_trust_vdso_fast("hpet", 6, 1, 0), 0);
	CHECK_INT(fc_trust_vdso_fast("acpi_pm", 6, 1, 0), 0);
	CHECK_INT(fc_trust_vdso_fast("xen", 4, 14, 0), 0);
	CHECK_INT(fc_trust_vdso_fast("xen", 5, 10, 0), 1);
	CHECK_INT(fc_trust_vdso_fast("kvm-clock", 3, 2, 0), 0);
	CHECK_INT(fc_trust_vdso_fast("riscv_clocksource", 6, 1, 0), 1);
	CHECK_INT(fc_trust_vdso_fast("riscv_clocksource", 5, 7, 0), 0);
	CHECK_INT(fc_trust_vdso_fast("corefreq", 6, 1, 0), -1);
	CHECK_INT(fc_trust_vdso_fast("", 6, 1, 0), -1);
	CHECK_STR(fc_trust_counter_clocksource(FC_COUNTER_X86_TSC), "tsc");
	CHECK(fc_trust_counter_clocksource(FC_COUNTER_NONE) == NULL);
}

static void test_verdict(void)
{
	struct fc_verdict v;
	const char *ok = "# clockdoctor tsc\nboot_id=0f1e2d3c-aaaa-bbbb-cccc-0123456789ab\nverdict=sound\n"
	                 "counter_hz=2596130164.5\nclocksource=hpet\ntime=1795000000\nnew_key=whatever\n";
	CHECK_INT(fc_verdict_parse(ok, strlen(ok), &v), 0);
	CHECK_STR(v.boot_id, "0f1e2d3c-aaaa-bbbb-cccc-0123456789ab");
	CHECK_INT(v.verdict, 0);
	CHECK(v.counter_hz > 2596130164.4 && v.counter_hz < 2596130164.6);
	CHECK_STR(v.clocksource, "hpet");
	CHECK_INT(v.time, 1795000000);

	const char *crlf = "boot_id=abc\r\nverdict=unsound\r\n";
	CHECK_INT(fc_verdict_parse(crlf, strlen(crlf), &v), 0);
	CHECK_INT(v.verdict, 2);

	/* not NUL-terminated: only len bytes are read */
	char buf[] = { 'b', 'o', 'o', 't', '_', 'i', 'd', '=', 'a', '\n', 'v', 'e', 'r', 'd', 'i', 'c', 't', '=',
		       'u', 'n', 'k', 'n', 'o', 'w', 'n', 'X', 'X' };
	CHECK_INT(fc_verdict_parse(buf, 25, &v), 0);
	CHECK_INT(v.verdict, 1);
	CHECK_INT(fc_verdict_parse(buf, 27, &v), -EINVAL);

	const char *bad[] = {
		"verdict=sound\n",                             /* no boot_id */
		"boot_id=abc\n",                               /* no verdict */
		"boot_id=abc\nverdict=great\n",                /* unknown verdict */
		"boot_id=ABC;rm -rf\nverdict=sound\n",         /* not a boot id */
		"boot_id=abc\nverdict=sound\ncounter_hz=2e9\n", /* not a plain number */
		"boot_id=abc\nverdict=sound\ngarbage\n",       /* no '=' */
		"boot_id=\nverdict=sound\n",                   /* empty */
		"boot_id=0123456789abcdef0123456789abcdef0123456789\nverdict=sound\n", /* too long */
		"",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK_INT(fc_verdict_parse(bad[i], strlen(bad[i]), &v), -EINVAL);
	CHECK_INT(fc_verdict_parse(NULL, 0, &v), -EINVAL);
}

static void test_names(void)
{
	static const char *const sources[] = { "kernel", "counter" };   /* in enum order */
	for (int k = FC_SOURCE_KERNEL; k <= FC_SOURCE_COUNTER; k++)
		CHECK_STR(fc_source_name((enum fc_source)k), sources[k]);
	static const struct {
		enum fc_reason reason;
		const char *name;
	} reasons[] = {
		{ FC_REASON_UNVERIFIED, "unverified" },
		{ FC_REASON_KERNEL_LEFT, "kernel-left" },
		{ FC_REASON_COUNTER_SLOW, "counter-slow" },
		{ (enum fc_reason)999, "unknown" },
	};
	for (size_t i = 0; i < UNIT_COUNT(reasons); i++)
		CHECK_STR(fc_reason_name(reasons[i].reason), reasons[i].name);
}

static void test_elf(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
#if defined(__x86_64__)
	if (base) {
		CHECK(fc_elf_lookup((const void *)base, "__vdso_clock_gettime") != NULL);
		CHECK(fc_elf_lookup((const void *)base, "__vdso_no_such_thing") == NULL);
	}
	CHECK(fc_kclock_has_vdso() == (base != 0));
#elif defined(__aarch64__)
	if (base)
		CHECK(fc_elf_lookup((const void *)base, "__kernel_clock_gettime") != NULL);
#endif
	static const char junk[256] = "not an ELF image at all";
	CHECK(fc_elf_lookup(junk, "__vdso_clock_gettime") == NULL);
	CHECK(fc_elf_lookup(NULL, "x") == NULL);
	/* the kernel's clock through the entry, and its errors as -errno */
	struct timespec ts;
	CHECK_INT(fc_kclock(CLOCK_MONOTONIC, &ts), 0);
	CHECK(ts.tv_sec > 0 || ts.tv_nsec > 0);
	errno = 1234;
	CHECK_INT(fc_kclock((clockid_t)12345, &ts), -EINVAL);
	CHECK_INT(errno, 1234);
}

/* A verdict's counter_hz against the rate measured at start: the range of
 * real counters, a few ppm beyond the measurement's uncertainty, and the
 * error stated for the rate used (at least 1 ppm; 1000 unmeasured). */
static void test_verdict_hz(void)
{
	static const struct {
		double hz, ref, ref_err;
		bool ok;
		double err;       /* the stated error, when ok */
	} cases[] = {
		{ 2.6e9, 2.6e9, 0.5, true, 1 },
		{ 2.6e9 * (1 + 20e-6), 2.6e9, 23, true, 43 },      /* within the uncertainty */
		{ 2.6e9 * (1 + 27e-6), 2.6e9, 23, true, 50 },      /* ...and 5 ppm beyond */
		{ 2.6e9 * (1 + 29e-6), 2.6e9, 23, false, 0 },
		{ 2.6e9 * 1.01, 2.6e9, 23, false, 0 },
		{ 2.6e9 * 0.99, 2.6e9, 2000, false, 0 },            /* even measured through hpet */
		{ 5.2e9, 2.6e9, 23, false, 0 },
		{ 1, 2.6e9, 23, false, 0 },
		{ 1, 0, 0, false, 0 },                              /* the range, unmeasured */
		{ 9.99e5, 9.99e5, 1, false, 0 },
		{ 1.1e10, 1.1e10, 1, false, 0 },
		{ 2.6e9, 0, 0, true, 1000 },                        /* unmeasured: measure first */
		{ 19.2e6, 19.2e6, 3, true, 3 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unit_case("counter_hz %.0f against %.0f +-%g ppm", cases[i].hz, cases[i].ref, cases[i].ref_err);
		char why[160] = "";
		double err = -1;
		bool ok = fc_verdict_hz_check(cases[i].hz, cases[i].ref, cases[i].ref_err, &err, why, sizeof why);
		CHECK_INT(ok, cases[i].ok);
		if (ok) {
			CHECK(err > cases[i].err - 0.01 && err < cases[i].err + 0.01);
		} else {
			CHECK_HAS(why, "verdict ignored: its counter_hz ");
			CHECK_HAS(why, cases[i].hz < 1e6 || cases[i].hz > 1e10 ? "outside 1 MHz to 10 GHz" : "measured at start");
		}
	}
	unit_case(NULL);
}

int main(void)
{
	test_judge();
	test_judge_cost();
	test_lists();
	test_verdict();
	test_verdict_hz();
	test_names();
	test_elf();
	return unit_done("test_fastclock_trust");
}
