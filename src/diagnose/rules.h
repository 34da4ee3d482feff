/* SPDX-License-Identifier: MIT */
/*
 * rules.h: what the files of the diagnosis share (internal to diagnose/).
 *
 * A context is derived once from the facts and measurements (context.c:
 * what the kernel log says about the TSC, which clocksource would be
 * better, what was measured); each rule reads it and adds at most one
 * finding (finding.c builds them).  rules.c holds the rules about the
 * clocksource and the measurements, rules_tsc.c those about the TSC itself,
 * lastingfix.c the fixes several rules share, report.c their order and the
 * report.
 */
#ifndef CD_RULES_H
#define CD_RULES_H

#include "diagnose/diagnose.h"
#include "measure/tsc.h"
#include "util/table.h"

#define CS_PATH "/sys/devices/system/clocksource/clocksource0/"

/* Whether a finding may advise a kernel parameter that switches the
 * kernel's checks of the TSC off (tsc=reliable, tsc=nowatchdog) or
 * overrides its choice of clocksource for the TSC (clocksource=tsc):
 * tscgate.c decides, for every finding. */
enum cd_tsc_gate {
	CD_GATE_MEASURE_FIRST = 0, /* no evidence either way: measure, then the conditional step */
	CD_GATE_MEASURED_SOUND,    /* clockdoctor tsc measured it sound on this boot */
	CD_GATE_PLATFORM,          /* the platform documents a reliable TSC */
	CD_GATE_BAD,               /* the evidence says the TSC is bad: never */
};

struct cd_ctx {
	const struct cd_facts *f;
	const struct cd_measurements *m;  /* NULL: not measured */
	const struct cd_tsc_report *tsc;  /* check --deep; NULL: not measured */
	struct cd_report *r;

	bool cur_known;
	struct cd_cs_state cur;
	const char *best;                 /* fastest listed clocksource, NULL if none */
	struct cd_cs_state best_v;

	const struct cd_event *warp;      /* "Measured N cycles TSC warp" */
	const struct cd_event *sync_header; /* "TSC synchronization [CPU#a -> CPU#b]:" */
	const struct cd_event *unstable;  /* the first "Marking TSC unstable due to" */
	bool rejected_sync, rejected_watchdog, rejected_other;
	const struct cd_event *wd_skew, *wd_delta, *wd_readback;
	double tsc_mhz;                   /* from the log or the hypervisor leaf; 0 unknown */

	int n_fallback;                   /* core ids measured as system calls (see core_clock) */
	int n_coarse_fallback;            /* coarse ids or time() measured as system calls: no vDSO */
	const struct cd_clock_cost *mono; /* CLOCK_MONOTONIC's measurement */
	bool advised_tsc;                 /* some finding advises trusting the TSC */
	bool bit32;                       /* a 32-bit x86 kernel */
	bool no_vdso_time;                /* an x86 kernel whose vDSO has no clock_gettime (32-bit, < 3.15) */

	/* Evidence that the TSCs really disagree, or really stop or change rate:
	 * then no finding proposes tsc=reliable, tsc=nowatchdog or
	 * clocksource=tsc, and the risk says in numbers what they would do. */
	bool tsc_unsafe;
	char unsafe_why[CD_EVIDENCE_MAX]; /* the evidence, for people */
	char unsafe_risk[CD_EVIDENCE_MAX];/* what forcing the TSC would do, in numbers */
	const char *unsafe_cure;          /* "firmware", "idle", "frequency" or "hypervisor" */

	/* No clocksource is known, but the log and the command line leave only
	 * the tick-based ones (jiffies, refined-jiffies, pit): see
	 * cd_rule_tick_based_left in rules.c. */
	bool tick_left;
	/* No current clocksource is known, but available_clocksource is, and
	 * every one it lists is one the vDSO cannot read: whichever is current,
	 * time calls are system calls.  only_slow names them ("hpet or
	 * acpi_pm"); "" when this is not the case. */
	char only_slow[64];

	/* What the evidence allows a finding to advise about the TSC
	 * (tscgate.c, set by cd_derive()): gate_basis says why, for people. */
	enum cd_tsc_gate gate;
	char gate_basis[CD_EVIDENCE_MAX];
};

/* ---- context.c ---- */

/* Fill the context from c->f, c->m and c->tsc. */
void cd_derive(struct cd_ctx *c);

/* Questions about the context. */
bool cd_reason_is_sync(const char *reason);
bool cd_current_is(const struct cd_ctx *c, const char *name);
bool cd_current_slow(const struct cd_ctx *c);
bool cd_better_listed(const struct cd_ctx *c);
bool cd_tsc_listed(const struct cd_ctx *c);
bool cd_paravirt_current(const struct cd_ctx *c);
/* Bare metal, as far as the evidence goes (CPUID, or cpuinfo on a kernel
 * that shows the hypervisor flag). */
bool cd_bare_metal(const struct cd_ctx *c);
const char *cd_tsc_params(const struct cd_ctx *c);
/* The clocksource's name for people: the current one, or what is left. */
const char *cd_cs_name(const struct cd_ctx *c);

/* ---- finding.c ---- */

struct cd_finding *cd_add_finding(struct cd_ctx *c, const char *code, enum cd_severity sev, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void cd_evidence(struct cd_finding *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cd_evidence_event(struct cd_finding *x, const struct cd_event *e);
void cd_measured_evidence(const struct cd_ctx *c, struct cd_finding *x, bool only_fallback);

/* A fix as text (fixes.c) and as the action `clockdoctor fix` carries out
 * (the finding's act_* fields): switch now, add parameters to the kernel
 * command line, remove one from it. */
void cd_act_switch_now(struct cd_finding *x, const char *clocksource);
void cd_act_add_params(struct cd_finding *x, const struct cd_facts *f, const char *params);
void cd_act_remove_param(struct cd_finding *x, const struct cd_facts *f, const char *param);
void cd_act_add_clocksource_param(struct cd_finding *x, const struct cd_facts *f, const char *clocksource);
void cd_act_remove_clocksource_param(struct cd_finding *x, const struct cd_facts *f);

/* ---- lastingfix.c: fix texts shared by several rules ---- */

void cd_tsc_risk(struct cd_ctx *c, struct cd_finding *x);
void cd_lasting_fix(struct cd_ctx *c, struct cd_finding *x);

/* ---- tscgate.c: the one place that advises trusting the TSC ---- */

/* Weigh the evidence (after the rest of cd_derive): the measured verdict,
 * the platform's guarantee, and the kinds of bad evidence context.c does
 * not already count (any measured warp, a watchdog skew no read-back delay
 * explains, a TSC that went backwards): those set tsc_unsafe too. */
void cd_gate_derive(struct cd_ctx *c);
/* A parameter that switches a TSC check off or forces the TSC
 * ("tsc=reliable", "tsc=nowatchdog", "clocksource=tsc", "nowatchdog"). */
bool cd_param_trusts_tsc(const char *params);
/* Advise params (one of those) as the lasting fix, as the evidence allows:
 * the parameter with its risk (measured sound, or the platform's
 * guarantee); the measurement first and the parameter only if it says
 * sound (no evidence); or, where the evidence says the TSC is bad, no
 * parameter but the cure, with the risk in numbers.  first, when not
 * NULL, is a step to take before (a newer kernel): the parameter is then
 * always conditional on measuring that kernel. */
void cd_advise_trust_tsc(struct cd_ctx *c, struct cd_finding *x, const char *params, const char *first);
/* The largest warp the kernel's boot-time test measured; NULL if none. */
const struct cd_event *cd_largest_warp(const struct cd_facts *f);
/* The cure when the evidence says the kernel was right to drop the TSC. */
void cd_unsafe_tsc_fix(struct cd_ctx *c, struct cd_finding *x);

/* ---- rules.c ---- */
void cd_rule_slow_clocksource(struct cd_ctx *c);
void cd_rule_tick_based_left(struct cd_ctx *c);
void cd_rule_only_slow_listed(struct cd_ctx *c);
void cd_rule_vdso_fallback(struct cd_ctx *c);
void cd_rule_kvmclock(struct cd_ctx *c);
void cd_rule_xen(struct cd_ctx *c);
void cd_rule_unverified_other(struct cd_ctx *c);
void cd_rule_clocksource_forced(struct cd_ctx *c);
void cd_rule_better_clocksource(struct cd_ctx *c);
void cd_rule_ntp(struct cd_ctx *c);

/* ---- hostfix.c: after every rule, the fixes for where the user stands ---- */
void cd_rule_where_the_fix_is(struct cd_ctx *c);
/* The cloud provider's advice for the hypervisor side (hostfix.c's table,
 * by DMI), or NULL when the DMI names no cloud the table knows. */
const char *cd_cloud_advice(const struct cd_facts *f);

/* ---- rules_tsc.c ---- */
void cd_rule_tsc_unstable_sync(struct cd_ctx *c);
void cd_rule_tsc_unstable_watchdog(struct cd_ctx *c);
void cd_rule_tsc_not_invariant(struct cd_ctx *c);
void cd_rule_tsc_reliable(struct cd_ctx *c);
void cd_rule_needs_newer_kernel(struct cd_ctx *c);
void cd_rule_tsc_adjust(struct cd_ctx *c);
void cd_rule_tsc_unsound(struct cd_ctx *c);

#endif
