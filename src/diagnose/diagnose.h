/* SPDX-License-Identifier: MIT */
/*
 * diagnose.h: rules that turn facts and measurements into findings.
 *
 * A finding has a stable code (documented in docs/findings.md; scripts and
 * alerts key on it, so a code is never renamed), a severity, a one-line
 * title, the evidence it rests on, and a fix written for this platform and
 * this kernel.  Fix texts are lines separated by '\n'; a line that starts with
 * "$ " is a command to run as it is (the text writer never wraps it).
 */
#ifndef CD_DIAGNOSE_H
#define CD_DIAGNOSE_H

#include "clockfacts.h"
#include "measure/measure.h"
#include "probe/facts.h"

enum cd_severity {
	CD_SEV_INFO = 0,
	CD_SEV_WARNING = 1,
	CD_SEV_CRITICAL = 2,
};

/* The overall status, numbered as the Nagios plugin exit statuses. */
enum cd_status {
	CD_STATUS_OK = 0,
	CD_STATUS_WARNING = 1,
	CD_STATUS_CRITICAL = 2,
	CD_STATUS_UNKNOWN = 3,
};

#define CD_MAX_FINDINGS 24
#define CD_MAX_EVIDENCE 10
#define CD_EVIDENCE_MAX 300
#define CD_FIX_MAX 1400

struct cd_finding {
	const char *code;            /* static, e.g. "slow-clocksource" */
	enum cd_severity severity;
	char title[200];
	int n_evidence;
	char evidence[CD_MAX_EVIDENCE][CD_EVIDENCE_MAX];
	char fix_now[CD_FIX_MAX];        /* what to do now, as root, without a reboot */
	char fix_lasting[CD_FIX_MAX];    /* the lasting change (kernel command line, packages) */
	char fix_hypervisor[CD_FIX_MAX]; /* what only the hypervisor's owner can do */
	char risk[CD_FIX_MAX];           /* what the fix trades away */
	/* The same fixes as actions that `clockdoctor fix` can carry out, set
	 * with the texts above ("" when none): */
	char act_switch[CD_NAME_MAX];    /* switch to this clocksource now */
	char act_add[CD_NAME_MAX * 2];   /* kernel parameters to add for good ("tsc=reliable") */
	char act_remove[CD_NAME_MAX + 16]; /* a kernel parameter to remove for good ("clocksource=acpi_pm") */
	/* A parameter that trusts the TSC, advised only once `clockdoctor tsc`
	 * measures it sound (diagnose/tscgate.c): fix does not write it. */
	char act_after_tsc[CD_NAME_MAX * 2];
};

struct cd_report {
	enum cd_status status;
	bool measured;
	char summary[200];           /* one line for people: the first line of the text output
	                              * (JSON's "verdict", an interface) */
	int n;
	struct cd_finding f[CD_MAX_FINDINGS];
};

/* Diagnose.  m is NULL when nothing was measured (a snapshot). */
void cd_diagnose(const struct cd_facts *facts, const struct cd_measurements *m, struct cd_report *r);

struct cd_tsc_report; /* measure/tsc.h */
/* The same, with the TSC measured and judged (`check --deep`): an unsound
 * TSC becomes the finding tsc-unsound.  tsc NULL is cd_diagnose(). */
void cd_diagnose_deep(const struct cd_facts *facts, const struct cd_measurements *m,
                      const struct cd_tsc_report *tsc, struct cd_report *r);

const char *cd_severity_name(enum cd_severity s);
const char *cd_status_name(enum cd_status s);
const struct cd_finding *cd_report_find(const struct cd_report *r, const char *code);

/* ---- clocksources.c: what the kernel can do with each clocksource ---- */

/* What the vDSO does with a clocksource: the library's states
 * (lib/clockfacts.h), under the command's names. */
#define CD_VDSO_UNKNOWN FC_VDSO_UNKNOWN  /* a clocksource this tool does not know */
#define CD_VDSO_YES     FC_VDSO_YES      /* the vDSO reads it without a system call */
#define CD_VDSO_NO      FC_VDSO_NO       /* every high-resolution time call is a system call */
#define CD_VDSO_DEPENDS FC_VDSO_DEPENDS  /* depends on the host (kvm-clock, xen): measure */
#define CD_VDSO_SLOW    FC_VDSO_SLOW     /* the vDSO reads it, but the read is a slow device access (old hpet) */

/* How calls go on one clocksource on this kernel: the table's state
 * (lib/clockfacts.h) and the reason in words. */
struct cd_cs_state {
	enum fc_vdso vdso;
	int rank;             /* 1 fastest (vDSO), 2 hpet-class, 3 acpi_pm-class, 4 tick-based; 0 unknown */
	const char *typical;  /* typical cost of one call, for people: "15-60 ns" */
	char why[CD_EVIDENCE_MAX]; /* the reason, naming the kernel version rule */
};

/* A 32-bit x86 kernel: from uname (/proc/sys/kernel/arch in a snapshot), the
 * release string ("-686-pae", ".i686"), or a line only such a kernel logs. */
bool cd_kernel_32bit(const struct cd_facts *f);
/* An x86 kernel whose vDSO serves no clock_gettime or gettimeofday at all:
 * a 32-bit one before 3.15.  Every time call is then a system call. */
bool cd_kernel_no_vdso_time(const struct cd_facts *f);

/* The kernel log's workaround of an arm64 timer erratum that replaces the
 * counter read (and so takes away the vDSO's), or NULL. */
const struct cd_event *cd_arch_timer_vdso_erratum(const struct cd_facts *f);

/* What this kernel's vDSO does with the named clocksource. */
void cd_clocksource_state(const char *name, const struct cd_facts *f, struct cd_cs_state *v);

#endif
