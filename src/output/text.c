/* SPDX-License-Identifier: MIT */
/*
 * text.c: the report for people.
 *
 * The summary line comes first, because on a bad day it is all anyone
 * reads; then what the machine is, what was measured, and the findings, each
 * with its evidence and its fix.  Prose is wrapped to 80 columns; commands
 * are never wrapped, so that they can be copied as they are.
 */
#include "output/output.h"
#include "output/wrap.h"
#include "probe/probe.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool cd_term_escapes(int fd)
{
	const char *term = getenv("TERM");
	return isatty(fd) && term && *term && strcmp(term, "dumb") != 0;
}

bool cd_color_auto(int fd)
{
	const char *no = getenv("NO_COLOR");
	return cd_term_escapes(fd) && !(no && *no);
}

static const char *sev_color(enum cd_severity s)
{
	switch (s) {
	case CD_SEV_CRITICAL: return "\033[1;31m";
	case CD_SEV_WARNING: return "\033[1;33m";
	default: return "\033[1;36m";
	}
}

static const char *status_color(enum cd_status s)
{
	switch (s) {
	case CD_STATUS_OK: return "\033[1;32m";
	case CD_STATUS_WARNING: return "\033[1;33m";
	case CD_STATUS_CRITICAL: return "\033[1;31m";
	default: return "\033[1;35m";
	}
}

static void facts_block(FILE *out, const struct cd_facts *f)
{
	char line[600];
	const char *hv = f->hv.display[0] ? f->hv.display : cd_hv_display(f->hv.kind);
	snprintf(line, sizeof line, "machine: %s%s, %d CPU%s%s%s%s, kernel %s", hv,
	         f->hv.kind == CD_HV_NONE || f->hv.kind == CD_HV_UNKNOWN ? "" : " guest",
	         f->cpu.count, f->cpu.count == 1 ? "" : "s", f->cpu.vendor[0] ? " (" : "", f->cpu.vendor,
	         f->cpu.vendor[0] ? ")" : "", f->kernel.have_release ? f->kernel.release : "unknown");
	if (!f->cpu.have_cpuinfo)
		snprintf(line, sizeof line, "machine: %s, CPUs unknown, kernel %s", hv,
		         f->kernel.have_release ? f->kernel.release : "unknown");
	if (f->hv.container[0]) {
		size_t l = strlen(line);
		snprintf(line + l, sizeof line - l, " (inside a container: %s)", f->hv.container);
	}
	cd_wrap(out, line, 2, CD_TEXT_WIDTH);
	char avail[400] = "";
	for (int i = 0; i < f->cs.n_available; i++) {
		size_t l = strlen(avail);
		snprintf(avail + l, sizeof avail - l, "%s%s", i ? " " : "", f->cs.available[i]);
	}
	snprintf(line, sizeof line, "clocksource: %s (available: %s)", f->cs.have_current ? f->cs.current : "unknown",
	         f->cs.have_available ? avail : "unknown");
	cd_wrap(out, line, 2, CD_TEXT_WIDTH);
	if (f->klog.readable)
		snprintf(line, sizeof line, "kernel log: %s, %ld lines, %s%s%s", cd_klog_source_name(f->klog.source),
		         f->klog.lines, f->klog.reaches_boot ? "reaches back to boot" : "does not reach back to boot",
		         f->klog.why_not[0] ? "; " : "", f->klog.why_not);
	else
		snprintf(line, sizeof line, "kernel log: not read: %s",
		         f->klog.why_not[0] ? f->klog.why_not : "no source");
	cd_wrap(out, line, 2, CD_TEXT_WIDTH);
	if (f->ntp.have)
		cd_wrap(out, f->ntp.synchronized ? "ntp: the kernel clock is synchronized"
		                                 : "ntp: the kernel clock is not synchronized", 2, CD_TEXT_WIDTH);
}

static void measure_block(FILE *out, const struct cd_measurements *m)
{
	fprintf(out, "\n  %-24s %9s %11s %6s %6s  %s\n", "clock", "ns/call", "syscall ns", "ratio", "sys%", "path");
	for (int i = 0; i < m->n; i++) {
		const struct cd_clock_cost *c = &m->c[i];
		if (!c->measured) {
			fprintf(out, "  %-24s %9s %11s %6s %6s  %s\n", c->spec->name, "-", "-", "-", "-",
			        c->err ? "call failed" : "not measured");
			continue;
		}
		char share[16] = "-";
		if (c->sys_share >= 0)
			snprintf(share, sizeof share, "%.0f", c->sys_share * 100);
		fprintf(out, "  %-24s %9.1f %11.1f %6.2f %6s  %s\n", c->spec->name, c->ns_per_call, c->syscall_ns,
		        c->ratio, share, c->syscall ? "kernel" : "vDSO");
	}
	bool exact = m->n > 0 && m->c[0].exact;
	fprintf(out, "  (ns: median of 9 batches; ratio: to the same call forced through\n"
	             "  syscall(2); path: %s)\n",
	        exact ? "seen by a seccomp filter, exact" : "judged from the ratio and sys%");
}

/* Several findings often share a fix (the hypervisor's side, above all):
 * people read it once, and are pointed back to it after that.  field is the
 * offset of the text within struct cd_finding. */
static void section(FILE *out, const struct cd_report *r, int k, size_t field, const char *label)
{
	const char *text = (const char *)&r->f[k] + field;
	if (!text[0])
		return;
	for (int j = 0; j < k; j++)
		if (strcmp((const char *)&r->f[j] + field, text) == 0) {
			fprintf(out, "  %s: as for %s above\n", label, r->f[j].code);
			return;
		}
	fprintf(out, "  %s:\n", label);
	cd_wrap(out, text, 4, CD_TEXT_WIDTH);
}

void cd_output_text(FILE *out, const struct cd_facts *f, const struct cd_measurements *m,
                    const struct cd_report *r, bool color)
{
	const char *st = cd_status_name(r->status);
	char up[16];
	size_t i;
	for (i = 0; st[i] && i < sizeof up - 1; i++)
		up[i] = (char)(st[i] >= 'a' && st[i] <= 'z' ? st[i] - 32 : st[i]);
	up[i] = '\0';
	char lead[48];
	snprintf(lead, sizeof lead, "%s%s%s: ", color ? status_color(r->status) : "", up, color ? "\033[0m" : "");
	int cols = (int)strlen(up) + 2;
	cd_wrap_with(out, r->summary, &(struct cd_wrap_opts){ .indent = cols, .lead = lead, .lead_cols = cols });
	facts_block(out, f);
	if (m && m->done)
		measure_block(out, m);
	else
		fprintf(out, "  measured: nothing (%s)\n", f->live ? "--no-measure" : "a snapshot is never measured");

	for (int k = 0; k < r->n; k++) {
		const struct cd_finding *x = &r->f[k];
		fprintf(out, "\n%s[%s]%s %s\n", color ? sev_color(x->severity) : "", cd_severity_name(x->severity),
		        color ? "\033[0m" : "", x->code);
		cd_wrap(out, x->title, 2, CD_TEXT_WIDTH);
		if (x->n_evidence) {
			fprintf(out, "  evidence:\n");
			for (int e = 0; e < x->n_evidence; e++)
				cd_wrap_with(out, x->evidence[e], &(struct cd_wrap_opts){ .indent = 6, .lead = "    - " });
		}
		section(out, r, k, offsetof(struct cd_finding, fix_now), "fix now");
		section(out, r, k, offsetof(struct cd_finding, fix_lasting), "lasting fix");
		section(out, r, k, offsetof(struct cd_finding, fix_hypervisor), "on the hypervisor");
		section(out, r, k, offsetof(struct cd_finding, risk), "risk");
	}
	if (r->n == 0)
		fprintf(out, "\nno findings\n");
	if (f->n_unknown) {
		fprintf(out, "\nnot known:\n");
		for (int k = 0; k < f->n_unknown; k++)
			cd_wrap_with(out, f->unknown[k], &(struct cd_wrap_opts){ .indent = 4, .lead = "  - " });
	}
}
