/* SPDX-License-Identifier: MIT */
/*
 * finding.c: building a finding (rules.h): its title, its evidence (a
 * formatted line, a kernel log event as the kernel printed it, what was
 * measured), and its fixes as the texts fixes.c writes together with the
 * actions `clockdoctor fix` carries out.
 */
#include "diagnose/fixes.h"
#include "diagnose/rules.h"
#include "util/lines.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct cd_finding *cd_add_finding(struct cd_ctx *c, const char *code, enum cd_severity sev, const char *fmt, ...)
{
	static struct cd_finding overflow;
	if (c->r->n >= CD_MAX_FINDINGS) {
		memset(&overflow, 0, sizeof overflow);
		return &overflow;
	}
	struct cd_finding *x = &c->r->f[c->r->n++];
	memset(x, 0, sizeof *x);
	x->code = code;
	x->severity = sev;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->title, sizeof x->title, fmt, ap);
	va_end(ap);
	return x;
}

void cd_evidence(struct cd_finding *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	CD_LINES_VADD(x->evidence, x->n_evidence, fmt, ap);
	va_end(ap);
}

/* A log line as evidence: "kernel log [3007.005852]: msg". */
void cd_evidence_event(struct cd_finding *x, const struct cd_event *e)
{
	if (e->ts >= 0)
		cd_evidence(x, "kernel log [%.6f]: %s", e->ts, e->line);
	else
		cd_evidence(x, "kernel log: %s", e->line);
	/* The kernel's own numbers, as printed, beside whatever is derived
	 * from them: a user can search for these. */
	for (const char *d = e->detail; *d;) {
		int n = (int)strcspn(d, "\n");
		cd_evidence(x, "kernel log: %.*s", n, d);
		d += n + (d[n] == '\n');
	}
}

/* What was measured, each clock id on a line; only_fallback: only the
 * high-resolution ids that were system calls. */
void cd_measured_evidence(const struct cd_ctx *c, struct cd_finding *x, bool only_fallback)
{
	if (!c->m || !c->m->done)
		return;
	for (int i = 0; i < c->m->n; i++) {
		const struct cd_clock_cost *k = &c->m->c[i];
		if (!k->measured || (only_fallback && !(k->spec->high_res && k->syscall)))
			continue;
		char share[32] = "", exact[64] = "";
		if (k->sys_share >= 0)
			snprintf(share, sizeof share, ", %.0f%% system time", k->sys_share * 100);
		if (k->exact)
			snprintf(exact, sizeof exact, "; %d of %d probe calls reached the kernel", k->kernel_calls,
			         CD_KERNEL_PATH_CALLS);
		cd_evidence(x, "measured %s: %.0f ns a call, forced system call %.0f ns (ratio %.2f%s)%s",
		            k->spec->name, k->ns_per_call, k->syscall_ns, k->ratio, share, exact);
	}
}

/* Each action is set once, by the first fix that names it: a finding's
 * texts may mention a second choice, but `fix` carries out the first. */
void cd_act_switch_now(struct cd_finding *x, const char *clocksource)
{
	cd_fix_switch_now(x->fix_now, sizeof x->fix_now, clocksource);
	if (!x->act_switch[0])
		snprintf(x->act_switch, sizeof x->act_switch, "%s", clocksource);
}

void cd_act_add_params(struct cd_finding *x, const struct cd_facts *f, const char *params)
{
	/* Trusting the TSC is advised only as the evidence allows: through
	 * cd_advise_trust_tsc (tscgate.c), never here. */
	if (cd_param_trusts_tsc(params))
		return;
	cd_fix_add_kernel_params(x->fix_lasting, sizeof x->fix_lasting, f, params);
	if (!x->act_add[0] && !x->act_remove[0])
		snprintf(x->act_add, sizeof x->act_add, "%s", params);
}

void cd_act_remove_param(struct cd_finding *x, const struct cd_facts *f, const char *param)
{
	cd_fix_remove_kernel_param(x->fix_lasting, sizeof x->fix_lasting, f, param);
	if (!x->act_add[0] && !x->act_remove[0])
		snprintf(x->act_remove, sizeof x->act_remove, "%s", param);
}

/* clocksource=NAME, for good. */
void cd_act_add_clocksource_param(struct cd_finding *x, const struct cd_facts *f, const char *clocksource)
{
	char p[CD_NAME_MAX + 16];
	snprintf(p, sizeof p, "clocksource=%s", clocksource);
	cd_act_add_params(x, f, p);
}

/* The command line's clocksource= as it is written there, so that it is
 * removed by name. */
void cd_act_remove_clocksource_param(struct cd_finding *x, const struct cd_facts *f)
{
	char p[CD_NAME_MAX + 16];
	if (f->kernel.cmd_clocksource_word[0]) {   /* "clock=pmtmr" is removed as it is written */
		cd_act_remove_param(x, f, f->kernel.cmd_clocksource_word);
		return;
	}
	snprintf(p, sizeof p, "clocksource=%s", f->kernel.cmd_clocksource);
	cd_act_remove_param(x, f, p);
}
