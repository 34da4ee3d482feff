/* Unit tests of fix's report: the plan of a real snapshot as text (commands
 * whole, lines within 80 columns but for commands, file contents and long
 * paths) and as JSON, and an apply result. */
#include "output/fixreport.h"
#include "probe/probe.h"
#include "unit.h"

#include <stdlib.h>

static char *render(const struct cd_fix_outcome *o, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (json)
		cd_fix_output_json(f, o);
	else
		cd_fix_output_text(f, o);
	fclose(f);
	return buf;
}

static struct cd_facts facts;
static struct cd_report report;
static struct cd_plan plan;
static struct cd_persist_job job;
static struct cd_steps steps;

static void test_plan_hpet(void)
{
	cd_probe("tests/fixtures/qemu-tcg-smp2-hpet", false, &facts);
	cd_diagnose(&facts, NULL, &report);
	cd_plan_build(&facts, &report, &plan);
	char err[300];
	CHECK_INT(cd_persist_prepare("/", CD_OS_DEBIAN, &plan, &job, err, sizeof err), 0);
	cd_persist_describe(&job, &steps);
	struct cd_fix_outcome o = { .mode = "plan", .dry_run = true, .plan = &plan, .persist_plan = &steps };
	char *text = render(&o, false);
	CHECK(strncmp(text, "PLAN (dry run, nothing changed): check says critical:", 53) == 0);
	CHECK(strstr(text, "\nnow (fix --apply):\n  nothing to switch: no faster clocksource than hpet") != NULL);
	CHECK(strstr(text, "\n  add tsc=reliable to the kernel command line (advised by slow-clocksource,") != NULL);
	CHECK(strstr(text, "\n  $ update-grub\n") != NULL);
	CHECK(strstr(text, "\n      GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT tsc=reliable\"\n") != NULL);
	CHECK(strstr(text, "risk of tsc=reliable:") != NULL);
	CHECK(strstr(text, "\nonly the hypervisor's owner can do") != NULL);
	CHECK(strstr(text, "\nto carry it out, as root: clockdoctor fix --persist\n") != NULL);
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (strlen(l) >= 80 && !strstr(l, "$ ") && strncmp(l, "      ", 6) != 0 && !strchr(l, '/'))
			CHECK(!"a prose line of 80 columns or more");
	free(text);
	char *json = render(&o, true);
	CHECK(strstr(json, "\"mode\": \"plan\"") != NULL);
	CHECK(strstr(json, "\"dry_run\": true") != NULL);
	CHECK(strstr(json, "\"status\": \"critical\"") != NULL);
	CHECK(strstr(json, "\"switch\": null") != NULL);
	CHECK(strstr(json, "\"token\": \"tsc=reliable\"") != NULL);
	CHECK(strstr(json, "\"action\": \"add\"") != NULL);
	CHECK(strstr(json, "\"slow-clocksource\"") != NULL);
	CHECK(strstr(json, "\"$ update-grub\"") != NULL);
	CHECK(strstr(json, "\"exit_status\": 0") != NULL);
	free(json);
}

static void test_apply(void)
{
	struct cd_apply_result a = { .outcome = CD_APPLY_KEPT, .from = "acpi_pm", .to = "hpet", .now = "hpet",
	                             .seen = "hpet", .gain = 0.6,
	                             .before = { .measured = true, .ns = 2500, .syscall_ns = 2600, .syscall = true },
	                             .after = { .measured = true, .ns = 1000, .syscall_ns = 1100, .syscall = true,
	                                        .exact = true } };
	snprintf(a.msg, sizeof a.msg, "switched to hpet");
	struct cd_fix_outcome o = { .mode = "apply", .plan = &plan, .apply = &a, .exit_status = 0 };
	char *text = render(&o, false);
	CHECK(strncmp(text, "FIX: check says critical:", 25) == 0);
	CHECK(strstr(text, "\napply: kept\n  switched to hpet\n") != NULL);
	CHECK(strstr(text, "  before, on acpi_pm: CLOCK_MONOTONIC 2500.0 ns a call (a system call)\n") != NULL);
	CHECK(strstr(text, "  after, on hpet: CLOCK_MONOTONIC 1000.0 ns a call (a system call)\n") != NULL);
	CHECK(strstr(text, "  clocksource now: hpet\n") != NULL);
	CHECK(strstr(text, "now (fix --apply)") == NULL); /* the plan is not repeated */
	free(text);
	char *json = render(&o, true);
	CHECK(strstr(json, "\"outcome\": \"kept\"") != NULL);
	CHECK(strstr(json, "\"gain\": 0.6") != NULL);
	CHECK(strstr(json, "\"verdict_from\": \"seccomp\"") != NULL);
	CHECK(strstr(json, "\"ns_per_call\": 2500") != NULL);
	free(json);
	/* Not tried: the note says why. */
	struct cd_fix_outcome n = { .mode = "apply", .plan = &plan, .apply_note = "nothing switched: x",
	                            .exit_status = 1 };
	json = render(&n, true);
	CHECK(strstr(json, "\"outcome\": \"not-tried\"") != NULL);
	CHECK(strstr(json, "\"message\": \"nothing switched: x\"") != NULL);
	CHECK(strstr(json, "\"exit_status\": 1") != NULL);
	free(json);
}

static void test_undo(void)
{
	struct cd_steps s = { 0 };
	cd_step(&s, "removed /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg");
	struct cd_fix_outcome o = { .mode = "undo", .undo = &s, .undo_result = "done" };
	char *text = render(&o, false);
	CHECK_STR(text, "undo: done\n  removed /etc/default/grub.d/90-clockdoctor-tsc-reliable.cfg\n");
	free(text);
	char *json = render(&o, true);
	CHECK(strstr(json, "\"undo\": {") != NULL);
	CHECK(strstr(json, "\"plan\"") == NULL);
	free(json);
}

int main(void)
{
	test_plan_hpet();
	test_apply();
	test_undo();
	return unit_done("fixreport");
}
