/* SPDX-License-Identifier: MIT */
/*
 * prometheus.c: the report as node_exporter textfile metrics.
 *
 * Names are prefixed clockdoctor_ and say only what node_exporter does not:
 * its time collector already exports the current and the available
 * clocksources (node_time_clocksource_current_info and _available_info,
 * labels clocksource and device) and its timex collector the NTP state
 * (node_timex_sync_status), so those are not repeated here.  What is added
 * is what this tool knows about them: whether the vDSO reads each
 * clocksource (clockdoctor_clocksource_vdso, joined to node_exporter's
 * series on the clocksource label), the verdict and its findings, and when
 * the check ran.  Label values are escaped as the exposition format
 * requires (backslash, double quote, newline).
 *
 * Names and types as Prometheus' naming guidelines and node_exporter have
 * them: a set of facts is an _info series valued 1 (a finding, as
 * node_time_clocksource_available_info); build_info carries version,
 * revision and compiler; no value stands for "unknown": such a sample is
 * left out.
 */
#include "output/output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void cd_prom_label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void head(FILE *out, const char *name, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* Whether the vDSO reads clocksource name, 0 or 1; nothing when that
 * depends on the host or is unknown. */
static void vdso_sample(FILE *out, const struct cd_facts *f, const char *name)
{
	struct cd_cs_state v;
	cd_clocksource_state(name, f, &v);
	int fast = fc_vdso_surely_fast(v.vdso);
	if (fast < 0)
		return;
	fputs("clockdoctor_clocksource_vdso{clocksource=\"", out);
	cd_prom_label(out, name);
	fprintf(out, "\"} %d\n", fast);
}

/* The source revision and the compiler, compiled in. */
#ifndef CD_REVISION
#define CD_REVISION "unknown"
#endif
#if defined(__clang__)
#define CD_COMPILER_NAME "clang " __clang_version__
#elif defined(__GNUC__)
#define CD_COMPILER_NAME "gcc " __VERSION__
#else
#define CD_COMPILER_NAME "unknown"
#endif

void cd_output_prometheus(FILE *out, const struct cd_facts *f, const struct cd_measurements *m,
                          const struct cd_report *r, const struct cd_prom_times *t)
{
	head(out, "clockdoctor_build_info", "The clockdoctor that wrote this file (always 1).");
	fputs("clockdoctor_build_info{version=\"", out);
	cd_prom_label(out, CD_VERSION);
	fputs("\",revision=\"", out);
	cd_prom_label(out, CD_REVISION);
	fputs("\",compiler=\"", out);
	cd_prom_label(out, CD_COMPILER_NAME);
	fputs("\"} 1\n", out);

	head(out, "clockdoctor_status", "Verdict of the last check: 0 ok, 1 warning, 2 critical, 3 unknown.");
	fprintf(out, "clockdoctor_status %d\n", (int)r->status);

	head(out, "clockdoctor_finding_info", "Each finding of the last check, by code and severity (always 1).");
	for (int i = 0; i < r->n; i++)
		fprintf(out, "clockdoctor_finding_info{code=\"%s\",severity=\"%s\"} 1\n", r->f[i].code,
		        cd_severity_name(r->f[i].severity));

	/* Every clocksource the kernel offers, and the current one should it
	 * not be listed: node_exporter says which is in use, at each scrape. */
	bool current_listed = false;
	for (int i = 0; i < f->cs.n_available; i++)
		current_listed |= f->cs.have_current && strcmp(f->cs.available[i], f->cs.current) == 0;
	if (f->cs.n_available > 0 || f->cs.have_current)
		head(out, "clockdoctor_clocksource_vdso",
		     "1 when the vDSO reads this clocksource on this kernel, 0 when every time call is a system "
		     "call on it; absent when that depends on the host or is unknown.");
	for (int i = 0; i < f->cs.n_available; i++)
		vdso_sample(out, f, f->cs.available[i]);
	if (f->cs.have_current && !current_listed)
		vdso_sample(out, f, f->cs.current);

	head(out, "clockdoctor_measured", "1 when the last check measured the clocks.");
	fprintf(out, "clockdoctor_measured %d\n", m && m->done ? 1 : 0);
	if (m && m->done) {
		head(out, "clockdoctor_clock_call_seconds", "Median cost of one call of each way of reading the time.");
		for (int i = 0; i < m->n; i++)
			if (m->c[i].measured)
				fprintf(out, "clockdoctor_clock_call_seconds{clock=\"%s\"} %.9g\n", m->c[i].spec->name,
				        m->c[i].ns_per_call / 1e9);
		head(out, "clockdoctor_clock_syscall", "1 when the call was measured going through the kernel.");
		for (int i = 0; i < m->n; i++)
			if (m->c[i].measured)
				fprintf(out, "clockdoctor_clock_syscall{clock=\"%s\"} %d\n", m->c[i].spec->name,
				        m->c[i].syscall ? 1 : 0);
	}

	head(out, "clockdoctor_check_last_run_timestamp_seconds", "When the check that wrote this file ran (Unix time).");
	fprintf(out, "clockdoctor_check_last_run_timestamp_seconds %.3f\n", t->last_run);
	head(out, "clockdoctor_check_last_success_timestamp_seconds",
	     "When a check last reached a verdict, status 0, 1 or 2 (Unix time; 0: never).");
	fprintf(out, "clockdoctor_check_last_success_timestamp_seconds %.3f\n", t->last_success);
}

double cd_prom_last_success(const char *text)
{
	static const char name[] = "clockdoctor_check_last_success_timestamp_seconds ";
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, name, sizeof name - 1) != 0)
			continue;
		char *end;
		double v = strtod(l + sizeof name - 1, &end);
		/* A time after 1970 and before the year 5000, and nothing after it. */
		if (end != l + sizeof name - 1 && (*end == '\n' || *end == '\0') && isfinite(v) && v >= 0 && v < 1e11)
			return v;
		return 0;
	}
	return 0;
}
