/* SPDX-License-Identifier: MIT */
/* Unit tests of fix's plan: real snapshots (tests/fixtures, read relative
 * to the top of the repository) diagnosed, then planned; and reports built
 * by hand for the choices between actions. */
#include "diagnose/plan.h"
#include "probe/probe.h"
#include "unit.h"

#include <stdlib.h>

static struct cd_facts facts;
static struct cd_report report;
static struct cd_plan plan;

static void plan_fixture(const char *name)
{
	char root[256];
	snprintf(root, sizeof root, "tests/fixtures/%s", name);
	cd_probe(root, false, &facts);
	cd_diagnose(&facts, NULL, &report);
	cd_plan_build(&facts, &report, &plan);
}

/* As if `clockdoctor tsc` had measured the TSC sound on the snapshot's boot. */
static void plan_fixture_measured_sound(const char *name)
{
	char root[256];
	snprintf(root, sizeof root, "tests/fixtures/%s", name);
	cd_probe(root, false, &facts);
	facts.saved_verdict = CD_SAVED_SOUND;
	snprintf(facts.saved_verdict_from, sizeof facts.saved_verdict_from, "the saved verdict says sound");
	cd_diagnose(&facts, NULL, &report);
	cd_plan_build(&facts, &report, &plan);
}

static void test_hpet_guest(void)
{
	/* Without a measured verdict, nothing that trusts the TSC is planned:
	 * a note says it waits for `clockdoctor tsc`. */
	plan_fixture("qemu-tcg-smp2-hpet");
	CHECK_INT(plan.n_params, 0);
	CHECK(plan.n_notes >= 1 && strncmp(plan.notes[0], "tsc=reliable (from slow-clocksource): not until", 47) == 0);
	/* Two TCG vCPUs: TSC refused, hpet current, nothing faster listed. */
	plan_fixture_measured_sound("qemu-tcg-smp2-hpet");
	CHECK(!plan.have_switch);
	CHECK(strstr(plan.no_switch_why, "no faster clocksource than hpet is listed") != NULL);
	CHECK(strstr(plan.no_switch_why, "hpet acpi_pm") != NULL);
	CHECK_INT(plan.n_params, 1);
	CHECK_STR(plan.params[0].token, "tsc=reliable");
	CHECK(plan.params[0].add);
	CHECK(strstr(plan.params[0].from, "slow-clocksource") != NULL);
	CHECK(strstr(plan.params[0].from, "tsc-unstable-sync") != NULL);
	CHECK(strstr(plan.params[0].risk, "stops checking") != NULL);
	CHECK(plan.n_hv >= 1);
	CHECK(strstr(plan.hv[0], "TCG") != NULL);
	CHECK(!plan.nothing_to_do);
	CHECK(plan.serious);
	CHECK_INT(plan.status, CD_STATUS_CRITICAL);
}

static void test_acpi_pm_forced(void)
{
	/* clocksource=acpi_pm on the command line, hpet listed. */
	plan_fixture("qemu-tcg-smp2-acpi_pm-cmdline");
	CHECK(plan.have_switch);
	CHECK_STR(plan.switch_from, "acpi_pm");
	CHECK_STR(plan.switch_to, "hpet");
	CHECK(plan.switch_risk[0] != '\0');
	CHECK_INT(plan.n_params, 1);
	CHECK_STR(plan.params[0].token, "clocksource=acpi_pm");
	CHECK(!plan.params[0].add);
	CHECK(strstr(plan.params[0].from, "clocksource-forced") != NULL);
}

static void test_healthy(void)
{
	plan_fixture("qemu-tcg-smp2-tsc-reliable");
	CHECK(plan.nothing_to_do);
	CHECK(!plan.have_switch);
	CHECK(strstr(plan.no_switch_why, "read by the vDSO already") != NULL);
	CHECK_INT(plan.n_params, 0);
	plan_fixture("vmware-tsc-hypervisor-reliable");
	CHECK(plan.nothing_to_do);
}

static void test_virtualbox_acpi_pm(void)
{
	/* Kernel 3.2 in VirtualBox: only acpi_pm listed; no parameter helps on
	 * this kernel (fix-needs-newer-kernel), so nothing to persist, but the
	 * hypervisor's owner has things to do. */
	plan_fixture("virtualbox-debian7-smp8-acpi_pm-3.2");
	CHECK(!plan.have_switch);
	CHECK(plan.n_hv >= 1);
	CHECK(strstr(plan.hv[0], "VBoxManage") != NULL);
	for (int i = 0; i < plan.n_params; i++)
		CHECK(strcmp(plan.params[i].token, "tsc=reliable") != 0);
}

static struct cd_finding *finding(struct cd_report *r, const char *code, enum cd_severity sev)
{
	struct cd_finding *x = &r->f[r->n++];
	memset(x, 0, sizeof *x);
	x->code = code;
	x->severity = sev;
	return x;
}

static void test_choices(void)
{
	struct cd_facts *f = calloc(1, sizeof *f);
	struct cd_report *r = calloc(1, sizeof *r);
	cd_parse_clocksource_current("acpi_pm\n", &f->cs);
	cd_parse_clocksource_list("acpi_pm hpet tsc\n", &f->cs);
	r->status = CD_STATUS_CRITICAL;

	struct cd_finding *x = finding(r, "first", CD_SEV_CRITICAL);
	snprintf(x->act_add, sizeof x->act_add, "tsc=reliable");
	snprintf(x->act_switch, sizeof x->act_switch, "hpet");
	snprintf(x->risk, sizeof x->risk, "first risk");
	x = finding(r, "second", CD_SEV_WARNING);
	snprintf(x->act_add, sizeof x->act_add, "clocksource=hpet"); /* pins away from the TSC */
	snprintf(x->act_switch, sizeof x->act_switch, "tsc");       /* a second switch: left out */
	x = finding(r, "third", CD_SEV_WARNING);
	snprintf(x->act_add, sizeof x->act_add, "tsc=reliable");    /* the same: only named */
	snprintf(x->risk, sizeof x->risk, "third risk");
	x = finding(r, "fourth", CD_SEV_WARNING);
	snprintf(x->act_add, sizeof x->act_add, "tsc=nowatchdog");  /* the same name: left out */
	x = finding(r, "fifth", CD_SEV_WARNING);
	snprintf(x->act_add, sizeof x->act_add, "clocksource=../../etc"); /* never written */
	x = finding(r, "sixth", CD_SEV_WARNING);
	snprintf(x->act_remove, sizeof x->act_remove, "notsc");
	x = finding(r, "seventh", CD_SEV_INFO);
	snprintf(x->fix_now, sizeof x->fix_now, "install chrony\n");

	struct cd_plan *p = calloc(1, sizeof *p);
	cd_plan_build(f, r, p);
	CHECK(p->have_switch);
	CHECK_STR(p->switch_to, "hpet");
	CHECK_STR(p->switch_finding, "first");
	CHECK_STR(p->switch_risk, "first risk");
	CHECK_INT(p->n_params, 2);
	CHECK_STR(p->params[0].token, "tsc=reliable");
	CHECK_STR(p->params[0].from, "first, third");
	CHECK_STR(p->params[0].risk, "first risk");
	CHECK_STR(p->params[1].token, "notsc");
	CHECK(!p->params[1].add);
	CHECK_INT(p->n_notes, 4);
	CHECK(strstr(p->notes[0], "switch to tsc: left out") != NULL);
	CHECK(strstr(p->notes[1], "clocksource=hpet: left out") != NULL);
	CHECK(strstr(p->notes[2], "tsc=nowatchdog: left out") != NULL);
	CHECK(strstr(p->notes[3], "not a parameter fix will write") != NULL);
	CHECK_INT(p->n_other, 1);
	CHECK_STR(p->other[0], "seventh");

	/* A switch to something slower, or not listed, is no switch. */
	memset(r, 0, sizeof *r);
	x = finding(r, "slower", CD_SEV_WARNING);
	snprintf(x->act_switch, sizeof x->act_switch, "acpi_pm");
	cd_parse_clocksource_current("hpet\n", &f->cs);
	cd_plan_build(f, r, p);
	CHECK(!p->have_switch);
	CHECK(strstr(p->notes[0], "not faster") != NULL);
	memset(r, 0, sizeof *r);
	x = finding(r, "unlisted", CD_SEV_WARNING);
	snprintf(x->act_switch, sizeof x->act_switch, "kvm-clock");
	cd_plan_build(f, r, p);
	CHECK(!p->have_switch);
	CHECK(strstr(p->notes[0], "not listed") != NULL);
	free(p);
	free(r);
	free(f);
}

static void test_token_safe(void)
{
	CHECK(cd_plan_token_safe("tsc=reliable"));
	CHECK(cd_plan_token_safe("clocksource=acpi_pm"));
	CHECK(cd_plan_token_safe("no-kvmclock-vsyscall"));
	CHECK(!cd_plan_token_safe(""));
	CHECK(!cd_plan_token_safe("a b"));
	CHECK(!cd_plan_token_safe("x/y"));
	CHECK(!cd_plan_token_safe("..=1"));
	CHECK(!cd_plan_token_safe("a\"b"));
	CHECK(!cd_plan_token_safe("$(reboot)"));
	char longer[200];
	memset(longer, 'a', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	CHECK(!cd_plan_token_safe(longer));
}

int main(void)
{
	test_hpet_guest();
	test_acpi_pm_forced();
	test_healthy();
	test_virtualbox_acpi_pm();
	test_choices();
	test_token_safe();
	return unit_done("plan");
}
