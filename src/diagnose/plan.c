/* SPDX-License-Identifier: MIT */
/*
 * plan.c: `clockdoctor fix`'s plan from check's findings (plan.h).
 *
 * The report is sorted by severity, so walking it in order takes each
 * action from the most severe finding that advises it; later findings that
 * advise the same action are only named in its "from" list.
 */
#include "diagnose/plan.h"
#include "diagnose/fixes.h"
#include "probe/probe.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

bool cd_plan_token_safe(const char *token)
{
	size_t n = strlen(token);
	if (n == 0 || n >= CD_NAME_MAX * 2 || strstr(token, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)token[i]) && !strchr("_-.,:=", token[i]))
			return false;
	return true;
}

static void note(struct cd_plan *p, const char *fmt, const char *a, const char *b)
{
	if (p->n_notes < CD_PLAN_MAX_NOTES)
		snprintf(p->notes[p->n_notes++], sizeof p->notes[0], fmt, a, b);
}

static void add_from(char *from, const char *code)
{
	if (!strstr(from, code))
		cd_appendf(from, CD_PLAN_FROM_MAX, "%s%s", from[0] ? ", " : "", code);
}

/* The parameter's name: "tsc" of "tsc=reliable". */
static size_t key_len(const char *token)
{
	return strcspn(token, "=");
}

static bool same_key(const char *a, const char *b)
{
	size_t n = key_len(a);
	return n == key_len(b) && strncmp(a, b, n) == 0;
}

/* A parameter that brings the TSC back (or keeps it): with it, pinning the
 * kernel to another clocksource would undo its point. */
static bool keeps_tsc(const char *token)
{
	return strstr(token, "tsc=reliable") || strstr(token, "tsc=nowatchdog") ||
	       strstr(token, "clocksource=tsc");
}

static bool pins_non_tsc(const char *token)
{
	return strncmp(token, "clocksource=", 12) == 0 && strcmp(token + 12, "tsc") != 0;
}

static void plan_param(struct cd_plan *p, const struct cd_finding *x, const char *token, bool add)
{
	if (!cd_plan_token_safe(token)) {
		note(p, "%s (from %s): not a parameter fix will write", token, x->code);
		return;
	}
	for (int i = 0; i < p->n_params; i++) {
		struct cd_plan_param *q = &p->params[i];
		if (strcmp(q->token, token) == 0 && q->add == add) {
			add_from(q->from, x->code);
			return;
		}
		if (same_key(q->token, token)) {
			note(p, "%s: left out, the plan already changes %s", token, q->token);
			return;
		}
		if (add && q->add && ((keeps_tsc(q->token) && pins_non_tsc(token)) ||
		                      (pins_non_tsc(q->token) && keeps_tsc(token)))) {
			note(p, "%s: left out, it would pin the kernel away from what %s does", token, q->token);
			return;
		}
	}
	if (p->n_params >= CD_PLAN_MAX_PARAMS) {
		note(p, "%s (from %s): left out, too many parameters", token, x->code);
		return;
	}
	struct cd_plan_param *q = &p->params[p->n_params++];
	memset(q, 0, sizeof *q);
	snprintf(q->token, sizeof q->token, "%s", token);
	q->add = add;
	add_from(q->from, x->code);
	snprintf(q->risk, sizeof q->risk, "%s", x->risk);
}

/* The switch: listed, not the current one, and faster by rank. */
static void plan_switch(struct cd_plan *p, const struct cd_facts *f, const struct cd_finding *x)
{
	const char *to = x->act_switch;
	if (p->have_switch) {
		if (strcmp(p->switch_to, to) != 0)
			note(p, "switch to %s: left out, the plan switches to %s", to, p->switch_to);
		return;
	}
	if (!f->cs.have_current || !cd_clocksource_available(&f->cs, to) || strcmp(f->cs.current, to) == 0) {
		note(p, "switch to %s (from %s): not listed as available, or already current", to, x->code);
		return;
	}
	struct cd_cs_state cur, tgt;
	cd_clocksource_state(f->cs.current, f, &cur);
	cd_clocksource_state(to, f, &tgt);
	if (tgt.rank <= 0 || (cur.rank > 0 && tgt.rank >= cur.rank)) {
		note(p, "switch to %s (from %s): not faster than the current clocksource", to, x->code);
		return;
	}
	p->have_switch = true;
	snprintf(p->switch_from, sizeof p->switch_from, "%s", f->cs.current);
	snprintf(p->switch_to, sizeof p->switch_to, "%s", to);
	snprintf(p->switch_finding, sizeof p->switch_finding, "%s", x->code);
	if (x->risk[0])
		snprintf(p->switch_risk, sizeof p->switch_risk, "%s", x->risk);
	else
		snprintf(p->switch_risk, sizeof p->switch_risk,
		         "Little: the kernel lists %s as usable and keeps checking it; the switch lasts "
		         "until the next reboot.", to);
}

static void plan_hypervisor(struct cd_plan *p, const struct cd_finding *x)
{
	for (int i = 0; i < p->n_hv; i++)
		if (strcmp(p->hv[i], x->fix_hypervisor) == 0) {
			add_from(p->hv_from[i], x->code);
			return;
		}
	if (p->n_hv >= CD_PLAN_MAX_HV)
		return;
	snprintf(p->hv[p->n_hv], sizeof p->hv[0], "%s", x->fix_hypervisor);
	p->hv_from[p->n_hv][0] = '\0';
	add_from(p->hv_from[p->n_hv], x->code);
	p->n_hv++;
}

/* Why nothing can be switched now, when the clocksource is slow. */
static void why_no_switch(struct cd_plan *p, const struct cd_facts *f)
{
	if (!f->cs.have_current) {
		snprintf(p->no_switch_why, sizeof p->no_switch_why,
		         "the current clocksource cannot be read here");
		return;
	}
	struct cd_cs_state cur;
	cd_clocksource_state(f->cs.current, f, &cur);
	if (cur.vdso == CD_VDSO_YES) {
		snprintf(p->no_switch_why, sizeof p->no_switch_why,
		         "the clocksource %s is read by the vDSO already", f->cs.current);
		return;
	}
	char list[200] = "";
	for (int i = 0; i < f->cs.n_available; i++)
		cd_appendf(list, sizeof list, "%s%s", i ? " " : "", f->cs.available[i]);
	snprintf(p->no_switch_why, sizeof p->no_switch_why,
	         "no faster clocksource than %s is listed (available: %s)", f->cs.current,
	         f->cs.have_available ? list : "unknown");
}

/* A parameter that waits for the TSC's measurement is said once. */
static bool after_tsc_noted(const struct cd_plan *p, const char *token)
{
	size_t n = strlen(token);
	for (int i = 0; i < p->n_notes; i++)
		if (strncmp(p->notes[i], token, n) == 0 && strncmp(p->notes[i] + n, " (from", 6) == 0)
			return true;
	return false;
}

void cd_plan_build(const struct cd_facts *f, const struct cd_report *r, struct cd_plan *p)
{
	memset(p, 0, sizeof *p);
	p->status = r->status;
	snprintf(p->summary, sizeof p->summary, "%s", r->summary);
	bool serious = false;
	for (int i = 0; i < r->n; i++) {
		const struct cd_finding *x = &r->f[i];
		bool acted = false;
		if (x->severity > CD_SEV_INFO)
			serious = true;
		if (x->act_switch[0]) {
			plan_switch(p, f, x);
			acted = true;
		}
		if (x->act_add[0] || x->act_remove[0]) {
			plan_param(p, x, x->act_add[0] ? x->act_add : x->act_remove, x->act_add[0] != 0);
			acted = true;
		}
		if (x->act_after_tsc[0] && !after_tsc_noted(p, x->act_after_tsc)) {
			note(p, "%s (from %s): not until the TSC is measured: run `clockdoctor tsc` as root on "
			     "the machine, and once it says sound on this boot, fix --persist writes it",
			     x->act_after_tsc, x->code);
		}
		if (x->act_after_tsc[0])
			acted = true;
		if (x->fix_hypervisor[0]) {
			plan_hypervisor(p, x);
			acted = true;
		}
		if (!acted && x->fix_now[0] && p->n_other < CD_PLAN_MAX_OTHER)
			p->other[p->n_other++] = x->code;
	}
	if (!p->have_switch)
		why_no_switch(p, f);
	p->serious = serious;
	p->nothing_to_do = !p->have_switch && p->n_params == 0;
}
