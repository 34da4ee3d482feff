/* SPDX-License-Identifier: MIT */
/*
 * fixreport.c: fix's plan and results (fixreport.h).
 *
 * The plan reads in the order an operator acts: what can be done now, what
 * lasts, what only the hypervisor's owner can do.  Every step shows the
 * command it runs or the file it writes, exactly, and the risk beside it.
 * File contents and commands are never wrapped, so they can be copied.
 */
#include "output/fixreport.h"
#include "output/jsonw.h"
#include "output/output.h"
#include "output/wrap.h"
#include "util/shellquote.h"

#include <string.h>

/* A step line: file contents (4 spaces) as they are, commands ("$ ") too
 * (cd_wrap_with keeps them whole); prose wrapped at blanks only, so that a
 * path longer than the line stays whole to be copied. */
static void step_line(FILE *out, const char *line, int indent)
{
	if (strncmp(line, "    ", 4) == 0)
		fprintf(out, "%*s%s\n", indent, "", line);
	else
		cd_wrap_with(out, line, &(struct cd_wrap_opts){ .indent = indent, .whole_words = true });
}

static void steps_text(FILE *out, const struct cd_steps *s, int indent)
{
	for (int i = 0; s && i < s->n; i++)
		step_line(out, s->line[i], indent);
}

static void labelled(FILE *out, const char *label, const char *text)
{
	if (!text || !text[0])
		return;
	fprintf(out, "  %s:\n", label);
	cd_wrap(out, text, 4, CD_TEXT_WIDTH);
}

static void plan_text(FILE *out, const struct cd_fix_outcome *o)
{
	const struct cd_plan *p = o->plan;
	char line[600];
	fprintf(out, "\nnow (fix --apply):\n");
	if (p->have_switch) {
		snprintf(line, sizeof line, "switch from %s to %s (advised by %s), measuring a time call "
		         "before and after; switch back unless it got cheaper",
		         p->switch_from, p->switch_to, p->switch_finding);
		cd_wrap(out, line, 2, CD_TEXT_WIDTH);
		char word[sizeof p->switch_to * 4 + 3];
		if (cd_shell_word(word, sizeof word, p->switch_to))
			fprintf(out, "  $ echo %s > /sys/devices/system/clocksource/clocksource0/current_clocksource\n",
			        word);
		labelled(out, "risk", p->switch_risk);
	} else {
		snprintf(line, sizeof line, "nothing to switch: %s", p->no_switch_why);
		cd_wrap(out, line, 2, CD_TEXT_WIDTH);
	}

	fprintf(out, "\nfor good (fix --persist):\n");
	if (p->n_params == 0)
		cd_wrap(out, "no kernel command line change is advised", 2, CD_TEXT_WIDTH);
	for (int i = 0; i < p->n_params; i++) {
		snprintf(line, sizeof line, "%s %s %s the kernel command line (advised by %s)",
		         p->params[i].add ? "add" : "remove", p->params[i].token, p->params[i].add ? "to" : "from",
		         p->params[i].from);
		cd_wrap(out, line, 2, CD_TEXT_WIDTH);
	}
	if (o->persist_unsupported) {
		cd_wrap(out, o->persist_unsupported, 2, CD_TEXT_WIDTH);
		labelled(out, "by hand", o->persist_manual);
	}
	steps_text(out, o->persist_plan, 2);
	for (int i = 0; i < p->n_params; i++) {
		if (!p->params[i].risk[0])
			continue;
		bool same = false;
		for (int j = 0; j < i; j++)
			same |= strcmp(p->params[j].risk, p->params[i].risk) == 0;
		if (!same) {
			snprintf(line, sizeof line, "risk of %s", p->params[i].token);
			labelled(out, line, p->params[i].risk);
		}
	}

	for (int i = 0; i < p->n_hv; i++) {
		snprintf(line, sizeof line, "only the hypervisor's owner can do (advised by %s):", p->hv_from[i]);
		fputc('\n', out);
		cd_wrap_with(out, line, &(struct cd_wrap_opts){ .whole_words = true });
		cd_wrap(out, p->hv[i], 2, CD_TEXT_WIDTH);
	}
	if (p->n_other) {
		char list[300] = "";
		for (int i = 0; i < p->n_other; i++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", p->other[i]);
		snprintf(line, sizeof line, "fix does not carry out the advice of %s: see clockdoctor check", list);
		fputc('\n', out);
		cd_wrap(out, line, 0, CD_TEXT_WIDTH);
	}
	if (p->n_notes) {
		fprintf(out, "\nleft out of the plan:\n");
		for (int i = 0; i < p->n_notes; i++)
			cd_wrap(out, p->notes[i], 2, CD_TEXT_WIDTH);
	}
}

void cd_fix_output_text(FILE *out, const struct cd_fix_outcome *o)
{
	char line[900];
	if (o->plan) {
		const char *st = cd_status_name(o->plan->status);
		snprintf(line, sizeof line, "%s: %s%s: %s", o->dry_run ? "PLAN (dry run, nothing changed)" : "FIX",
		         "check says ", st, o->plan->summary);
		cd_wrap(out, line, 0, CD_TEXT_WIDTH);
		if (o->plan->nothing_to_do && !o->plan->serious)
			cd_wrap(out, "nothing to fix: check finds no problem that fix can act on", 0, CD_TEXT_WIDTH);
	}
	if (o->plan && (o->dry_run || !o->apply || strcmp(o->mode, "plan") == 0))
		plan_text(out, o);
	if (o->tsc_verdict) {
		snprintf(line, sizeof line, "the TSC, measured before switching to it: %s (%s)", o->tsc_verdict,
		         o->tsc_summary ? o->tsc_summary : "");
		fputc('\n', out);
		cd_wrap(out, line, 0, CD_TEXT_WIDTH);
	}
	if (o->apply_note) {
		fprintf(out, "\napply:\n");
		cd_wrap(out, o->apply_note, 2, CD_TEXT_WIDTH);
	}
	if (o->apply) {
		const struct cd_apply_result *a = o->apply;
		fprintf(out, "\napply: %s\n", cd_apply_outcome_name(a->outcome));
		cd_wrap(out, a->msg, 2, CD_TEXT_WIDTH);
		if (a->before.measured)
			fprintf(out, "  before, on %s: CLOCK_MONOTONIC %.1f ns a call (%s)\n", a->from, a->before.ns,
			        a->before.syscall ? "a system call" : "served by the vDSO");
		if (a->after.measured)
			fprintf(out, "  after, on %s: CLOCK_MONOTONIC %.1f ns a call (%s)\n",
			        a->seen[0] ? a->seen : a->to, a->after.ns,
			        a->after.syscall ? "a system call" : "served by the vDSO");
		fprintf(out, "  clocksource now: %s\n", a->now[0] ? a->now : "unknown");
	}
	if (o->persist) {
		fprintf(out, "\npersist: %s\n", o->persist_result ? o->persist_result : "");
		steps_text(out, o->persist, 2);
	}
	if (o->undo) {
		fprintf(out, "%sundo: %s\n", o->plan ? "\n" : "", o->undo_result ? o->undo_result : "");
		steps_text(out, o->undo, 2);
	}
	bool persist_left = o->plan && o->plan->n_params && !o->persist_in_place;
	if (o->dry_run && o->plan && !o->plan->nothing_to_do && (o->plan->have_switch || persist_left))
		fprintf(out, "\nto carry it out, as root: clockdoctor fix%s%s\n", o->plan->have_switch ? " --apply" : "",
		        persist_left ? " --persist" : "");
}

/* ---- JSON ---- */

static void steps_json(struct cd_jsonw *w, const char *key, const struct cd_steps *s)
{
	cd_jsonw_begin_array(w, key);
	for (int i = 0; s && i < s->n; i++)
		cd_jsonw_string(w, NULL, s->line[i]);
	cd_jsonw_end_array(w);
}

static void list_json(struct cd_jsonw *w, const char *key, const char *comma_list)
{
	char buf[CD_PLAN_FROM_MAX];
	snprintf(buf, sizeof buf, "%s", comma_list);
	cd_jsonw_begin_array(w, key);
	for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
		cd_jsonw_string(w, NULL, t);
	cd_jsonw_end_array(w);
}

static void cost_json(struct cd_jsonw *w, const char *key, const struct cd_apply_cost *c)
{
	if (!c->measured) {
		cd_jsonw_null(w, key);
		return;
	}
	cd_jsonw_begin_object(w, key);
	cd_jsonw_number(w, "ns_per_call", c->ns);
	cd_jsonw_number(w, "syscall_ns", c->syscall_ns);
	cd_jsonw_bool(w, "syscall", c->syscall);
	cd_jsonw_string(w, "verdict_from", c->exact ? "seccomp" : "timing");
	cd_jsonw_end_object(w);
}

static void plan_json(struct cd_jsonw *w, const struct cd_fix_outcome *o)
{
	const struct cd_plan *p = o->plan;
	cd_jsonw_begin_object(w, "plan");
	if (p->have_switch) {
		cd_jsonw_begin_object(w, "switch");
		cd_jsonw_string(w, "from", p->switch_from);
		cd_jsonw_string(w, "to", p->switch_to);
		cd_jsonw_string(w, "finding", p->switch_finding);
		cd_jsonw_string(w, "risk", p->switch_risk);
		cd_jsonw_end_object(w);
		cd_jsonw_null(w, "no_switch_why");
	} else {
		cd_jsonw_null(w, "switch");
		cd_jsonw_string(w, "no_switch_why", p->no_switch_why);
	}
	cd_jsonw_begin_array(w, "params");
	for (int i = 0; i < p->n_params; i++) {
		cd_jsonw_begin_object(w, NULL);
		cd_jsonw_string(w, "token", p->params[i].token);
		cd_jsonw_string(w, "action", p->params[i].add ? "add" : "remove");
		list_json(w, "findings", p->params[i].from);
		cd_jsonw_string(w, "risk", p->params[i].risk[0] ? p->params[i].risk : NULL);
		cd_jsonw_end_object(w);
	}
	cd_jsonw_end_array(w);
	if (o->persist_plan)
		steps_json(w, "persist_steps", o->persist_plan);
	else
		cd_jsonw_null(w, "persist_steps");
	cd_jsonw_bool(w, "persist_in_place", o->persist_in_place);
	cd_jsonw_string(w, "persist_unsupported", o->persist_unsupported);
	cd_jsonw_begin_array(w, "hypervisor");
	for (int i = 0; i < p->n_hv; i++) {
		cd_jsonw_begin_object(w, NULL);
		cd_jsonw_string(w, "text", p->hv[i]);
		list_json(w, "findings", p->hv_from[i]);
		cd_jsonw_end_object(w);
	}
	cd_jsonw_end_array(w);
	cd_jsonw_begin_array(w, "other_findings");
	for (int i = 0; i < p->n_other; i++)
		cd_jsonw_string(w, NULL, p->other[i]);
	cd_jsonw_end_array(w);
	cd_jsonw_begin_array(w, "left_out");
	for (int i = 0; i < p->n_notes; i++)
		cd_jsonw_string(w, NULL, p->notes[i]);
	cd_jsonw_end_array(w);
	cd_jsonw_bool(w, "nothing_to_do", p->nothing_to_do);
	cd_jsonw_end_object(w);
}

void cd_fix_output_json(FILE *out, const struct cd_fix_outcome *o)
{
	struct cd_jsonw w;
	cd_jsonw_open(&w, out, 2, "fix", o->exit_status);
	cd_jsonw_string(&w, "mode", o->mode);
	cd_jsonw_bool(&w, "dry_run", o->dry_run);
	if (o->plan) {
		cd_jsonw_string(&w, "status", cd_status_name(o->plan->status));
		cd_jsonw_string(&w, "verdict", o->plan->summary);
		plan_json(&w, o);
	}
	if (o->apply || o->apply_note) {
		cd_jsonw_begin_object(&w, "apply");
		const struct cd_apply_result *a = o->apply;
		cd_jsonw_string(&w, "outcome", a ? cd_apply_outcome_name(a->outcome) : "not-tried");
		cd_jsonw_string(&w, "from", a ? a->from : NULL);
		cd_jsonw_string(&w, "to", a ? a->to : NULL);
		cd_jsonw_string(&w, "seen", a && a->seen[0] ? a->seen : NULL);
		cd_jsonw_string(&w, "now", a && a->now[0] ? a->now : NULL);
		if (a) {
			cost_json(&w, "before", &a->before);
			cost_json(&w, "after", &a->after);
		}
		if (a && a->before.measured && a->after.measured)
			cd_jsonw_number(&w, "gain", a->gain);
		else
			cd_jsonw_null(&w, "gain");
		cd_jsonw_string(&w, "tsc_verdict", o->tsc_verdict);
		cd_jsonw_string(&w, "message", a ? a->msg : o->apply_note);
		cd_jsonw_end_object(&w);
	}
	if (o->persist) {
		cd_jsonw_begin_object(&w, "persist");
		cd_jsonw_string(&w, "result", o->persist_result);
		steps_json(&w, "steps", o->persist);
		cd_jsonw_end_object(&w);
	}
	if (o->undo) {
		cd_jsonw_begin_object(&w, "undo");
		cd_jsonw_string(&w, "result", o->undo_result);
		steps_json(&w, "steps", o->undo);
		cd_jsonw_end_object(&w);
	}
	cd_jsonw_end_object(&w);
}
