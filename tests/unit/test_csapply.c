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
static const char *const sysfs = tree.sysfs, *const state = tree.state, *const cur = tree.cur;
static char record[256];

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

static void test_kept(void)
{
	struct cd_apply_result res;
	struct script s = { .costs = { 2000, 900 } };
	fresh("acpi_pm\n");
	run("hpet", 0.2, &s, &res);
	CHECK_INT(res.outcome, CD_APPLY_KEPT);
	CHECK_STR(res.from, "acpi_pm");
	CHECK_STR(res.now, "hpet");
	CHECK_STR(res.seen, "hpet");
	CHECK_STR(unit_get(cur), "hpet\n");
	CHECK(access(record, F_OK) != 0);            /* the record is gone: nothing restores */
	CHECK(res.gain > 0.54 && res.gain < 0.56);
	CHECK(strstr(res.msg, "55% cheaper") != NULL);
	CHECK_STR(cd_apply_outcome_name(res.outcome), "kept");
	struct sigaction sa;
	sigaction(SIGTERM, NULL, &sa);
	CHECK(sa.sa_handler == SIG_DFL);             /* handlers put back */
}

static void test_not_cheaper(void)
{
	struct cd_apply_result res;
	struct script s = { .costs = { 1000, 900 } };
	fresh("acpi_pm\n");
	run("hpet", 0.2, &s, &res);
	CHECK_INT(res.outcome, CD_APPLY_NOT_CHEAPER);
	CHECK_STR(res.now, "acpi_pm");
	CHECK_STR(unit_get(cur), "acpi_pm\n");
	CHECK(access(record, F_OK) != 0);
	CHECK(strstr(res.msg, "did not get cheaper enough") != NULL);
	CHECK(strstr(res.msg, "(10% cheaper; at least 20% cheaper needed)") != NULL);
	/* Dearer: the same. */
	s = (struct script){ .costs = { 900, 2000 } };
	fresh("hpet\n");
	run("acpi_pm", 0.2, &s, &res);
	CHECK_INT(res.outcome, CD_APPLY_NOT_CHEAPER);
	CHECK(strstr(res.msg, "(122% dearer;") != NULL);
	CHECK_STR(unit_get(cur), "hpet\n");
	/* Unmeasurable is never kept. */
	s = (struct script){ .costs = { 1000, 10 }, .unmeasured = true };
	fresh("acpi_pm\n");
	run("hpet", 0.2, &s, &res);
	CHECK_INT(res.outcome, CD_APPLY_NOT_CHEAPER);
	CHECK(strstr(res.msg, "could not be measured") != NULL);
	CHECK_STR(unit_get(cur), "acpi_pm\n");
}

static void test_kernel_goes_back(void)
{
	/* The kernel took hpet, then went back to acpi_pm while it was
	 * measured: refused, and switched back explicitly (the kernel's
	 * override named hpet). */
	struct cd_apply_result res;
	struct script s = { .costs = { 2000, 900 }, .go_back = true };
	fresh("acpi_pm\n");
	run("hpet", 0.2, &s, &res);
	CHECK_INT(res.outcome, CD_APPLY_REFUSED);
	CHECK_STR(res.seen, "acpi_pm");
	CHECK_STR(res.now, "acpi_pm");
	CHECK(strstr(res.msg, "did not stay on hpet") != NULL);
	CHECK_STR(unit_get(cur), "acpi_pm\n");
	CHECK(access(record, F_OK) != 0);
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
	unit_cs_tree(&tree, "csapply");
	snprintf(record, sizeof record, "%s/%s", state, CD_CS_RECORD_NAME);
	test_kept();
	test_not_cheaper();
	test_kernel_goes_back();
	test_errors();
	test_real_measurement();
	return unit_done("csapply");
}
