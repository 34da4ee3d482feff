/* SPDX-License-Identifier: MIT */
/* Unit tests of fix --apply's switch: every outcome against a fake sysfs
 * tree in /tmp (this machine's clocksource is never touched), with
 * made-up costs; and the kernel leaving the new clocksource while it is
 * measured, played by the measurement itself. */
#include "measure/csapply.h"
#include "unit.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static struct unit_cs_tree tree;
static const char *const sysfs = tree.sysfs, *const state = tree.state, *const cur = tree.cur,
                  *const record = tree.record;

static void fresh(const char *current)
{
	unit_cs_fresh(&tree, current, "hpet acpi_pm \n");
}

/* A script of costs: the first call returns costs[0], the second costs[1].
 * When go_back is set, the second call also plays the kernel switching
 * back to acpi_pm. */
struct script {
	double costs[2];
	int calls;
	bool go_back;
	bool unmeasured;
};

static void scripted(struct cd_apply_cost *out, void *arg)
{
	struct script *s = arg;
	memset(out, 0, sizeof *out);
	out->measured = !s->unmeasured;
	out->ns = s->costs[s->calls < 2 ? s->calls : 1];
	out->syscall = out->ns > 200;
	if (s->calls == 1 && s->go_back)
		unit_put(cur, "acpi_pm\n");
	s->calls++;
}

static void run(const char *target, double min_gain, struct script *s, struct cd_apply_result *res)
{
	struct cd_cs cs;
	CHECK_INT(cd_cs_init(&cs, sysfs, state), 0);
	cd_apply_switch(&cs, target, min_gain, scripted, s, res);
	CHECK(!cs.begun);
}

/* What is left besides the outcome: after a kept switch, */
static void kept(const struct cd_apply_result *res)
{
	CHECK_STR(res->from, "acpi_pm");
	CHECK_STR(res->now, "hpet");
	CHECK_STR(res->seen, "hpet");
	CHECK(access(record, F_OK) != 0);            /* the record is gone: nothing restores */
	CHECK(res->gain > 0.54 && res->gain < 0.56);
	CHECK_STR(cd_apply_outcome_name(res->outcome), "kept");
	struct sigaction sa;
	sigaction(SIGTERM, NULL, &sa);
	CHECK(sa.sa_handler == SIG_DFL);             /* handlers put back */
}

/* after one not cheaper enough, */
static void not_cheaper(const struct cd_apply_result *res)
{
	CHECK_STR(res->now, "acpi_pm");
	CHECK(access(record, F_OK) != 0);
	CHECK(strstr(res->msg, "did not get cheaper enough") != NULL);
}

/* after the kernel went back while it was measured. */
static void went_back(const struct cd_apply_result *res)
{
	CHECK_STR(res->seen, "acpi_pm");
	CHECK_STR(res->now, "acpi_pm");
	CHECK(access(record, F_OK) != 0);
}

/* A switch from one clocksource to another with made-up costs: its outcome,
 * a part of what it says, the clocksource the fake sysfs is left on, and
 * more checks of the result where there are more. */
static void test_outcomes(void)
{
	static const struct {
		const char *from, *to;
		struct script s;
		enum cd_apply_outcome outcome;
		const char *says, *left;
		void (*more)(const struct cd_apply_result *);
	} cases[] = {
		{ "acpi_pm\n", "hpet", { .costs = { 2000, 900 } }, CD_APPLY_KEPT, "55% cheaper", "hpet\n", kept },
		{ "acpi_pm\n", "hpet", { .costs = { 1000, 900 } }, CD_APPLY_NOT_CHEAPER,
		  "(10% cheaper; at least 20% cheaper needed)", "acpi_pm\n", not_cheaper },
		/* Dearer: the same. */
		{ "hpet\n", "acpi_pm", { .costs = { 900, 2000 } }, CD_APPLY_NOT_CHEAPER, "(122% dearer;", "hpet\n", NULL },
		/* Unmeasurable is never kept. */
		{ "acpi_pm\n", "hpet", { .costs = { 1000, 10 }, .unmeasured = true }, CD_APPLY_NOT_CHEAPER,
		  "could not be measured", "acpi_pm\n", NULL },
		/* The kernel took hpet, then went back to acpi_pm while it was
		 * measured: refused, and switched back explicitly (the kernel's
		 * override named hpet). */
		{ "acpi_pm\n", "hpet", { .costs = { 2000, 900 }, .go_back = true }, CD_APPLY_REFUSED,
		  "did not stay on hpet", "acpi_pm\n", went_back },
	};
	for (size_t i = 0; i < UNIT_COUNT(cases); i++) {
		unit_case("%zu: to %s", i, cases[i].to);
		struct cd_apply_result res;
		struct script s = cases[i].s;
		fresh(cases[i].from);
		run(cases[i].to, 0.2, &s, &res);
		CHECK_INT(res.outcome, cases[i].outcome);
		CHECK(strstr(res.msg, cases[i].says) != NULL);
		CHECK_STR(unit_get(cur), cases[i].left);
		if (cases[i].more)
			cases[i].more(&res);
	}
	unit_case(NULL);
}

static void test_errors(void)
{
	struct cd_apply_result res;
	struct script s = { .costs = { 2000, 900 } };
	fresh("acpi_pm\n");
	run("tsc", 0.2, &s, &res);                  /* not listed */
	CHECK_INT(res.outcome, CD_APPLY_ERROR);
	CHECK(strstr(res.msg, "not available") != NULL);
	CHECK_STR(unit_get(cur), "acpi_pm\n");
	CHECK(access(record, F_OK) != 0);
	run("acpi_pm", 0.2, &s, &res);              /* already */
	CHECK_INT(res.outcome, CD_APPLY_ERROR);
	CHECK(strstr(res.msg, "already") != NULL);
	/* An earlier run's record: nothing is switched over it. */
	mkdir(state, 0700);
	unit_put(record, "clockdoctor clocksource record 1\noriginal hpet\npid 1\n");
	s.calls = 0;
	run("hpet", 0.2, &s, &res);
	CHECK_INT(res.outcome, CD_APPLY_ERROR);
	CHECK(strstr(res.msg, "bench --restore") != NULL);
	CHECK_STR(unit_get(cur), "acpi_pm\n");
	/* No sysfs at all. */
	struct cd_cs cs;
	CHECK_INT(cd_cs_init(&cs, "/nonexistent-cd", state), 0);
	cd_apply_switch(&cs, "hpet", 0.2, scripted, &s, &res);
	CHECK_INT(res.outcome, CD_APPLY_ERROR);
	CHECK(strstr(res.msg, "cannot read") != NULL);
}

static void test_real_measurement(void)
{
	/* The real measurement runs and gives a plausible cost (not a speed
	 * assertion: only that it measured). */
	struct cd_apply_cost c;
	double budget = 0.05;
	cd_apply_measure_monotonic(&c, &budget);
	CHECK(c.measured);
	CHECK(c.ns > 0 && c.ns < 1e6);
	CHECK(c.syscall_ns > 0);
}

int main(void)
{
	unit_cs_tree(&tree, "csapply", CD_CS_RECORD_NAME);
	test_outcomes();
	test_errors();
	test_real_measurement();
	return unit_done("csapply");
}
