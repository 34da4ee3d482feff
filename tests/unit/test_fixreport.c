/* SPDX-License-Identifier: MIT */
/* Unit tests of fix's report: the plan of a real snapshot as text (commands
 * whole, lines within 80 columns but for commands, file contents and long
 * paths) and as JSON, and an apply result. */
#include "output/fixreport.h"
#include "probe/probe.h"
#include "unit.h"

#include <stdlib.h>

static char *render(const struct cd_fix_outcome *o, bool json)
{
	char *buf;
	UNIT_CAPTURE(buf, (json ? cd_fix_output_json : cd_fix_output_text)(out, o));
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
	/* As if `clockdoctor tsc` had measured the TSC sound on its boot. */
	facts.saved_verdict = CD_SAVED_SOUND;
	cd_diagnose(&facts, NULL, &report);
	cd_plan_build(&facts, &report, &plan);
	char err[300];
	CHECK_INT(cd_persist_prepare("/", CD_OS_DEBIAN, &plan, &job, err, sizeof err), 0);
	cd_persist_describe(&job, &steps);
	struct cd_fix_outcome o = { .mode = "plan", .dry_run = true, .plan = &plan, .persist_plan = &steps };
	char *text = render(&o, false);
	CHECK(strncmp(text, "PLAN (dry run, nothing changed): check says critical:", 53) == 0);
	static const char *const plan_text[] = {
		"\nnow (fix --apply):\n  nothing to switch: no faster clocksource than hpet",
		"\n  add tsc=reliable to the kernel command line (advised by slow-clocksource,",
		"\n  $ update-grub\n",
		"\n      GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT tsc=reliable\"\n",
		"risk of tsc=reliable:",
		"\nonly the hypervisor's owner can do",
		"\nto carry it out, as root: clockdoctor fix --persist\n",
	};
	CHECK_HAS_ALL(text, plan_text);
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (strlen(l) >= 80 && !strstr(l, "$ ") && strncmp(l, "      ", 6) != 0 && !strchr(l, '/'))
			CHECK(!"a prose line of 80 columns or more");
	free(text);
	char *json = render(&o, true);
	static const char *const plan_json[] = {
		"\"mode\": \"plan\"",
		"\"dry_run\": true",
		"\"status\": \"critical\"",
		"\"switch\": null",
		"\"token\": \"tsc=reliable\"",
		"\"action\": \"add\"",
		"\"slow-clocksource\"",
		"\"$ update-grub\"",
		"\"exit_status\": 0",
	};
	CHECK_HAS_ALL(json, plan_json);
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
	static const char *const apply_text[] = {
		"\napply: kept\n  switched to hpet\n",
		"  before, on acpi_pm: CLOCK_MONOTONIC 2500.0 ns a call (a system call)\n",
		"  after, on hpet: CLOCK_MONOTONIC 1000.0 ns a call (a system call)\n",
		"  clocksource now: hpet\n",
	};
	CHECK_HAS_ALL(text, apply_text);
	CHECK(strstr(text, "now (fix --apply)") == NULL); /* the plan is not repeated */
	free(text);
	char *json = render(&o, true);
	static const char *const apply_json[] = {
		"\"outcome\": \"kept\"",
		"\"gain\": 0.6",
		"\"verdict_from\": \"seccomp\"",
		"\"ns_per_call\": 2500",
	};
	CHECK_HAS_ALL(json, apply_json);
	free(json);
	/* Not tried: the note says why. */
	struct cd_fix_outcome n = { .mode = "apply", .plan = &plan, .apply_note = "nothing switched: x",
	                            .exit_status = 1 };
	json = render(&n, true);
	static const char *const not_tried[] = {
		"\"outcome\": \"not-tried\"",
		"\"message\": \"nothing switched: x\"",
		"\"exit_status\": 1",
	};
	CHECK_HAS_ALL(json, not_tried);
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
